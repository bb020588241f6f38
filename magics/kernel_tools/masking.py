"""Masking secrets in text: anything shaped like a credential (``sk-...``,
GitHub tokens, a JWT, a password in a URL...: ``core.redaction``), and the
value under a name that looks secret (``api_key='...'``, ``token=...``,
``%env API_KEY=...``), as reprs, logs, settings and code write them.

Each string is masked before a repr shortens it (a cut key would no longer
look like one), and the whole text after."""

from __future__ import annotations

import re

from mewcode_kernel.core.redaction import credentials_in, looks_secret, mask_credentials

__all__ = ["MASKED", "mask_keys"]

MASKED = "[masked]"

# a string literal, as code and reprs write it: a prefix (r, b, f, rb...),
# one quote or three (three may span lines), backslash escapes
_PREFIX = r"(?i:rb|br|fr|rf|[rbuf])?"
_LITERAL = (
    _PREFIX + r"""(?P<q>(?P<tq>\"\"\"|''')|['"])"""
    r"""(?P<quoted>(?(tq)[\s\S]*?|(?:\\.|(?!(?P=q))[^\n\\])+))(?P=q)"""
)
_ANY_LITERAL = (
    _PREFIX + r"""(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
)
# an annotation before a default: api_key: str = "...", token: Optional[str] = "..."
_ANNOTATION = r"[A-Za-z_][\w.]*(?:\[[^\n=]*\])?(?:\s*\|\s*[A-Za-z_][\w.]*(?:\[[^\n=]*\])?)*"


def _field(code: bool) -> re.Pattern[str]:
    """A value under a name, as reprs, logs, settings and code write it:
    quoted (``api_key='...'``, ``'token': '...'``, ``environ["API_KEY"] =
    "..."``, ``password = r\"\"\"...\"\"\"``, ``setdefault("API_KEY", "...")``:
    the name quoted after ``(``), each string of a tuple or list
    (``auth = ("user", "...")``), in code after an annotation
    (``api_key: str = "..."``); or not quoted (``<Client token=...>``,
    ``PASSWORD=...``, ``password: ...``: up to a space, a comma or a closing
    bracket). Whether the name looks secret is ``looks_secret``'s to say."""
    annotated = rf":\s*{_ANNOTATION}\s*=(?!=)|" if code else ""
    return re.compile(
        r"""(?:(?P<call>\(\s*(?P<cq>['"]))|(?<![\w.\-]))(?P<name>[A-Za-z_][\w.\-]*)"""
        r"""(?P<sep>(?(call)(?P=cq)\s*,\s*|['"]?\]?(?:\[[^\]\n]*\])*\s*"""
        rf"""(?:{annotated}:=?|=(?!=))\s*))"""
        rf"""(?:{_LITERAL}"""
        rf"""|(?P<seq>[(\[]\s*{_ANY_LITERAL}(?:\s*,\s*{_ANY_LITERAL})*\s*,?\s*[)\]])"""
        rf"""|(?!{re.escape(MASKED)})(?P<bare>(?:(?i:basic|bearer|digest|token)\s+)?[^\s,)>\]}}'"]+))"""
    )


_FIELD = _field(code=False)
_CODE_FIELD = _field(code=True)
# each string of a tuple or list after a secret name
_SEQ_LITERAL = re.compile(
    rf"""(?P<pre>{_PREFIX}(?P<q>\"\"\"|'''|['"]))(?P<quoted>(?:\\.|(?!(?P=q))[\s\S])*)(?P=q)"""
)
# unquoted words after a secret name that are no secret: an annotation
# (``api_key: str``), a switch, nothing
_NOT_VALUES = frozenset({"None", "True", "False", "null", "true", "false", "str", "bytes"})
# a line that sets environment variables, whose values are not quoted even in
# code: %env NAME=value, %set_env NAME value, export NAME=value (!export, a
# %%bash cell), and IPython's rewriting of them: run_line_magic('env', ...)
_ENV_LINE = re.compile(
    r"""^.*(?:%(?:set_)?env\b|(?<![\w.])export[ \t]|['"](?:set_)?env['"]\s*,).*$""", re.M
)
_ENV_SPACED = re.compile(
    r"""(?:%(?:set_)?env|['"](?:set_)?env['"]\s*,\s*['"])[ \t]*"""
    r"""(?P<name>[A-Za-z_]\w*)[ \t]+(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s'"]+)"""
)


def _mask_env_line(line: str, found: list[str] | None) -> str:
    """A line that sets environment variables, each value of a secret name masked."""

    def spaced(m: re.Match[str]) -> str:
        value = m["value"]
        if not looks_secret(m["name"]) or value == MASKED:
            return m[0]
        quote = value[0] if value[0] in "'\"" else ""
        if found is not None:
            found.append(value.strip("'\""))
        return m[0][: m.start("value") - m.start()] + quote + MASKED + quote

    return _mask_fields(_ENV_SPACED.sub(spaced, line), unquoted=True, found=found)


def _mask_fields(text: str, unquoted: bool, found: list[str] | None = None) -> str:
    out: list[str] = []
    done = pos = 0
    field = _FIELD if unquoted else _CODE_FIELD
    while m := field.search(text, pos):
        if not looks_secret(m["name"]):
            # what follows another name may hold a field: "error: password=...",
            # environ["API_KEY"] = "..."
            pos = m.end("name")
            continue
        pos = m.end()
        if m["q"] is not None:
            out += [text[done : m.start("quoted")], MASKED]
            done = m.end("quoted")
            masked = [m["quoted"]]
        elif m["seq"] is not None:
            masked = [s["quoted"] for s in _SEQ_LITERAL.finditer(m["seq"])]
            seq = _SEQ_LITERAL.sub(lambda s: f"{s['pre']}{MASKED}{s['q']}", m["seq"])
            out += [text[done : m.start("seq")], seq]
            done = m.end("seq")
        elif m["call"] is None and _bare_value(m, text, unquoted):
            out += [text[done : m.start("bare")], MASKED]
            done = m.end()
            masked = [m["bare"]]
        else:
            masked = []
        if found is not None:
            found += masked
    return "".join(out) + text[done:]


def _bare_value(m: re.Match[str], text: str, unquoted: bool) -> bool:
    """Whether an unquoted value after a secret name is one: in text, unless
    it is a word like ``None``; in code, only inside a string (the name
    right after the quote that opens it: ``'API_KEY=...'``), unless it is a
    placeholder (``f"token={token}"``, ``"password=%s"``)."""
    bare = m["bare"]
    if bare in _NOT_VALUES:
        return False
    if unquoted:
        return True
    start = m.start("name")
    in_string = start > 0 and text[start - 1] in "'\"" and m["sep"][:1] not in ("'", '"')
    return in_string and not bare.startswith(("{", "%"))


def mask_keys(text: str, *, unquoted: bool = True, found: list[str] | None = None) -> str:
    """``text`` with anything shaped like a credential, or under a name that
    looks secret, replaced by ``[masked]``. ``unquoted=False`` masks only
    literal values after a name, and what a line setting environment
    variables sets: for code (``token = get_token()``) and for text laid
    out here (``api_key: object, 0 missing``). ``found`` receives the values
    masked."""
    if found is not None:
        found += credentials_in(text)
    # credentials first: a query string's value ends at "&" or "#", a field's at a space
    text = mask_credentials(text, MASKED)
    text = _ENV_LINE.sub(lambda m: _mask_env_line(m[0], found), text)
    return _mask_fields(text, unquoted, found)
