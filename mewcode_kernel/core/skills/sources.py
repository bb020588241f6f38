"""Where ``install_skill`` may download from, and how each URL maps to the
GitHub contents API.

Accepted (the scheme may be left out; query and fragment are ignored):

* ``github.com/<owner>/<repo>/tree/<ref>/<path>``: that directory
  (``<ref>`` is one path segment; ``blob/<ref>/<path>/SKILL.md`` means the
  directory holding that file, and ``github.com/<owner>/<repo>`` the
  repository's top);
* ``raw.githubusercontent.com/<owner>/<repo>/<ref>/<path>/SKILL.md``: that
  one file;
* ``skills.sh/<owner>/<repo>[/<skill>]``: ``skills/<skill>`` in that
  repository (then ``<skill>`` at its top); without ``<skill>``, or when the
  third segment is a version (``1.2.0``, ``v2``), the skill is named after
  the repository.

Every other host is refused, as are a port, user info, and path segments
that are empty, ``.``, ``..`` or hold a backslash or control character.
``InstallSettings`` says which API and raw-content servers answer (GitHub's
unless ``MEWCODE_GITHUB_API_URL`` / ``MEWCODE_GITHUB_RAW_URL`` say
otherwise, e.g. a mirror, or a local server in tests).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote, urlsplit

from ..errors import SkillError

__all__ = [
    "API_URL_ENV",
    "RAW_URL_ENV",
    "TIMEOUT_ENV",
    "InstallSettings",
    "InstallSource",
    "parse_source",
]

API_URL_ENV = "MEWCODE_GITHUB_API_URL"
RAW_URL_ENV = "MEWCODE_GITHUB_RAW_URL"
TIMEOUT_ENV = "MEWCODE_SKILL_INSTALL_TIMEOUT"

_GITHUB = frozenset({"github.com", "www.github.com"})
_RAW = frozenset({"raw.githubusercontent.com"})
_SKILLS_SH = frozenset({"skills.sh", "www.skills.sh"})
_VERSION = re.compile(r"^v?\d+(\.\d+)*$")
_BAD_SEGMENT = re.compile(r"[\x00-\x1f\x7f\\]")


def _base_url(value: str, var: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SkillError(f"{var} must be an http(s) URL, not {value!r}")
    return value.strip().rstrip("/")


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallSettings:
    """Servers, time limit and quotas of an install. ``timeout`` bounds the
    whole download, in seconds."""

    api_url: str = "https://api.github.com"
    raw_url: str = "https://raw.githubusercontent.com"
    timeout: float = 60.0
    max_file_bytes: int = 1 << 20
    max_total_bytes: int = 8 << 20
    max_files: int = 64
    max_depth: int = 4

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> InstallSettings:
        """Defaults, with the servers and time limit the environment sets.
        Raises ``SkillError`` for a value that cannot be used."""
        env = os.environ if env is None else env
        kwargs: dict[str, object] = {}
        if env.get(API_URL_ENV, "").strip():
            kwargs["api_url"] = _base_url(env[API_URL_ENV], API_URL_ENV)
        if env.get(RAW_URL_ENV, "").strip():
            kwargs["raw_url"] = _base_url(env[RAW_URL_ENV], RAW_URL_ENV)
        if env.get(TIMEOUT_ENV, "").strip():
            try:
                timeout = float(env[TIMEOUT_ENV])
            except ValueError:
                timeout = -1.0
            if not 0 < timeout <= 3600:
                raise SkillError(
                    f"{TIMEOUT_ENV} must be a number of seconds up to 3600, not {env[TIMEOUT_ENV]!r}"
                )
            kwargs["timeout"] = timeout
        return cls(**kwargs)  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True, slots=True)
class InstallSource:
    """What to download for one URL.

    ``kind`` ``dir``: a directory listed by the contents API of ``repo_api``
    (``<api>/repos/<owner>/<repo>/contents``) at ``ref``, the first of
    ``paths`` that exists; ``file``: the single ``SKILL.md`` at ``file_url``.
    ``hint`` is the name the URL suggests (the SKILL.md's own name decides).
    """

    url: str
    kind: Literal["dir", "file"]
    hint: str
    repo_api: str = ""
    ref: str | None = None
    paths: tuple[str, ...] = ()
    file_url: str = ""

    def listing_url(self, path: str) -> str:
        """The contents-API URL listing ``path`` (relative to the repository)."""
        url = f"{self.repo_api}/{quote(path)}" if path else self.repo_api
        return f"{url}?ref={quote(self.ref, safe='')}" if self.ref else url


def _segments(path: str, url: str) -> list[str]:
    raw = [s for s in path.split("/")]
    while raw and raw[-1] == "":
        raw.pop()
    if raw and raw[0] == "":
        raw.pop(0)
    out = []
    for seg in raw:
        seg = unquote(seg)
        if seg in ("", ".", "..") or "/" in seg or _BAD_SEGMENT.search(seg):
            raise SkillError(f"refusing {url!r}: the path segment {seg!r} is not allowed")
        out.append(seg)
    return out


def parse_source(url: str, settings: InstallSettings) -> InstallSource:
    """Map ``url`` to what to download; raises ``SkillError`` for a URL that
    is not a supported skill location."""
    given = url.strip()
    if not given:
        raise SkillError("install_skill needs a URL")
    full = given if "://" in given else "https://" + given
    parts = urlsplit(full)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https"):
        raise SkillError(f"refusing {given!r}: only https URLs are supported")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.username is not None or parts.password is not None or port is not None:
        raise SkillError(f"refusing {given!r}: user info and ports are not allowed in skill URLs")
    seg = _segments(parts.path, given)
    api = settings.api_url
    if host in _GITHUB:
        return _github(given, seg, api)
    if host in _RAW:
        if len(seg) < 4 or seg[-1] != "SKILL.md":
            raise SkillError(
                f"refusing {given!r}: a raw URL must name a SKILL.md "
                "(raw.githubusercontent.com/<owner>/<repo>/<ref>/<path>/SKILL.md)"
            )
        hint = seg[-2] if len(seg) > 4 else seg[1]
        return InstallSource(
            url=given,
            kind="file",
            hint=hint,
            file_url=settings.raw_url + "/" + "/".join(quote(s) for s in seg),
        )
    if host in _SKILLS_SH:
        if len(seg) not in (2, 3):
            raise SkillError(f"refusing {given!r}: expected skills.sh/<owner>/<repo>[/<skill>]")
        owner, repo = seg[0], seg[1]
        skill = seg[2] if len(seg) == 3 and not _VERSION.match(seg[2]) else None
        repo_api = f"{api}/repos/{quote(owner)}/{quote(repo)}/contents"
        paths = (f"skills/{skill}", skill) if skill else (f"skills/{repo}",)
        return InstallSource(
            url=given, kind="dir", hint=skill or repo, repo_api=repo_api, paths=paths
        )
    raise SkillError(
        f"refusing {given!r}: unsupported host {host or '(none)'!r}; skills install from "
        "github.com, raw.githubusercontent.com or skills.sh"
    )


def _github(given: str, seg: list[str], api: str) -> InstallSource:
    if len(seg) < 2:
        raise SkillError(
            f"refusing {given!r}: expected github.com/<owner>/<repo>/tree/<ref>/<path>"
        )
    owner, repo = seg[0], seg[1]
    repo_api = f"{api}/repos/{quote(owner)}/{quote(repo)}/contents"
    if len(seg) == 2:
        return InstallSource(url=given, kind="dir", hint=repo, repo_api=repo_api, paths=("",))
    if seg[2] not in ("tree", "blob") or len(seg) < 4:
        raise SkillError(
            f"refusing {given!r}: expected github.com/<owner>/<repo>/tree/<ref>/<path> "
            "(a directory holding SKILL.md)"
        )
    ref, path = seg[3], seg[4:]
    if seg[2] == "blob":
        if not path or path[-1] != "SKILL.md":
            raise SkillError(f"refusing {given!r}: a blob URL must name a SKILL.md")
        path = path[:-1]
    hint = path[-1] if path else repo
    return InstallSource(
        url=given, kind="dir", hint=hint, repo_api=repo_api, ref=ref, paths=("/".join(path),)
    )
