"""The environment of every process MewCode starts: ``child_env``.

``bash`` commands, hook commands, stdio MCP servers and the processes
``run_python``'s code starts all get their environment from ``child_env``:

1. the variables a program needs to find and run tools, by name
   (``DEFAULT_ALLOWLIST``: the path, home, user, locale, time zone, temporary
   folders, terminal, editor and pager, virtualenv, conda and language
   toolchain locations, build flags, proxies and CA bundles), plus the names
   the user adds (``env_allowlist`` in ``~/.mewcode/config.yaml``; an MCP
   server also gets ``mcp_env_allowlist``); a name ending in ``*`` names a
   family (``LC_*``);
2. minus what never passes, whatever an allowlist says: provider keys and
   endpoints (``NEVER_INHERITED``), what changes how a shell starts
   (``BASH_ENV``, ``ENV``, ``CDPATH``, ...) and exported functions;
3. minus any variable whose name looks secret (``looks_secret``) or whose
   value holds a known secret (the session's ``Redactor``: the provider
   keys of the config, values of secret-named variables, credentials found
   in any value) or anything shaped like a credential (``KEY_PATTERNS``), in
   any of the forms the redactor knows, whatever the variable is called;
4. plus what was configured for this one process (a stdio MCP server's own
   ``env``, written by the user or a trusted project; a hook's
   ``MEWCODE_PROJECT_DIR``): that is set as written.

Names and values may be ``str`` or ``bytes`` (``subprocess`` takes both);
what is kept keeps its type.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .redaction import Redactor, environment_secrets, looks_like_key, looks_secret

__all__ = ["DEFAULT_ALLOWLIST", "NEVER_INHERITED", "ChildEnv", "child_env"]

DEFAULT_ALLOWLIST: tuple[str, ...] = (
    # finding and running programs, who and where
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TZDIR",
    "TMPDIR", "TEMP", "TMP",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
    # the terminal, editor and pager
    "TERM", "COLORTERM", "TERMINFO", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR",
    "CLICOLOR", "CLICOLOR_FORCE", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER",
    # Python, virtualenvs and conda
    "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_*", "MAMBA_ROOT_PREFIX", "MAMBA_EXE",
    "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONIOENCODING", "PYTHONUTF8",
    "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYENV_ROOT", "PYENV_VERSION",
    "PIP_*", "UV_*", "PIPX_HOME", "PIPX_BIN_DIR", "POETRY_HOME",
    "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_PATH", "MPLCONFIGDIR",
    "HF_HOME", "TORCH_HOME",
    # other toolchains
    "JAVA_HOME", "JDK_HOME", "MAVEN_HOME", "M2_HOME", "GRADLE_HOME", "GRADLE_USER_HOME",
    "GOPATH", "GOROOT", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY",
    "GOPRIVATE", "GONOSUMDB", "GOTOOLCHAIN",
    "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS",
    "NODE_PATH", "NVM_DIR", "NVM_BIN", "NPM_CONFIG_*", "npm_config_*", "PNPM_HOME",
    "VOLTA_HOME", "BUN_INSTALL", "DENO_DIR", "DENO_INSTALL",
    "GEM_HOME", "GEM_PATH", "BUNDLE_PATH", "RBENV_ROOT", "DOTNET_ROOT",
    "ANDROID_HOME", "ANDROID_SDK_ROOT",
    "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    # building
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS",
    "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH", "CMAKE_PREFIX_PATH", "MANPATH",
    # git's idea of who commits
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    # proxies and CA bundles (a proxy URL holding a password is dropped by its value)
    "HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
    # Windows needs these to start most programs at all
    "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "APPDATA", "LOCALAPPDATA",
    "USERPROFILE", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)", "COMMONPROGRAMFILES",
)  # fmt: skip
"""Host variables every child process inherits: enough to find and run
programs and tools, nothing that grants access to anything. ``NAME*`` is a
family."""

NEVER_INHERITED: frozenset[str] = frozenset(
    {
        # provider keys and endpoints
        "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
        # read by a shell when it starts or resolves a path
        "BASH_ENV", "ENV", "CDPATH", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS",
    }
)  # fmt: skip
"""Never inherited, whatever an allowlist says (a process's configured
``env`` may still set them: that is written for it). Exported functions
(``BASH_FUNC_*``) never pass either."""

_K = TypeVar("_K", str, bytes)
_V = TypeVar("_V", str, bytes)


def child_env(
    source: Mapping[_K, _V],
    *,
    allowlist: Iterable[str] = (),
    secrets: Redactor | None = None,
    keep: Collection[str] = (),
    configured: Mapping[str, str] | None = None,
) -> dict[Any, Any]:
    """The environment for a child process, from ``source`` (see the module
    docstring). ``allowlist`` adds names to ``DEFAULT_ALLOWLIST``; ``keep``
    names variables of ``source`` the caller set for this process (kept
    though no allowlist names them, still checked for secrets); ``secrets``
    are the known secret values (the session's; default: those of this
    process's environment), to which the secrets of ``source`` itself are
    added (a variable set after the session started);
    ``configured`` is set last, as written."""
    names, families = _allowed([*DEFAULT_ALLOWLIST, *allowlist])
    text = {os.fsdecode(k): os.fsdecode(v) for k, v in source.items()}
    known = [secrets] if secrets is not None else []
    values = set(secrets.values()) if secrets is not None else set()
    # without the session's, this process's environment stands for them
    around = text if secrets is not None else {**os.environ, **text}
    own = [(n, v) for n, v in environment_secrets(around) if v.strip() not in values]
    if own:
        known.append(Redactor(own))
    env: dict[Any, Any] = {}
    for key, value in source.items():
        name = os.fsdecode(key)
        if name not in names and name not in keep and not name.startswith(families):
            continue
        if _withheld(name, text[name], known):
            continue
        env[key] = value
    if configured:
        env.update(configured)
    return env


@dataclass(frozen=True)
class ChildEnv:
    """A session's rule for its child processes: the user's ``allowlist``
    and the known ``secrets`` (``None``: those of the environment each time)."""

    allowlist: tuple[str, ...] = ()
    secrets: Redactor | None = field(default=None, repr=False)

    def build(
        self,
        source: Mapping[_K, _V] | None = None,
        *,
        allowlist: Iterable[str] = (),
        keep: Collection[str] = (),
        configured: Mapping[str, str] | None = None,
    ) -> dict[Any, Any]:
        """``child_env`` of ``source`` (default ``os.environ``) under this rule,
        ``allowlist`` adding names for this kind of process."""
        return child_env(
            os.environ if source is None else source,
            allowlist=[*self.allowlist, *allowlist],
            secrets=self.secrets,
            keep=keep,
            configured=configured,
        )


def _allowed(allowlist: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Exact names, and the prefixes of ``NAME*`` families."""
    names: set[str] = set()
    families: list[str] = []
    for entry in allowlist:
        entry = entry.strip()
        if entry.endswith("*"):
            if len(entry) > 1:  # a lone "*" would be everything: not an allowlist
                families.append(entry[:-1])
        elif entry:
            names.add(entry)
    return frozenset(names), tuple(families)


def _withheld(name: str, value: str, secrets: list[Redactor]) -> bool:
    return (
        name in NEVER_INHERITED
        or name.startswith("BASH_FUNC_")
        or looks_secret(name)
        or looks_like_key(value)
        or any(known.finds(value) for known in secrets)
    )
