"""CSS colours as a browser computes them, for contrast checks: JupyterLab's
theme variables read from its own installed theme stylesheets, ``var()``
with fallbacks, ``#hex``, ``rgb()``/``rgba()``, a few names and
``color-mix(in srgb, ...)``; alpha composited over a background; WCAG 2
relative luminance and contrast ratio."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["RGBA", "Theme", "contrast", "over", "parse", "theme"]

RGBA = tuple[float, float, float, float]  # 0-255 channels, alpha 0-1

_NAMES = {
    "white": (255.0, 255.0, 255.0, 1.0),
    "black": (0.0, 0.0, 0.0, 1.0),
    "transparent": (0.0, 0.0, 0.0, 0.0),
}


class Theme:
    """One JupyterLab theme's custom properties (``--jp-*``, ``--md-*``)."""

    def __init__(self, name: str, variables: dict[str, str]) -> None:
        self.name = name
        self.variables = variables

    def resolve(self, value: str, depth: int = 0) -> str:
        """``value`` with every ``var(--x, fallback)`` replaced, as the browser does."""
        if depth > 20:
            raise ValueError(f"var() cycle in {value!r}")
        start = value.find("var(")
        if start < 0:
            return value.strip()
        end = _closing(value, start + 3)
        name, _, fallback = value[start + 4 : end].partition(",")
        name = name.strip()
        if name in self.variables:
            inner = self.resolve(self.variables[name], depth + 1)
        elif fallback:
            inner = self.resolve(fallback, depth + 1)
        else:
            raise KeyError(f"{self.name}: {name} is not defined and has no fallback")
        return self.resolve(value[:start] + inner + value[end + 1 :], depth + 1)

    def colour(self, value: str) -> RGBA:
        return parse(self.resolve(value))


def theme(name: str) -> Theme:
    """``light`` or ``dark``: read from the installed JupyterLab's stylesheet."""
    import jupyterlab

    css = (
        Path(jupyterlab.__file__).parent
        / "themes"
        / "@jupyterlab"
        / f"theme-{name}-extension"
        / "index.css"
    ).read_text()
    variables: dict[str, str] = {}
    for match in re.finditer(r"(--[\w-]+)\s*:\s*([^;{}]+)", css):
        variables.setdefault(match.group(1), match.group(2).strip())
    return Theme(name, variables)


def _closing(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced parentheses in {text!r}")


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == sep and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return [*parts, current.strip()]


def parse(value: str) -> RGBA:
    """A resolved CSS colour (no ``var()`` left)."""
    value = value.strip().lower()
    if value in _NAMES:
        return _NAMES[value]
    if value.startswith("#"):
        digits = value[1:]
        if len(digits) in (3, 4):
            digits = "".join(d * 2 for d in digits)
        if len(digits) == 6:
            digits += "ff"
        if len(digits) != 8:
            raise ValueError(f"bad hex colour {value!r}")
        r, g, b, a = (int(digits[i : i + 2], 16) for i in range(0, 8, 2))
        return (float(r), float(g), float(b), a / 255)
    if value.startswith(("rgb(", "rgba(")):
        body = value[value.index("(") + 1 : _closing(value, value.index("("))]
        parts = re.split(r"[\s,/]+", body.strip())
        channels = [float(p.rstrip("%")) * (2.55 if p.endswith("%") else 1) for p in parts[:3]]
        alpha = 1.0
        if len(parts) > 3:
            alpha = float(parts[3].rstrip("%")) / (100 if parts[3].endswith("%") else 1)
        return (channels[0], channels[1], channels[2], alpha)
    if value.startswith("color-mix("):
        return _mix(value[len("color-mix(") : _closing(value, len("color-mix"))])
    raise ValueError(f"colour not understood: {value!r}")


def _mix(body: str) -> RGBA:
    space, *colours = _split_top(body)
    if space.split() != ["in", "srgb"]:
        raise ValueError(f"only srgb mixes are computed: {body!r}")
    (c1, p1), (c2, p2) = (_with_percentage(c) for c in colours)
    if p1 is None and p2 is None:
        p1 = p2 = 50.0
    elif p1 is None:
        p1 = 100 - (p2 or 0)
    elif p2 is None:
        p2 = 100 - p1
    w1, w2 = p1 / (p1 + p2), p2 / (p1 + p2)
    alpha = c1[3] * w1 + c2[3] * w2
    if alpha == 0:
        return (0.0, 0.0, 0.0, 0.0)
    # premultiplied, as CSS Color 5 says
    rgb = [(c1[i] * c1[3] * w1 + c2[i] * c2[3] * w2) / alpha for i in range(3)]
    return (rgb[0], rgb[1], rgb[2], alpha)


def _with_percentage(part: str) -> tuple[RGBA, float | None]:
    match = re.fullmatch(r"(.*?)\s+([\d.]+)%", part.strip())
    if match:
        return parse(match.group(1)), float(match.group(2))
    return parse(part), None


def over(top: RGBA, below: RGBA) -> RGBA:
    """``top`` composited over an opaque ``below``."""
    a = top[3]
    return (
        top[0] * a + below[0] * (1 - a),
        top[1] * a + below[1] * (1 - a),
        top[2] * a + below[2] * (1 - a),
        1.0,
    )


def _luminance(colour: RGBA) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in colour[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(text: RGBA, background: RGBA) -> float:
    """WCAG 2 contrast of ``text`` (composited) on an opaque ``background``."""
    fg = over(text, background)
    light, dark = sorted((_luminance(fg), _luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
