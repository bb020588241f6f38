"""Every colour MewCode's notebook front end gives text reads at WCAG AA
(4.5:1) in JupyterLab's light and dark themes, computed from the installed
JupyterLab's own theme variables: status colours on the page and in code
boxes, syntax colours in diffs (also on the added/removed tints), the cards'
buttons (white text on a coloured background), every rule of the cards'
stylesheets, and every literal text colour anywhere in the front end's
sources (so a colour added later is checked too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from magics._live.diff import ADDED_TINT, REMOVED_TINT, TOKEN_COLOURS
from magics._live.fmt import BOX_BACKGROUND, BUTTONS, COLORS, MUTED_COLOR
from tests._css_colour import Theme, contrast, over, parse, theme

AA = 4.5
FRONT_END = Path(__file__).resolve().parent.parent / "magics"
STATIC = FRONT_END / "_live" / "static"
# where MewCode's outputs sit: the notebook's page and a cell's background
PAGES = ("var(--jp-layout-color0)", "var(--jp-layout-color1)")
HUNK = "#8881"  # the hunk header's tint inside a diff box (diff._HUNK)


@pytest.fixture(params=["light", "dark"], scope="module")
def lab(request: pytest.FixtureRequest) -> Theme:
    return theme(request.param)


def backgrounds(lab: Theme, *tints: str) -> dict[str, tuple[float, float, float, float]]:
    """The page backgrounds, the code box, and the box under each tint."""
    out = {page: lab.colour(page) for page in PAGES}
    box = over(lab.colour(BOX_BACKGROUND), out[PAGES[0]])
    out["box"] = box
    for tint in tints:
        out[f"box+{tint}"] = over(parse(tint), box)
    return out


def low(lab: Theme, text: str, under: dict[str, tuple[float, float, float, float]]) -> list[str]:
    colour = lab.colour(text)
    return [
        f"{lab.name}: {text} on {where} is {ratio:.2f}:1"
        for where, bg in under.items()
        if (ratio := contrast(colour, bg)) < AA
    ]


def test_the_arithmetic_matches_known_values() -> None:
    white, black = parse("#fff"), parse("black")
    assert contrast(black, white) == pytest.approx(21.0)
    assert contrast(parse("#777"), white) == pytest.approx(4.48, abs=0.01)
    assert parse("color-mix(in srgb,#ff0000 60%,#000)")[:3] == pytest.approx((153, 0, 0))
    assert over(parse("rgba(0,0,0,.54)"), white)[:3] == pytest.approx((117.3,) * 3)
    light = theme("light")
    assert light.colour("var(--jp-warn-color1)")[:3] == (245, 124, 0)  # md-orange-700
    assert theme("dark").colour("var(--jp-layout-color1)")[:3] == (33, 33, 33)
    # what issue 30 measured: the old orange warning on the light page
    assert contrast(parse("#f57c00"), white) < 3


def test_status_colours_read_on_the_page_and_in_code_boxes(lab: Theme) -> None:
    under = backgrounds(lab)
    problems = [p for colour in [*COLORS.values(), MUTED_COLOR] for p in low(lab, colour, under)]
    assert not problems, problems


def test_syntax_and_diff_colours_read_on_their_tints(lab: Theme) -> None:
    tints = [t.removeprefix("background:") for t in (ADDED_TINT, REMOVED_TINT)]
    under = backgrounds(lab, *tints)
    colours = [re.search(r"color:([^;]+)", style).group(1) for _, style in TOKEN_COLOURS]  # type: ignore[union-attr]
    # plain code (no token colour) inherits the theme's text colour
    colours += ["var(--jp-content-font-color1)", "var(--jp-ui-font-color1)"]
    problems = [p for colour in colours for p in low(lab, colour, under)]
    problems += low(lab, MUTED_COLOR, backgrounds(lab, HUNK))  # hunk headers, "… more lines"
    assert not problems, problems


def test_white_text_reads_on_every_button(lab: Theme) -> None:
    white = parse("#fff")
    page = lab.colour(PAGES[0])
    ratios = {name: contrast(white, over(lab.colour(bg), page)) for name, bg in BUTTONS.items()}
    assert all(r >= AA for r in ratios.values()), (lab.name, ratios)


def _rules(css: str) -> list[tuple[str, dict[str, str]]]:
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        declarations = {}
        for item in body.split(";"):
            name, sep, value = item.partition(":")
            if sep:
                declarations[name.strip()] = value.replace("!important", "").strip()
        out.append((selector.strip(), declarations))
    return out


def test_every_rule_of_the_cards_stylesheets(lab: Theme) -> None:
    sheets = sorted(STATIC.glob("*.css"))
    assert {p.stem for p in sheets} >= {"common", "card", "board", "trust", "revert"}
    problems, checked = [], 0
    for sheet in sheets:
        for selector, rule in _rules(sheet.read_text()):
            text = rule.get("color")
            if text is None or text in ("inherit", "currentColor", "transparent"):
                continue
            checked += 1
            background = rule.get("background") or rule.get("background-color")
            under = (
                {"its background": over(lab.colour(background), lab.colour(PAGES[0]))}
                if background
                else backgrounds(lab)
            )
            problems += [f"{sheet.name} {selector}: {p}" for p in low(lab, text, under)]
    assert checked >= 8 and not problems, problems


_LITERAL_COLOUR = re.compile(r"(?<![\w-])color\s*:\s*([^;\"'{}<>]+?)\s*(?=[;\"'}<]|$)", re.M)


def test_every_literal_text_colour_in_the_front_end(lab: Theme) -> None:
    """A pattern, not a list: any ``color:`` written out in the front end's
    Python or JavaScript (a colour added later included) reads on the page."""
    found: dict[str, list[str]] = {}
    for path in sorted(FRONT_END.rglob("*")):
        if path.suffix not in (".py", ".js"):
            continue
        for match in _LITERAL_COLOUR.finditer(path.read_text()):
            value = match.group(1).strip()
            if "{" in value or value in ("inherit", "currentColor", "str", "str)"):
                continue  # an f-string's constant (checked above) or an annotation
            found.setdefault(value, []).append(path.name)
    assert found, "no literal colours found: the pattern no longer matches the sources"
    under = backgrounds(lab)
    problems = [f"{found[v]}: {p}" for v in found for p in low(lab, v, under)]
    assert not problems, problems


def test_a_colour_that_fails_is_caught() -> None:
    """The checks above can fail: the colours issue 30 measured do."""
    light, dark = theme("light"), theme("dark")
    assert low(light, "var(--jp-warn-color1,#f57c00)", backgrounds(light))
    dark_button = over(dark.colour("var(--jp-success-color1)"), dark.colour(PAGES[0]))
    assert contrast(parse("#fff"), dark_button) < AA
    assert low(light, "var(--jp-ui-font-color2)", {"box": light.colour(BOX_BACKGROUND)})
