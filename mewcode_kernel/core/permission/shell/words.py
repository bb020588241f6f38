"""Words of a simple command: assignments, wrappers and their options."""

from __future__ import annotations

from .lexer import Word

__all__ = [
    "RISKY_ENV",
    "RISKY_ENV_PREFIXES",
    "SHELL_STATE_BUILTINS",
    "SUDO_ARG_OPTS",
    "XARGS_ARG_OPTS",
    "is_assignment",
    "is_risky_env",
    "skip_values",
    "strip_wrapper",
]

SUDO_ARG_OPTS = frozenset(
    {"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "--user", "--group"}
)
# Assignments to these change what a command does (loader, search path, startup
# files); a prefix like PATH=... is therefore never stripped before matching.
RISKY_ENV = frozenset(
    {
        "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP",
        "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS",
        "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
        "GIT_DIR", "GIT_WORK_TREE", "SHELLOPTS", "BASHOPTS", "EDITOR", "VISUAL", "PAGER",
        "GIT_PAGER", "HOME", "CDPATH", "OLDPWD", "PWD", "PS4", "GLOBIGNORE", "SHELL", "BROWSER",
        "LESSOPEN", "LESSCLOSE", "MANPAGER", "SYSTEMD_PAGER", "LESS", "ZDOTDIR", "INPUTRC",
        "TERMINFO", "GCONV_PATH", "LOCPATH", "SSH_ASKPASS", "SUDO_ASKPASS", "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_OPTS", "GRADLE_OPTS", "CC", "CXX", "CPP",
        "LD", "AR", "MAKEFLAGS", "MFLAGS", "RUSTFLAGS", "RUSTC_WRAPPER", "TMPDIR", "VIRTUAL_ENV",
    }
)  # fmt: skip
# Families of variables that tell a program where to load code or config from,
# or what to run (GIT_CONFIG_COUNT/KEY/VALUE can set core.fsmonitor, say).
RISKY_ENV_PREFIXES = (
    "GIT_", "LD_", "DYLD_", "PYTHON", "NODE_", "NPM_CONFIG_", "PERL", "RUBY", "BASH_", "CARGO_",
    "RUSTC", "GO", "XDG_", "PIP_", "UV_", "POETRY_", "CONDA", "JAVA", "SSH_", "PS",
)  # fmt: skip
# Builtins that change variables, options or how later words are read.
SHELL_STATE_BUILTINS = frozenset(
    {"export", "declare", "typeset", "local", "readonly", "unset", "shopt", "alias", "unalias",
     "let", "read", "mapfile", "readarray", "enable", "hash", "trap", "builtin", "getopts"}
)  # fmt: skip
XARGS_ARG_OPTS = frozenset(
    {"-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "--max-args", "--delimiter"}
)


def is_risky_env(name: str) -> bool:
    """Whether setting ``name`` can change what a program runs or loads."""
    upper = name.upper()
    return upper in RISKY_ENV or upper.startswith(RISKY_ENV_PREFIXES)


def is_assignment(word: Word) -> bool:
    name, eq, _ = word.raw.partition("=")
    return bool(eq) and name.isidentifier() and not name.startswith("$")


def _skip_options(words: list[Word], i: int, with_arg: frozenset[str]) -> int:
    while i < len(words) and words[i].value.startswith("-") and words[i].value != "-":
        v = words[i].value
        i += 1
        if v == "--":
            break
        if v in with_arg and "=" not in v:
            i += 1
    return i


def strip_wrapper(words: list[Word], i: int) -> tuple[int, str | None]:
    """Index after a wrapper at ``words[i]`` (or ``i``), and an opacity reason."""
    name = words[i].value
    if name == "nohup":
        return i + 1, None
    if name == "time":
        return _skip_options(words, i + 1, frozenset()), None
    if name == "nice":
        j = _skip_options(words, i + 1, frozenset({"-n", "--adjustment"}))
        return j, None
    if name == "timeout":
        j = _skip_options(words, i + 1, frozenset({"-s", "--signal", "-k", "--kill-after"}))
        return (j + 1 if j < len(words) else j), None
    if name == "env":
        j = i + 1
        while j < len(words):
            v = words[j].value
            if v in ("-i", "--ignore-environment", "-0", "--null", "-"):
                j += 1
            elif v in ("-u", "--unset"):
                j += 2
            elif v.startswith(("--unset=", "-u")):
                j += 1
            elif v.startswith("-"):
                return j, f"env option {v} is not understood"
            elif is_assignment(words[j]):
                j += 1
            else:
                break
        return j, None
    return i, None


def skip_values(argv: list[str], j: int, with_arg: frozenset[str]) -> int:
    """Index of the first operand at or after ``j`` (options taking a value skip it)."""
    while j < len(argv) and argv[j].startswith("-"):
        j += 2 if argv[j] in with_arg else 1
    return j
