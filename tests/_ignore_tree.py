"""A small tree full of .gitignore corner cases, shared by the glob, grep and
ignore tests (git itself is the oracle for which files it keeps)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT_IGNORE = "\n".join(
    [
        "# comments and blank lines are skipped",
        "",
        "*.log",
        "!keep.log",
        "/build/",
        "docs/*.tmp",
        "**/cache/",
        "temp?.txt",
        "[abc]x.dat",
        "data[0-9].csv",
        "!data5.csv",
        "\\#literal",
        "\\!bang",
        "trailing\\ ",  # an escaped trailing space is kept
        "spaced   ",  # unescaped trailing spaces are not
        "node_modules",
        "a/**/z.txt",
        "deep/**",
        "!deep/keep/",
        "[!q]only.txt",
        "",
    ]
)

SUB_IGNORE = """!*.log
*.txt
!important.txt
/only_here.md
"""

BODY = "hello world\nimport os\n    indented hello\nHELLO again\nfoo bar\nthe end x\n"

TEXT_FILES = [
    "keep.log",
    "drop.log",
    "build/out.txt",
    "src/build/x.txt",
    "docs/a.tmp",
    "docs/sub/b.tmp",
    "src/cache/c.txt",
    "cache.txt",
    "temp1.txt",
    "temp12.txt",
    "ax.dat",
    "dx.dat",
    "data1.csv",
    "data5.csv",
    "#literal",
    "!bang",
    "trailing ",
    "trailing",
    "spaced",
    "node_modules/pkg/index.js",
    "src/node_modules/x.js",
    "a/z.txt",
    "a/b/c/z.txt",
    "a/b/y.txt",
    "deep/d.txt",
    "deep/keep/f.txt",
    "qonly.txt",
    "ronly.txt",
    "sub/x.log",
    "sub/t.txt",
    "sub/important.txt",
    "sub/only_here.md",
    "sub/deeper/only_here.md",
    "sub/inner/t.txt",
    "sub/inner/u.py",
    ".hidden/h.txt",
    ".env",
    "src/main.py",
    "src/pkg/mod.py",
    "src/pkg/mod.ts",
    "src/pkg/view.tsx",
    "README.md",
]


def build(root: Path) -> Path:
    """Write the tree under ``root`` (no .git) and return ``root``."""
    (root / ".gitignore").write_text(ROOT_IGNORE)
    (root / "sub").mkdir()
    (root / "sub" / ".gitignore").write_text(SUB_IGNORE)
    (root / "sub" / "inner").mkdir()
    (root / "sub" / "inner" / ".gitignore").write_text("!*.txt\n")
    for i, rel in enumerate(TEXT_FILES):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(BODY + f"file {i} {rel}\n")
    (root / "src" / "crlf.py").write_bytes(b"hello crlf\r\nimport sys\r\nend\r\n")
    (root / "src" / "nonl.py").write_text("no newline hello")
    (root / "src" / "empty.py").write_text("")
    (root / "src" / "latin.txt").write_bytes(b"caf\xe9 hello\nplain\n")
    (root / "src" / "long.py").write_text("hello " + "x" * 3000 + "\n")
    (root / "bin.dat").write_bytes(b"hello\0binary\n")
    (root / "src" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0hello")
    return root


def git_visible(root: Path) -> set[str]:
    """Files git reports as untracked and not ignored (isolated from user config)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root / ".xdg-none"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    git = shutil.which("git")
    assert git is not None
    if not (root / ".git").exists():
        subprocess.run([git, "init", "-q", str(root)], check=True, env=env)
    out = subprocess.run(
        [git, "-c", "core.excludesFile=", "ls-files", "-o", "--exclude-standard", "-z"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    ).stdout
    return {os.fsdecode(p) for p in out.split(b"\0") if p}
