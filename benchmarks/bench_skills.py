"""Skills benchmark: reading a catalog of real skills, and what progressive
disclosure keeps out of the system prompt.

Run by hand: ``python benchmarks/bench_skills.py [--copies N]``. Copies the
187 real ``SKILL.md`` files of ``tests/fixtures/skills`` (``N`` times) into
a project's ``.claude/skills``, then prints the best of several catalog
reads against a 0.5 s target as a ratio (< 1 is within target), the size of
the system prompt's skills section, and its share of all the skills' text.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from mewcode_kernel.core.skills import SkillCatalog, catalog_section

TARGET_SECONDS = 0.5
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "skills"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    files = sorted(FIXTURES.rglob("SKILL.md"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "proj" / ".claude" / "skills"
        for copy in range(args.copies):
            for n, path in enumerate(files):
                dest = folder / f"{copy}-{n:03d}-{path.parent.name}"
                shutil.copytree(path.parent, dest)
                if copy:  # distinct names, so every copy is a skill of its own
                    text = (dest / "SKILL.md").read_text()
                    (dest / "SKILL.md").write_text(text.replace("\nname: ", f"\nname: c{copy}-", 1))
        catalog = SkillCatalog(Path(tmp) / "proj", home=Path(tmp) / "home")
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            catalog.reload()
            times.append(time.perf_counter() - start)
        best = min(times)
        section = catalog_section(catalog.skills())
        bodies = sum(len(s.body) for s in catalog.skills())
    count = len(catalog)
    print(f"{count} skills read (of {len(files) * args.copies} files; same names are reported)")
    print(
        f"catalog read: best {best * 1000:.0f} ms, {best / count * 1e6:.0f} µs a skill; "
        f"ratio to the {TARGET_SECONDS:.1f} s target: {best / TARGET_SECONDS:.2f}"
    )
    print(
        f"system prompt section: {len(section):,} chars ({len(section) / count:.0f} a skill); "
        f"all instructions: {bodies:,} chars; the prompt carries {len(section) / bodies:.1%} of it"
    )


if __name__ == "__main__":
    main()
