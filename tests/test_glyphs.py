"""The glyphs MewCode draws in the notebook are ones JupyterLab's fonts carry.

Every non-ASCII character in the front end's sources (``magics/``) and in
the commands' output (``core/commands``) is in ``fmt.SAFE_GLYPHS``; each of
those is in DejaVu Sans (what JupyterLab's font stack falls back to on
Linux), asked of the real fontconfig; and chromium, drawing each in
JupyterLab's own UI font stack, draws it as itself, not as the box a
missing glyph becomes (the old "⧗" does, and the check says so).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from magics._live.fmt import SAFE_GLYPHS

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "magics", ROOT / "mewcode_kernel" / "core" / "commands")
MISSING = ("⧗", "ⓘ", "📝")  # what issue 30 saw as boxes, and what they were replaced by


def _front_end_characters() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for base in SOURCES:
        for path in base.rglob("*"):
            if path.suffix in (".py", ".js", ".css"):
                for ch in path.read_text():
                    if ord(ch) > 127:
                        found.setdefault(ch, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_front_end_draws_only_safe_glyphs() -> None:
    found = _front_end_characters()
    assert "✓" in found and "…" in found  # the scan sees the sources
    unsafe = {
        f"{ch} U+{ord(ch):04X}": sorted(where)
        for ch, where in found.items()
        if ch not in SAFE_GLYPHS
    }
    assert not unsafe, unsafe
    assert not set(MISSING) & SAFE_GLYPHS


def _fontconfig_has(ch: str, family: str) -> bool:
    out = subprocess.run(
        ["fc-list", f"{family}:charset={ord(ch):x}", "family"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    return any(family in line.split(",") for line in out.splitlines())


def test_dejavu_sans_carries_every_safe_glyph() -> None:
    if shutil.which("fc-list") is None:
        pytest.skip("needs fontconfig: apt-get install -y fontconfig fonts-dejavu-core")
    if not _fontconfig_has("A", "DejaVu Sans"):
        pytest.skip("needs DejaVu Sans: apt-get install -y fonts-dejavu-core")
    lacking = [
        f"{ch} U+{ord(ch):04X}"
        for ch in sorted(SAFE_GLYPHS)
        if not _fontconfig_has(ch, "DejaVu Sans")
    ]
    assert not lacking, lacking
    assert not any(_fontconfig_has(ch, "DejaVu Sans") for ch in MISSING)  # the check can fail


_DRAW = """([font, glyphs]) => {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 40;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.font = `24px ${font}`;
  ctx.textBaseline = "top";
  const draw = (ch) => {
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, 40, 40);
    ctx.fillStyle = "#000";
    ctx.fillText(ch, 4, 4);
    const data = ctx.getImageData(0, 0, 40, 40).data;
    let ink = 0, sig = "";
    for (let i = 0; i < data.length; i += 4) {
      const on = data[i] < 128;
      ink += on;
      sig += on ? "1" : "0";
    }
    return { ink, sig };
  };
  return glyphs.map(draw);
}"""


def test_chromium_draws_each_glyph_in_jupyterlabs_font_stack(tmp_path: Path) -> None:
    from tests._css_colour import theme
    from tests._lab import CHROMIUM, CHROMIUM_FLAGS, require_browser

    require_browser()
    from playwright.sync_api import sync_playwright

    font = theme("light").resolve("var(--jp-ui-font-family)")
    boxes = ["\ue000", "\ue001", "\U0010fffd"]  # private use: no font has them
    glyphs = sorted(SAFE_GLYPHS)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.set_content("<!doctype html><meta charset=utf-8><body></body>")
            drawn = page.evaluate(_DRAW, [font, [*boxes, *MISSING, *glyphs]])
        finally:
            browser.close()
    tofu = {d["sig"] for d in drawn[: len(boxes)]}
    missing, safe = (
        drawn[len(boxes) : len(boxes) + len(MISSING)],
        drawn[len(boxes) + len(MISSING) :],
    )
    as_box = [ch for ch, d in zip(glyphs, safe, strict=True) if d["sig"] in tofu or d["ink"] == 0]
    assert not as_box, f"drawn as a box or not at all: {as_box}"
    # the check can fail: the old hourglass is drawn as the missing-glyph box
    assert missing[0]["sig"] in tofu or missing[0]["ink"] == 0
