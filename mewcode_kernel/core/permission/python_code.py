"""The Python-code branch of ``engine.decide``: tools whose rule family is
``python`` (``run_python``, rules ``RunPython(...)``).

Code is read with ``ast``; a rule is matched against its statements, each in
two spellings (as written, and as ``ast.unparse`` prints it):

* ``prefix:*`` matches a statement that is ``prefix`` or starts with it
  followed by a character that cannot continue a name (``print:*`` matches
  ``print(1)`` and ``print (1)``, not ``printer(1)``); ``*`` wildcards match
  any text; no wildcard means the whole statement (or the whole code);
  ``=``, ``~``, ``!`` as everywhere.
* deny and ask rules: any statement at any depth, any call and any import
  (``x = os.system('id')`` is a call to ``os.system``).
* allow rules: every top-level statement must be covered. A wildcard rule
  covers only a plain call (or an assignment of one) of a dotted name whose
  arguments hold no further call, lambda, walrus, ``await``, comprehension or
  dunder (a name, an attribute or a string): ``RunPython(print:*)`` allows
  ``print(df.shape)``, but not ``print(__import__('os').system('id'))`` nor
  ``print(1) or os.system('id')``. It never covers calling a builtin that
  runs code or reaches any name (``exec``, ``eval``, ``getattr``, ``type``,
  ``open``, ...), nor an argument that hands one along, or a member that runs
  commands or changes files (``sorted(cmds, key=os.system)``,
  ``map(sp.call, cmds)``, ``df.apply(df.to_csv)``), also reached through a
  library's attributes (``pd.io.common.os``): a function passed as an
  argument is a call at a distance. That list stops the known ways, not every
  callable a notebook holds: a rule for a function that calls its arguments
  (``map``, ``sorted``, ``df.apply``) trusts what it is given.
  In an assignment the rule is matched against the call (``x = print(1)``),
  not the names assigned: ``print = exec('...')`` is a call to ``exec``.
  Only a rule that spells the targets out (``RunPython(df = pd.read_csv:*)``)
  matches the whole statement. An assignment a wildcard rule covers may not
  rebind a builtin or a name another allow rule starts with (``print =
  getattr(os, 'system')`` under ``getattr:*`` would turn ``print:*`` into
  a shell).

Code that does not parse asks. Deny rules here are a text match on code
that can build any name at run time (``getattr(os, 'sys' + 'tem')``): they
stop the obvious, only allow rules are a boundary. ``bypassPermissions``
allows, as it does any other tool; plan mode and read-only roles deny.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .decision import Decision
from .matcher import Exact, Not
from .modes import LENIENT, Mode
from .python_match import python_matcher
from .request import PermissionRequest

if TYPE_CHECKING:  # rules reads specifiers with python_matcher: no import back at run time
    from .rules import Rule, RuleSet

__all__ = ["PythonCode", "decide_python", "guarded_names", "is_pattern", "read_code"]

# nodes that run or hide more code inside an argument
_ACTIVE = (
    ast.Call,
    ast.Lambda,
    ast.NamedExpr,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


@dataclass(frozen=True, slots=True)
class _Statement:
    node: ast.AST
    spellings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PythonCode:
    """Code read for rules: its top-level statements and every part inside
    (statements, calls, imports) that deny and ask rules look at."""

    code: str
    top: tuple[_Statement, ...]
    parts: tuple[_Statement, ...]
    lines: tuple[bytes, ...]


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def _lines(code: str) -> list[bytes]:
    """The code's lines as ``ast`` counts them (``\\r\\n``, ``\\r``, ``\\n``), in UTF-8:
    column offsets are byte offsets."""
    return [m.group(0).encode() for m in _LINE.finditer(code) if m.group(0)]


def _segment(lines: Sequence[bytes], node: ast.AST) -> str:
    """``ast.get_source_segment`` without splitting the code again for each
    node (that made reading a long cell quadratic)."""
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    first, last = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if start is None or end is None or first is None or last is None or end > len(lines):
        return ""
    if start == end:
        return lines[start - 1][first:last].decode(errors="replace")
    chunk = [lines[start - 1][first:], *lines[start : end - 1], lines[end - 1][:last]]
    return b"".join(chunk).decode(errors="replace")


def _spell(lines: Sequence[bytes], node: ast.AST) -> tuple[str, ...]:
    found = [_segment(lines, node).strip()]
    try:
        found.append(ast.unparse(node).strip())
    except Exception:  # unparse of an odd node: the source segment is enough
        pass
    return tuple(dict.fromkeys(s for s in found if s))


def read_code(code: str) -> PythonCode | str:
    """``code`` read for rules, or why it cannot be (it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        return f"the code does not parse ({type(exc).__name__}: {exc})"
    lines = _lines(code)
    top = tuple(_Statement(s, _spell(lines, s)) for s in tree.body)
    parts = tuple(
        _Statement(n, _spell(lines, n))
        for n in ast.walk(tree)
        if isinstance(n, (ast.stmt, ast.Call, ast.Import, ast.ImportFrom))
    )
    return PythonCode(code=code, top=top, parts=parts, lines=tuple(lines))


def _whole(rule: Rule, code: PythonCode) -> bool:
    """An exact rule naming the whole code."""
    spec = rule.specifier
    if spec is None:
        return True
    text = code.code.strip()
    if spec.startswith("="):
        return spec[1:].strip() == text
    if spec.startswith(("~", "!")) or "*" in spec:
        return False
    return spec == text


def _hits(rule: Rule, code: PythonCode) -> bool:
    """Deny/ask semantics: the rule matches any part, in any spelling."""
    if rule.specifier is None or _whole(rule, code):
        return True
    m = python_matcher(rule.specifier)
    if isinstance(m, Not):
        return any(not m.inner.matches(s) for p in code.top for s in p.spellings)
    return any(m.matches(s) for p in code.parts for s in p.spellings)


def _dunder(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id.startswith("__"))
        or (isinstance(n, ast.Attribute) and n.attr.startswith("_"))
        for n in ast.walk(node)
    )


