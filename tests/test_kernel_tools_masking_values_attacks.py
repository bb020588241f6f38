# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Secret values reach the model through the kernel tools by no route: the
values of a password column, of a secret-named variable, dict key or
attribute, taken out without their name (``df.values``,
``df.password.values``, ``.to_numpy()``, ``.tolist()``, ``np.asarray(df)``,
``df.to_dict()``, ``to_records()``, a renamed Series, an array bound to an
innocuous name), or encoded (base64, hex, reversed, a half, a list of its
bytes) in a variable, in ``run_python``'s output or in an exception's
message and traceback (``f"bad {password}"``, a function's local, a URL
with a token in a ``requests``-style error, a chained exception); in
``notebook_variables``, ``inspect_variable``, ``last_error`` and its
one-line notice, ``run_python`` and ``@name`` mentions. In process with
real pandas and numpy, then in a real kernel driven by a scripted model,
where ``run_python``'s children (``subprocess``, ``os.system``, ``!cmd``)
are also checked for secrets in their environment."""

from __future__ import annotations

import asyncio
import base64
import random
import string
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from magics.kernel_tools.errors import ErrorTracker
from magics.kernel_tools.mentions import mention_context
from magics.kernel_tools.tools import KernelTools
from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.tools import RunContext
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401
from tests._sandboxed import needs_bwrap
from tests.test_kernel_notebook_tools import headless_allow, result_text, turn_context

__all__ = ["headless_allow"]  # the fixture


_RNG = random.Random(99)


def _secret(n: int = 16) -> str:
    return "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(n))


PASSWORDS = [_secret(), _secret(), _secret(20)]
TOKEN = _secret(24)


def forms(secret: str) -> list[str]:
    """What would show ``secret``: itself, reversed, hex, base64, a half (or more)."""
    data = secret.encode()
    found = [secret, secret[::-1], data.hex(), base64.b64encode(data).decode()[:-4]]
    half = -(-len(secret) // 2)
    found += [secret[:half], secret[-half:], repr(list(data))[1:-1][:40]]
    return found


def leaks(text: str, secrets: list[str] = [*PASSWORDS, TOKEN]) -> list[str]:  # noqa: B006
    return [f for s in secrets for f in forms(s) if f in text]


def users() -> Any:
    return pd.DataFrame({"user": ["ann", "bob", "cy"], "password": PASSWORDS})


def tools_for(user_ns: dict[str, Any], errors: ErrorTracker | None = None) -> dict[str, Any]:
    shell = SimpleNamespace(user_ns=user_ns, user_ns_hidden={})
    return {t.name: t for t in KernelTools(shell=shell, errors=errors or ErrorTracker()).tools()}


def call(tool: Any, **args: Any) -> str:
    try:
        return str(asyncio.run(tool.call(RunContext(root=Path.cwd()), args)))
    except ToolError as exc:
        return str(exc)


def model_sees(name: str, value: Any, *paths: str) -> str:
    """notebook_variables, and inspect_variable of ``name`` and of ``paths``."""
    tools = tools_for({"df": users(), name: value})
    texts = [call(tools["notebook_variables"]), call(tools["inspect_variable"], name=name)]
    texts += [call(tools["inspect_variable"], name=p) for p in paths]
    return "\n".join(texts)


# --- 1. the values of a password column, without its name --------------------------------


@dataclass
class Client:
    url: str
    api_key: str


ROUTES = {
    "values": lambda df: df.values,
    "to_numpy": lambda df: df.to_numpy(),
    "asarray": lambda df: np.asarray(df),
    "column to_numpy": lambda df: df["password"].to_numpy(),
    "column values": lambda df: df.password.values,
    "column tolist": lambda df: df.password.tolist(),
    "values tolist": lambda df: df.values.tolist(),
    "iloc column": lambda df: df.iloc[:, 1].values,
    "iloc rows values": lambda df: df.iloc[1:].values,
    "a renamed Series": lambda df: df.password.rename("x"),
    "reindexed by user": lambda df: df.set_index("user").password.values,
    "to_dict": lambda df: df.to_dict(),
    "to_dict list": lambda df: df.to_dict("list"),
    "to_records": lambda df: df.to_records(),
    "zipped": lambda df: list(zip(df.user, df.password, strict=True)),
    "a dict by user": lambda df: dict(zip(df.user, df.password, strict=True)),
    "a column array in an object": lambda df: SimpleNamespace(rows=df.password.values),
    "transposed values": lambda df: df.T.values,
    "a categorical": lambda df: df.password.astype("category").values,
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_password_column_taken_out_without_its_name_is_masked(route: str) -> None:
    text = model_sees("x", ROUTES[route](users()))
    assert not leaks(text), (route, leaks(text))
    assert "ann" in text or "[REDACTED:" in text or "[masked]" in text


@pytest.mark.parametrize(
    "path",
    ["df.password.values", "df.values", "df.T.values", "df.password.array", "df.password.str"],
)
def test_an_attribute_path_through_a_secret_column_is_masked(path: str) -> None:
    text = model_sees("other", 1, path)
    assert not leaks(text), (path, leaks(text))


ENCODED = {
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base64 bytes": lambda s: base64.b64encode(b"pw=" + s.encode()),
    "urlsafe base64": lambda s: base64.urlsafe_b64encode(s.encode()).decode(),
    "hex": lambda s: s.encode().hex(),
    "HEX": lambda s: s.encode().hex().upper(),
    "reversed": lambda s: s[::-1],
    "first half": lambda s: s[: len(s) // 2 + 1],
    "second half": lambda s: s[len(s) // 2 :],
    "bytes list": lambda s: list(s.encode()),
    "in a sentence": lambda s: f"the password is {s}, do not share",
}


@pytest.mark.parametrize("encoding", sorted(ENCODED))
@pytest.mark.parametrize("source", ["column", "variable", "dict key", "attribute"])
def test_an_encoded_copy_of_a_secret_is_masked(encoding: str, source: str) -> None:
    secret = PASSWORDS[0]
    held: dict[str, Any] = {
        "column": {"df": users()},
        "variable": {"db_password": secret},
        "dict key": {"settings": {"host": "db", "password": secret}},
        "attribute": {"client": Client(url="https://x", api_key=secret)},
    }[source]
    tools = tools_for({**held, "blob": ENCODED[encoding](secret)})
    text = call(tools["notebook_variables"]) + call(tools["inspect_variable"], name="blob")
    assert not leaks(text, [secret]), (encoding, source, leaks(text, [secret]))


def test_names_and_ordinary_values_are_still_shown() -> None:
    text = model_sees("x", users().values)
    assert "ann" in text and "bob" in text and "user" in text


# --- 2. exceptions: messages, tracebacks, the one-line notice -------------------------------


def raised(code: str, user_ns: dict[str, Any]) -> tuple[str, str]:
    """``last_error``'s report and the turn's one-line notice after ``code`` raised."""
    errors = ErrorTracker()
    try:
        exec(compile(code, "<cell>", "exec"), user_ns)
    except Exception as exc:
        info = SimpleNamespace(raw_cell=code)
        errors.post_run_cell(SimpleNamespace(info=info, error_in_exec=exc, execution_count=3))
    shell = SimpleNamespace(user_ns=user_ns, user_ns_hidden={})
    tools = {t.name: t for t in KernelTools(shell=shell, errors=errors).tools()}
    report = call(tools["last_error"])
    line = errors.context_line(shell) or ""
    return report, line


CELLS = {
    "an f-string of a variable": 'raise ValueError(f"login failed for {db_password}")',
    "a function's local": textwrap.dedent(
        f"""\
        def connect():
            secret = {TOKEN!r}
            raise ConnectionError("refused: " + secret)
        connect()"""
    ),
    "a local reversed": textwrap.dedent(
        f"""\
        def connect():
            auth_token = {TOKEN!r}
            raise ConnectionError("refused: " + auth_token[::-1])
        connect()"""
    ),
    "base64 in the message": "import base64\nraise KeyError(base64.b64encode(db_password.encode()))",
    "a literal set in the cell": f"password = {TOKEN!r}\nraise ValueError(password[:13])",
    "a requests-style URL": (
        "raise OSError('401 Client Error: Unauthorized for url: "
        f"https://api.example.com/v1/items?access_token={TOKEN}&page=2')"
    ),
    "a query parameter named like a secret": (
        f"raise OSError('403 for url: https://api.example.com/x?db_pass={TOKEN}')"
    ),
    "a password in a URL": f"raise OSError('cannot reach postgres://app:{TOKEN}@db:5432/app')",
    "a value from a frame": 'raise ValueError("bad row: " + str(df.values[1]))',
    "chained": textwrap.dedent(
        """\
        try:
            raise KeyError(df.password[2])
        except KeyError as exc:
            raise RuntimeError("lookup failed") from exc"""
    ),
    "an exception group": textwrap.dedent(
        """\
        raise ExceptionGroup("many", [ValueError(db_password[::-1]), KeyError(df.password[0])])"""
    ),
}


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_last_error_masks_secret_values_in_messages_and_tracebacks(cell: str) -> None:
    report, line = raised(CELLS[cell], {"db_password": PASSWORDS[1], "df": users()})
    assert "Traceback" in report
    assert not leaks(report), (cell, leaks(report))
    assert line and not leaks(line), (cell, leaks(line))


# --- 3. run_python's output and @mentions --------------------------------------------------

PRINTS = {
    "df.values": "print(df.values)",
    "to_json": "df.to_json()",
    "base64": "import base64\nprint(base64.b64encode(df.password[0].encode()))",
    "hex upper": "print(df.password[1].encode().hex().upper())",
    "reversed": "print(df.password[2][::-1])",
    "halves": "p = df.password[0]\nprint(p[:9]); print('...'); print(p[9:])",
    "bytes": "print(list(df.password[1].encode()))",
    "an array": "arr = df.password.to_numpy()\narr",
    "xxd": (
        "import subprocess\n"
        "print(subprocess.run(['xxd'], input=df.password[2].encode(), capture_output=True)"
        ".stdout.decode())"
    ),
    "raising": "raise ValueError('bad ' + df.password[0])",
    "a local in a traceback": (
        "def f():\n    s = df.password[1]\n    raise ValueError(s[::-1])\nf()"
    ),
}


@pytest.mark.parametrize("code", sorted(PRINTS))
def test_run_python_output_masks_secret_values(code: str) -> None:
    tools = tools_for({"df": users()})
    text = call(tools["run_python"], code=PRINTS[code])
    assert not leaks(text), (code, leaks(text))


def test_mentions_mask_secret_values() -> None:
    df = users()
    shell = SimpleNamespace(
        user_ns={"df": df, "arr": df.password.values, "blob": PASSWORDS[0][::-1]},
        user_ns_hidden={},
    )
    context = mention_context(shell, "Look at @arr, @blob and @df")
    assert context is not None and "arr" in context
    assert not leaks(context), leaks(context)


# --- 4. in a real kernel ---------------------------------------------------------------------

KERNEL_PASSWORD = _secret(18)
KERNEL_KEY = "sk-ant-api03-" + _secret(40)


def test_in_a_kernel_no_tool_shows_a_password_column_or_a_secret_in_an_error(
    kernel: Kernel, script: ScriptedServer, headless_allow: None
) -> None:
    kernel.ok(
        "import base64, pandas as pd\n"
        f"accounts = pd.DataFrame({{'user': ['ann', 'bob'], 'password': [{KERNEL_PASSWORD!r}, 'x']}})\n"
        "snapshot = accounts.values\n"
        "encoded = base64.b64encode(accounts.password[0].encode())\n"
    )
    failed = kernel.run(
        "def login(user):\n"
        "    pw = accounts.set_index('user').password[user]\n"
        "    raise PermissionError(f'login refused for {user} with {pw}')\n"
        "login('ann')"
    )
    assert failed.status == "error"
    calls = [
        ("notebook_variables", {}),
        ("inspect_variable", {"name": "accounts.password.values"}),
        ("inspect_variable", {"name": "snapshot"}),
        ("last_error", {}),
        (
            "run_python",
            {"code": "print(accounts.values); print(encoded); accounts.password[0][::-1]"},
        ),
    ]
    script.add(*(reply(tool_calls=[c]) for c in calls), reply(text="Seen."))
    kernel.ok("%%agent --new\nWhat went wrong with @snapshot?")
    received = script.received[-len(calls) - 1 :]
    context = turn_context(received[0])
    assert "login refused" in context and "PermissionError" in context
    texts = [context, *(result_text(r) for r in received[1:])]
    for text in texts:
        assert not leaks(text, [KERNEL_PASSWORD]), leaks(text, [KERNEL_PASSWORD])
    assert "[REDACTED:" in texts[-1] and "ann" in texts[3]


@needs_bwrap
def test_in_a_kernel_run_pythons_children_hold_no_secret_by_any_name(
    kernel: Kernel, script: ScriptedServer, project: Path, headless_allow: None
) -> None:
    kernel.ok(
        "import os\n"
        f"os.environ['LLM'] = {KERNEL_KEY!r}\n"
        f"os.environ['MY_DB_PASSWORD'] = {KERNEL_PASSWORD!r}\n"
        f"os.environ['LANG_EXTRA'] = {KERNEL_KEY[::-1]!r}\n"
    )
    try:
        code = textwrap.dedent(
            """\
            import os, subprocess
            subprocess.run(['sh', '-c', 'env > child-env.txt; cat /proc/self/environ > child-environ.bin'])
            os.system('printenv > system-env.txt')
            get_ipython().system('env > bang-env.txt')
            given = {**os.environ, 'COPY': os.environ['LLM']}
            subprocess.run(['sh', '-c', 'env > given-env.txt'], env=given)
            print('ran')
            """
        )
        script.add(reply(tool_calls=[("run_python", {"code": code})]), reply(text="Done."))
        kernel.ok("%%agent --new\nSpawn some processes.")
        assert "ran" in result_text(script.received[-1])
        names = (
            "child-env.txt",
            "child-environ.bin",
            "system-env.txt",
            "bang-env.txt",
            "given-env.txt",
        )
        for name in names:
            text = (project / name).read_bytes().decode("utf-8", "replace").replace("\0", "\n")
            assert "PATH=" in text, name
            assert not leaks(text, [KERNEL_KEY, KERNEL_PASSWORD]), (name, text)
            assert "LLM=" not in text and "MY_DB_PASSWORD=" not in text and "COPY=" not in text
    finally:
        kernel.ok(
            "for name in ('LLM', 'MY_DB_PASSWORD', 'LANG_EXTRA'):\n    os.environ.pop(name, None)"
        )
        for name in project.glob("*env*"):
            name.unlink()
