"""``RunPython(...)`` rules: how the permission engine reads Python code for
``run_python`` (the kernel tool), including the ways code tries to slip past
an allow rule or around a deny rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from magics.kernel_tools.errors import ErrorTracker
from magics.kernel_tools.tools import KernelTools
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import Gate, RuleSet
from mewcode_kernel.core.permission.rules import SESSION, RuleError, parse_rule
from mewcode_kernel.core.tools import RunContext, Tool

_IDS = iter(range(1_000_000))


def _run_python() -> Tool:
    tools = KernelTools(shell=object(), errors=ErrorTracker()).tools()
    return next(t for t in tools if t.name == "run_python")


RUN_PYTHON = _run_python()


def _gate(
    allow: tuple[str, ...] = (), deny: tuple[str, ...] = (), ask: tuple[str, ...] = (), **kw: Any
) -> Gate:
    rules = RuleSet()
    for behavior, texts in (("allow", allow), ("deny", deny), ("ask", ask)):
        for text in texts:
            assert rules.add_text(text, behavior, SESSION) is not None, rules.problems  # type: ignore[arg-type]
    return Gate(rules=rules, **kw)


async def _outcome(gate: Gate, code: str, root: Path) -> str:
    call = ToolUseBlock(id=f"call-{next(_IDS)}", name="run_python", input={"code": code})
    return (await gate.check(call, RUN_PYTHON, RunContext(root=root))).outcome


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("print(1)", "allow"),
        ("print (df.shape)", "allow"),
        ("print(df['a'].sum)", "allow"),
        ("print(1)\nprint(2)", "allow"),
        ("print('é', 'ü')\r\nprint(2)", "allow"),  # byte offsets, Windows line ends
        # more code after the allowed statement, on the same line or the next
        ("print(1); import os; os.system('id')", "ask"),
        ("print(1)\nimport os", "ask"),
        # code hidden inside the arguments of the allowed call
        ("print(__import__('os').system('id'))", "ask"),
        ("print(open('/etc/passwd').read())", "ask"),
        ("print((lambda: 1)())", "ask"),
        ("print([x for x in range(3)])", "ask"),
        ("print(x := 5)", "ask"),
        ("print(df.__class__)", "ask"),
        # the allowed call is only part of an expression
        ("print(1) or os.system('id')", "ask"),
        ("print(1) if os.system('id') else 0", "ask"),
        ("[print(1), os.system('id')]", "ask"),
        # a longer name that starts with the same letters
        ("printer(1)", "ask"),
        ("print_all()", "ask"),
        # a function defined around it
        ("def f():\n    print(1)\nf()", "ask"),
        # code that does not parse is never matched
        ("print(1", "ask"),
    ],
)
async def test_a_prefix_allow_rule_covers_plain_calls_only(
    tmp_path: Path, code: str, expected: str
) -> None:
    assert await _outcome(_gate(allow=("RunPython(print:*)",)), code, tmp_path) == expected


@pytest.mark.parametrize(
    "code",
    [
        "os.system('id')",
        "x = os.system('id')",
        "print(os.system('id'))",
        "def f():\n    return os.system('id')",
        "if True:\n    os.system('id')",
        "os.system ('id')",
    ],
)
async def test_a_deny_rule_sees_every_call_at_any_depth(tmp_path: Path, code: str) -> None:
    gate = _gate(allow=("RunPython",), deny=("RunPython(os.system:*)",), mode="bypassPermissions")
    assert await _outcome(gate, code, tmp_path) == "deny"


async def test_deny_and_ask_rules_for_imports_and_statements(tmp_path: Path) -> None:
    gate = _gate(deny=("RunPython(import subprocess)",), ask=("RunPython(del:*)",))
    assert await _outcome(gate, "import subprocess", tmp_path) == "deny"
    assert await _outcome(gate, "x = 1\nif x:\n    import subprocess", tmp_path) == "deny"
    gate.mode = "bypassPermissions"
    assert await _outcome(gate, "del df", tmp_path) == "ask"
    assert await _outcome(gate, "x = 1", tmp_path) == "allow"


async def test_modes_exact_rules_and_read_only_roles(tmp_path: Path) -> None:
    code = "df = df.dropna()\ndf.shape"
    assert await _outcome(_gate(), code, tmp_path) == "ask"
    assert await _outcome(_gate(mode="acceptEdits"), code, tmp_path) == "ask"
    assert await _outcome(_gate(mode="bypassPermissions"), code, tmp_path) == "allow"
    assert await _outcome(_gate(mode="plan"), code, tmp_path) == "deny"
    assert await _outcome(_gate(mode="dontAsk"), code, tmp_path) == "deny"
    assert await _outcome(_gate(read_only=True, mode="bypassPermissions"), code, tmp_path) == "deny"
    # an exact rule names a statement (or the whole code) and nothing more
    exact = _gate(allow=("RunPython(df = df.dropna())", "RunPython(df.shape)"))
    assert await _outcome(exact, code, tmp_path) == "allow"
    assert await _outcome(exact, "df = df.dropna(); os.remove('x')", tmp_path) == "ask"
    whole = _gate(allow=(f"RunPython(={code})",))
    assert await _outcome(whole, code, tmp_path) == "allow"
    assert await _outcome(whole, code + "\nimport os", tmp_path) == "ask"


@pytest.mark.parametrize(
    ("allow", "code", "expected"),
    [
        # the rule's name used as the assigned name, not the callee
        (("RunPython(print:*)",), "print = exec('import os; os.system(1)')", "ask"),
        (("RunPython(print:*)",), "print = getattr(os, 'system')", "ask"),
        (("RunPython(print:*)",), "print=eval('1')", "ask"),
        (("RunPython(print:*)",), "x = print = exec('1')", "ask"),
        (("RunPython(print:*)",), "x = print(df.shape)", "allow"),
        # an allowed call that rebinds a name another rule (or Python) trusts
        (("RunPython(print:*)", "RunPython(getattr:*)"), "print = getattr(os, 'system')", "ask"),
        (("RunPython(getattr:*)",), "open = getattr(os, 'popen')", "ask"),
        (
            ("RunPython(getattr:*)", "RunPython(summary:*)"),
            "summary = getattr(os, 'system')",
            "ask",
        ),
        (("RunPython(getattr:*)",), "f = getattr(df, 'head')", "ask"),  # reaches any name
        # a rule that spells the assignment out means it
        (("RunPython(df = pd.read_csv:*)",), "df = pd.read_csv('data.csv')", "allow"),
        (("RunPython(df = pd.read_csv:*)",), "df = exec('1')", "ask"),
        (("RunPython(df = pd.read_csv:*)",), "pd = pd.read_csv('x')", "ask"),
        # a glob with a brace list is a pattern: plain calls only
        (("RunPython(print({a,b}*)",), "print(b, exec('1'))", "ask"),
        (("RunPython(print({a,b}*)",), "print(a)", "allow"),
    ],
)
async def test_an_assignment_is_matched_by_the_call_it_makes(
    tmp_path: Path, allow: tuple[str, ...], code: str, expected: str
) -> None:
    assert await _outcome(_gate(allow=allow), code, tmp_path) == expected


@pytest.mark.parametrize(
    ("allow", "code", "expected"),
    [
        # a class built with a dunder that runs code, then used
        (("RunPython(type:*)",), "P = type('P', (), {'__class_getitem__': exec})", "ask"),
        (("RunPython(print:*)", "RunPython(type:*)"), "type(P['import os'])", "ask"),
        (("RunPython(type:*)",), "type(df)", "ask"),
        (("RunPython(setattr:*)",), "setattr(df, 'x', 1)", "ask"),
        (("RunPython(vars:*)",), "v = vars()", "ask"),
        (("RunPython(builtins.exec:*)",), "builtins.exec('1')", "ask"),
        (("RunPython(op*)",), "open('/etc/passwd')", "ask"),
        # the callee is not a dotted name
        (("RunPython(?exec*)",), "[exec][0]('1')", "ask"),
        (("RunPython(?'a'*)",), "{'a': exec}['a']('1')", "ask"),
        (("RunPython(df.groupby*)",), "df.groupby('a')['b'].sum()", "ask"),
        # a function handed to the call is a call at a distance
        (("RunPython(sorted:*)",), "sorted(['id'], key=os.system)", "ask"),
        (("RunPython(sorted:*)",), "sorted(['1'], key=exec)", "ask"),
        (("RunPython(sorted:*)",), "sorted(['1'], key=builtins.eval)", "ask"),
        (("RunPython(x = map:*)",), "x = map(sp.call, cmds)", "ask"),
        (("RunPython(x = map:*)",), "x = map(o.system, cmds)", "ask"),
        (("RunPython(max:*)",), "max(paths, key=shutil.rmtree)", "ask"),
        (("RunPython(df.apply:*)",), "df.apply(df.to_csv)", "ask"),
        (("RunPython(print:*)",), "print(*map(exec, code))", "ask"),
        (("RunPython(print:*)",), "print(getattr)", "ask"),
        # a library that imported os, sys or builtins leads to them
        (
            ("RunPython(sorted:*)",),
            "sorted(cmds, key=pd.io.common.os.sys.modules['builtins'].eval)",
            "ask",
        ),
        (("RunPython(sorted:*)",), "sorted(cmds, key=pd.core.common.builtins.eval)", "ask"),
        (("RunPython(sorted:*)",), "sorted(cmds, key=df.eval)", "ask"),
        (
            ("RunPython(x = pd.read_csv:*)",),
            "x = pd.read_csv('data.csv', converters={'c': np.lib.format.pickle.loads})",
            "ask",
        ),
        (("RunPython(print:*)",), "print(np.sys.modules)", "ask"),
        (("RunPython(print:*)",), "print(df, '__class__')", "ask"),
        # what the rules are for still passes
        (("RunPython(sorted:*)",), "sorted(df.columns, key=len)", "allow"),
        (("RunPython(x = map:*)",), "x = map(str.upper, names)", "allow"),
        (("RunPython(print:*)",), "print(df.shape, df['a'].dtype, sep='; ')", "allow"),
        (("RunPython(re.compile:*)",), "pat = re.compile('[a-z]+')", "allow"),
        (("RunPython(Image.open:*)",), "img = Image.open('a.png')", "allow"),
        (("RunPython(=type(df))",), "type(df)", "allow"),
    ],
)
async def test_a_wildcard_rule_never_covers_code_that_reaches_any_name(
    tmp_path: Path, allow: tuple[str, ...], code: str, expected: str
) -> None:
    assert await _outcome(_gate(allow=allow), code, tmp_path) == expected


@pytest.mark.parametrize("name", ["printé", "printΩ", "print٣", "printᵉ", "print_é"])
async def test_a_prefix_rule_ends_only_where_a_python_name_ends(tmp_path: Path, name: str) -> None:
    """Python names take letters and digits beyond ASCII: ``printé`` is another
    function, which the user may have bound to anything."""
    gate = _gate(allow=("RunPython(print:*)",))
    assert await _outcome(gate, f"{name}('x')", tmp_path) == "ask"
    assert await _outcome(gate, "print('é')", tmp_path) == "allow"


@pytest.mark.parametrize(
    "code",
    [
        "df[0]",
        "print(df[df.a > 1])",
        'print(f"{x}")',
        "d = {1: 2}",
        "a * b",
        "print('what?')",
        "~mask",
        "x = 1\nprint(f'{x:>4}')",
    ],
)
async def test_an_always_allow_rule_allows_the_code_it_was_made_from_and_no_more(
    tmp_path: Path, code: str
) -> None:
    """Wildcard characters in code (``*``, ``?``, ``[``, ``{``) would make a
    suggested rule a pattern that misses its own code and matches others."""
    gate = _gate()
    call = ToolUseBlock(id=f"s-{next(_IDS)}", name="run_python", input={"code": code})
    assert (await gate.check(call, RUN_PYTHON, RunContext(root=tmp_path))).outcome == "ask"
    gate.remember(call, RUN_PYTHON)
    assert await _outcome(gate, code, tmp_path) == "allow"
    for other in ("df0", "print(df.a > 1)", 'print(f"x")', "d = 1: 2", "a b", "print('whatX')"):
        assert await _outcome(gate, other, tmp_path) == "ask", (code, gate.session_rules())


async def test_always_allow_suggests_exact_statements(tmp_path: Path) -> None:
    gate = _gate()
    ctx = RunContext(root=tmp_path)
    call = ToolUseBlock(id="c1", name="run_python", input={"code": "df.head()\nlen(df)"})
    assert (await gate.check(call, RUN_PYTHON, ctx)).outcome == "ask"
    gate.remember(call, RUN_PYTHON)
    assert [r.text for r in gate.session_rules()] == ["RunPython(df.head())", "RunPython(len(df))"]
    assert await _outcome(gate, "len(df)", tmp_path) == "allow"
    assert await _outcome(gate, "len(df); import os", tmp_path) == "ask"
    block = ToolUseBlock(id="c2", name="run_python", input={"code": "for x in y:\n    print(x)"})
    await gate.check(block, RUN_PYTHON, ctx)
    gate.remember(block, RUN_PYTHON)
    assert gate.session_rules()[-1].text == "RunPython(=for x in y:\n    print(x))"
    assert await _outcome(gate, "for x in y:\n    print(x)", tmp_path) == "allow"


def test_rules_parse_as_the_python_family() -> None:
    rule = parse_rule("RunPython(df.describe:*)", "allow", SESSION)
    assert rule.family == "python" and rule.specifier == "df.describe:*"
    assert parse_rule("RunPython(*)", "allow", SESSION).specifier is None
    with pytest.raises(RuleError):
        parse_rule("RunPython(:*)", "allow", SESSION)
    with pytest.raises(RuleError):
        parse_rule("RunPython(~[)", "deny", SESSION)