def _call_of(node: ast.AST) -> tuple[ast.Call | None, tuple[str, ...]]:
    """The call a statement makes (``call(...)`` or ``a = b = call(...)``) and
    the names it assigns; ``(None, ())`` for any other statement."""
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        targets = tuple(t.id for t in node.targets if isinstance(t, ast.Name))
        value = node.value
    elif isinstance(node, ast.Expr):
        targets, value = (), node.value
    else:
        return None, ()
    return (value, targets) if isinstance(value, ast.Call) else (None, ())


def _dotted(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; ``None`` for any other expression."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _runs_anything(names: list[str]) -> bool:
    """A builtin that runs code, imports, opens files or reaches any attribute
    or namespace (``type`` too: its three-argument form builds a class with
    any dunder), by its own name or through ``builtins``."""
    if names[0] == "builtins" and len(names) == 2:
        return names[1] in _RUNS_ANYTHING
    return len(names) == 1 and names[0] in _RUNS_ANYTHING


def _passes_along(arg: ast.AST) -> bool:
    """An argument that hands a callable to the call, one that runs code or
    acts on the system (``sorted(cmds, key=os.system)`` runs each command)."""
    for n in ast.walk(arg):
        if isinstance(n, ast.Name) and (n.id in _RUNS_ANYTHING or n.id in _OS_MODULES):
            return True
        if isinstance(n, ast.Attribute) and (
            _ACTS_WHEN_CALLED.fullmatch(n.attr) or n.attr in _REACHED_THROUGH
        ):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("__"):
            return True  # a dunder spelled as a string ({'__class_getitem__': ...})
    return False


def _plain_call(node: ast.AST) -> bool:
    """A call (or ``name = call``) of a dotted name whose arguments run
    nothing else and hand nothing that runs code to the call."""
    call, _ = _call_of(node)
    if call is None or _dunder(call):
        return False
    callee = _dotted(call.func)
    if callee is None or _runs_anything(callee):
        return False
    args = (*call.args, *(k.value for k in call.keywords))
    if any(isinstance(n, _ACTIVE) for part in args for n in ast.walk(part)):
        return False
    return not any(_passes_along(a) for a in args)


_RUNS_ANYTHING = frozenset(
    {
        "__import__", "breakpoint", "compile", "delattr", "eval", "exec", "getattr",
        "globals", "locals", "open", "setattr", "type", "vars",
    }
)  # fmt: skip
# modules whose members reach the operating system; members that run commands
# or change files by name, whatever alias their module was imported as
_OS_MODULES = frozenset(
    {
        "builtins", "ctypes", "importlib", "marshal", "multiprocessing", "nt", "os",
        "pickle", "posix", "pty", "runpy", "shutil", "socket", "subprocess",
    }
)  # fmt: skip
# links of an attribute path that lead to any builtin or module, from any
# library that imported them (pd.io.common.os.sys.modules['builtins'].eval)
_REACHED_THROUGH = (_RUNS_ANYTHING - {"compile", "open", "type"}) | _OS_MODULES | {"sys", "modules"}
_ACTS_WHEN_CALLED = re.compile(
    r"system|popen|Popen|startfile|spawn\w*|exec\w*|fork\w*|kill\w*|call|check_call"
    r"|check_output|run|getoutput|getstatusoutput|remove\w*|unlink|rmtree|rmdir|rename"
    r"|replace|chmod|chown|link|symlink|truncate|write\w*|to_\w+|save\w*|dump\w*"
    r"|import_module|load\w*|send\w*|post|put|delete\w*"
)
_HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GLOB_CHARS = re.compile(r"[*?\[{]")
_BUILTINS = frozenset(dir(builtins))


def _literal_head(spec: str) -> str | None:
    """The text a wildcard specifier starts with for certain (``None`` for a
    regular expression or a negation, which promise nothing)."""
    if spec.startswith(("~", "!")):
        return None
    if spec.startswith("="):
        return spec[1:]
    if spec.endswith(":*") and "*" not in spec[:-2]:
        return spec[:-2].rstrip()
    cut = _GLOB_CHARS.search(spec)
    return spec[: cut.start()] if cut else spec


def guarded_names(rules: list[Rule]) -> frozenset[str]:
    """Names an assignment covered by a wildcard rule may not rebind: the
    builtins and the first name of each allow rule."""
    heads = set()
    for rule in rules:
        head = _literal_head(rule.specifier or "")
        m = _HEAD.match(head or "")
        if m:
            heads.add(m.group(0))
    return _BUILTINS | heads


def _speaks_of(spec: str, targets: tuple[str, ...]) -> bool:
    """Whether the rule's literal start assigns exactly ``targets`` (``df = ...``)."""
    head = _literal_head(spec)
    if head is None:
        return False
    squeezed = head.replace(" ", "")
    return squeezed.startswith("".join(f"{t}=" for t in targets)) and not squeezed.startswith(
        "".join(f"{t}=" for t in targets) + "="
    )


def _covers(rule: Rule, stmt: _Statement, lines: Sequence[bytes], guarded: frozenset[str]) -> bool:
    if rule.specifier is None:
        return True
    m = python_matcher(rule.specifier)
    if isinstance(m, Exact) or not is_pattern(rule.specifier):
        return any(m.matches(s) for s in stmt.spellings)
    if not _plain_call(stmt.node):
        return False
    call, targets = _call_of(stmt.node)
    assert call is not None
    if targets and _speaks_of(rule.specifier, targets):
        seen = stmt.spellings  # the rule names the targets itself
    else:
        if any(t in guarded for t in targets):
            return False
        seen = _spell(lines, call)
    if isinstance(m, Not):
        return not any(m.inner.matches(s) for s in seen)
    return any(m.matches(s) for s in seen)


def is_pattern(spec: str) -> bool:
    """A specifier that matches more than one text (a wildcard, a brace list
    or a regex)."""
    if spec.startswith("="):
        return False
    return spec.startswith(("~", "!")) or _GLOB_CHARS.search(spec) is not None


def decide_python(request: PermissionRequest, rules: RuleSet, mode: Mode) -> Decision:
    """Decide a Python-code call (see the module docstring)."""
    source = request.subject
    if source is None or not source.strip():
        return Decision(outcome="ask", reason="the code is missing or empty", layer="input")
    code = read_code(source)
    if isinstance(code, str):
        return Decision(outcome="ask", reason=code, layer="input")
    by = {
        b: [r for r in rules.of(b) if r.covers(request.tool, request.names)]
        for b in ("deny", "ask", "allow")
    }
    for rule in by["deny"]:
        if _hits(rule, code):
            return Decision(
                outcome="deny", reason=f"denied by {rule.text}", layer="deny-rule", rules=(rule,)
            )
    for rule in by["ask"]:
        if _hits(rule, code):
            return Decision(
                outcome="ask", reason=f"{rule.text} asks", layer="ask-rule", rules=(rule,)
            )
    whole = next((r for r in by["allow"] if r.specifier and _whole(r, code)), None)
    if whole is not None:
        return Decision(
            outcome="allow", reason=f"allowed by {whole.text}", layer="allow-rule", rules=(whole,)
        )
    covering: list[Rule] = []
    uncovered: list[str] = []
    guarded = guarded_names(by["allow"])
    for stmt in code.top:
        rule = next((r for r in by["allow"] if _covers(r, stmt, code.lines, guarded)), None)
        if rule is None:
            uncovered.append(stmt.spellings[0] if stmt.spellings else "?")
        elif rule not in covering:
            covering.append(rule)
    if code.top and not uncovered:
        return Decision(
            outcome="allow",
            reason=f"allowed by {', '.join(r.text for r in covering)}",
            layer="allow-rule",
            rules=tuple(covering),
        )
    if mode in LENIENT:
        return Decision(outcome="allow", reason=f"{mode} mode", layer="mode")
    shown = ", ".join(f"`{u.splitlines()[0][:80]}`" for u in uncovered[:3]) or "the code"
    return Decision(
        outcome="ask",
        reason=f"{request.tool} runs code in the notebook; no rule allows {shown} ({mode} mode)",
        layer="mode",
    )
