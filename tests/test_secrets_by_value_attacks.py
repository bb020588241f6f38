"""Secrets kept out by value, end to end, with real processes: a session
opened as a notebook opens it (``open_session``: the user's config and
hooks, a stdio MCP server, a scripted model on a local server), in the OS
sandbox (real bubblewrap) and without it.

The provider's key sits in a variable whose name says nothing
(``MY_CLAUDE``, read by ``api_key: ${MY_CLAUDE}``), another key in ``LLM``,
a password in ``DB_PASSWORD``, and copies of them in allowlisted variables
(``EXTRA_OPTS``, an ``LC_*`` holding its base64, a proxy URL with the
password), while the user's ``env_allowlist`` names some of them. Then:

* no child process (a ``bash`` command, a hook command, the MCP server,
  ``run_python``'s ``subprocess``/``os.system`` children, with or without
  ``env=``) holds any of them by any name: read from inside with ``env``,
  ``printenv`` and ``/proc/self/environ``;
* the model never receives them through what commands print of a file
  holding them: base64, hex, ``xxd``, ``od``, ``hexdump``, ``rev``,
  ``fold``, halves, Python's encodings;
* no log holds them: the session's conversation and ``meta.json`` (the
  person pasted the key into a prompt), the permission lines, the MCP
  server's log (a server that prints its environment, raw and encoded,
  given the key through its own ``env``), a hook's printed output.
"""

from __future__ import annotations

import base64
import json
import random
import string
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from magics.kernel_tools.errors import ErrorTracker
from magics.kernel_tools.tools import KernelTools, kernel_toolset
from mewcode_kernel.core import AgentSession, open_session
from mewcode_kernel.core.events import HookRan, ToolProgress
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._mcp import NO_SANDBOX, sandbox_works

_RNG = random.Random(424242)
_ALPHABET = string.ascii_letters + string.digits


def _random(prefix: str, n: int) -> str:
    return prefix + "".join(_RNG.choice(_ALPHABET) for _ in range(n))


PLAIN = _random("", 36)  # the provider's key, in MY_CLAUDE: no shape, no name
KEY = _random("sk-ant-api03-", 48)  # in LLM: shaped like a key
PASSWORD = _random("", 18)  # in DB_PASSWORD: named like a secret
SERVER_KEY = _random("sk-ant-api03-srv", 40)  # ANTHROPIC_API_KEY, given to the MCP server
SECRETS = (PLAIN, KEY, PASSWORD, SERVER_KEY)


def forms(secret: str) -> list[str]:
    """What a leak of ``secret`` looks like, independently of the redactor:
    itself, reversed, hex, base64 at each byte offset (the part that only
    depends on it), and each half."""
    data = secret.encode()
    found = [secret, secret[::-1], data.hex(), data.hex().upper()]
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode()
        found.append(encoded[4 : len(encoded) - 4])
    half = -(-len(secret) // 2)
    found += [secret[:half], secret[-half:]]
    return found


def leaks(text: str, secrets: tuple[str, ...] = SECRETS) -> list[str]:
    return [f for s in secrets for f in forms(s) if f in text]


@pytest.fixture
def secrets_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's environment: secrets under names that say nothing, and
    copies of them in variables an allowlist lets through."""
    monkeypatch.setenv("MY_CLAUDE", PLAIN)
    monkeypatch.setenv("LLM", KEY)
    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SERVER_KEY)
    monkeypatch.setenv("EXTRA_OPTS", f"--retries 3 --key {PLAIN}")
    monkeypatch.setenv("LC_IDENTIFICATION", base64.b64encode(PLAIN.encode()).decode())
    monkeypatch.setenv("ftp_proxy", f"http://ann:{PASSWORD}@proxy.invalid:3128")
    monkeypatch.setenv("KEEP_ME", "visible-value")
    monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow")


LEAKY_SERVER = textwrap.dedent(
    """\
    import base64, json, os, sys
    from mcp.server.mcpserver import MCPServer

    # a careless server: its whole environment to stderr, raw and encoded
    for name, value in sorted(os.environ.items()):
        print(f"{name}={value}", file=sys.stderr)
        print(f"{name} b64 {base64.b64encode(value.encode()).decode()}", file=sys.stderr)
        print(f"{name} hex {value.encode().hex()}", file=sys.stderr)
    sys.stderr.flush()
    with open("mcp-env.json", "w") as f:
        json.dump(dict(os.environ), f)

    server = MCPServer("leaky")

    @server.tool()
    def hello() -> str:
        \"\"\"Say hello.\"\"\"
        return "hello"

    server.run()
    """
)


def user_config(home: Path, base_url: str, *, sandboxed: bool, leaky: Path | None) -> None:
    config = {
        "default_provider": "mine",
        "providers": {
            "mine": {
                "protocol": "anthropic",
                "model": "test-model",
                "base_url": base_url,
                "api_key": "${MY_CLAUDE}",
            }
        },
        # naming a secret's variable does not let it through
        "env_allowlist": ["KEEP_ME", "MY_CLAUDE", "LLM", "EXTRA_*"],
        "sandbox": {"enabled": sandboxed},
    }
    if leaky is not None:
        config["mcp_servers"] = {
            "leaky": {
                "command": sys.executable,
                "args": [str(leaky)],
                # the user gives it a key on purpose: it gets it, its log does not
                "env": {"CONFIGURED_KEY": "${ANTHROPIC_API_KEY}"},
            }
        }
    (home / ".mewcode").mkdir(parents=True, exist_ok=True)
    (home / ".mewcode" / "config.yaml").write_text(json.dumps(config))


def hooks(home: Path, command: str) -> None:
    rule = {
        "name": "snoop",
        "event": "UserPromptSubmit",
        "action": {"type": "shell", "command": command},
    }
    (home / ".mewcode" / "hooks.yaml").write_text(json.dumps({"hooks": [rule]}))


@pytest.fixture(params=["sandboxed", "unsandboxed"])
def sandboxed(request: pytest.FixtureRequest, tmp_path: Path) -> bool:
    if request.param == "sandboxed" and not sandbox_works(tmp_path):
        pytest.skip(NO_SANDBOX)
    return request.param == "sandboxed"


def env_files(root: Path, prefix: str) -> dict[str, str]:
    return {
        p.name: p.read_bytes().decode("utf-8", "replace").replace("\0", "\n")
        for p in root.glob(f"{prefix}*")
    }


ENV_DUMP = (
    "env > {p}env.txt; printenv > {p}printenv.txt; cat /proc/self/environ > {p}environ.bin; "
    "sh -c 'cat /proc/$$/environ' > {p}sh-environ.bin; "
    'echo "[$MY_CLAUDE][$LLM][$DB_PASSWORD][$EXTRA_OPTS][$LC_IDENTIFICATION]" > {p}echo.txt'
)


def check_environment(files: dict[str, str], *, allowlisted: bool = True) -> None:
    assert files, "the child wrote nothing"
    for name, text in files.items():
        assert not leaks(text), (name, leaks(text))
        if name.endswith("echo.txt"):
            assert text.strip().replace("[]", "") == "", text
        else:
            assert "PATH=" in text, name
            for withheld in ("MY_CLAUDE=", "LLM=", "DB_PASSWORD=", "EXTRA_OPTS=", "ftp_proxy="):
                assert withheld not in text, (name, withheld)
            assert "LC_IDENTIFICATION=" not in text and "ANTHROPIC_API_KEY=" not in text
            if allowlisted:
                assert "KEEP_ME=visible-value" in text, name


@pytest.mark.usefixtures("secrets_env")
async def test_no_child_process_holds_a_known_secret_by_any_name(
    tmp_path: Path, sandboxed: bool
) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    leaky = tmp_path / "leaky_server.py"
    leaky.write_text(LEAKY_SERVER)
    hooks_dump = ENV_DUMP.format(p="hook-")
    script = [
        reply(tool_calls=[("bash", {"command": ENV_DUMP.format(p="bash-")})]),
        reply(tool_calls=[("run_python", {"code": RUN_PYTHON_CHILDREN})]),
        reply(text="done"),
    ]
    with ScriptedServer(script) as server:
        user_config(home, server.base_url, sandboxed=sandboxed, leaky=leaky)
        (home / ".mewcode").mkdir(exist_ok=True)
        hooks(home, hooks_dump)
        shell = SimpleNamespace(user_ns={"ROOT": str(root)}, user_ns_hidden={})
        kernel = kernel_toolset(KernelTools(shell, ErrorTracker()))
        async with open_session(
            root, home=home, mode="bypassPermissions", toolsets=[kernel]
        ) as session:
            assert session.safety.sandbox.active is sandboxed
            events = await collect(session.run("look around"))
            sent = json.dumps(server.requests)
    for prefix in ("bash-", "hook-", "child-"):
        check_environment(env_files(root, prefix))
    check_environment(env_files(root, "system-"))
    check_environment(env_files(root, "given-"), allowlisted=False)
    # the MCP server: its configured key and the allowlist, nothing else
    server_env = json.loads((root / "mcp-env.json").read_text())
    assert server_env["CONFIGURED_KEY"] == SERVER_KEY
    assert server_env["KEEP_ME"] == "visible-value"
    others = {k: v for k, v in server_env.items() if k != "CONFIGURED_KEY"}
    assert not leaks(json.dumps(others)), leaks(json.dumps(others))
    # ...and what it printed of its environment never reached its log
    log = (root / ".mewcode" / "logs" / "mcp-leaky.log").read_text()
    assert "CONFIGURED_KEY=[REDACTED:" in log and "KEEP_ME=visible-value" in log
    assert not leaks(log), leaks(log)
    assert not leaks(sent), leaks(sent)
    assert not leaks(repr(events)), leaks(repr(events))


RUN_PYTHON_CHILDREN = textwrap.dedent(
    """\
    import os, subprocess
    dump = 'cd {root} && env > {p}env.txt; cat /proc/self/environ > {p}environ.bin'
    subprocess.run(['sh', '-c', dump.format(root=ROOT, p='child-')])
    os.system(dump.format(root=ROOT, p='system-'))
    # the code passes the environment itself: its own copy, and a key under a new name
    given = {**os.environ, 'SMUGGLED': os.environ['MY_CLAUDE'], 'ALSO': os.environ['LLM'][::-1]}
    subprocess.run(['sh', '-c', dump.format(root=ROOT, p='given-')], env=given)
    subprocess.run(['sh', '-c', 'echo "[$SMUGGLED][$ALSO]" > given-echo.txt'], env=given, cwd=ROOT)
    print('ran')
    """
)


@pytest.mark.usefixtures("secrets_env")
async def test_the_model_never_receives_an_encoded_secret(tmp_path: Path, sandboxed: bool) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    # a file in the project holds them, as a .env file would
    (root / ".env").write_text(f"MY_CLAUDE={PLAIN}\nLLM={KEY}\nDB_PASSWORD={PASSWORD}\n")
    commands = [
        "base64 .env",
        "base64 -w0 .env",
        "sed 's/^/x/' .env | base64",
        "xxd .env",
        "xxd -p .env",
        "od -c .env",
        "od -An -tx1 .env",
        "od -x .env",
        "hexdump -C .env",
        "rev .env",
        "fold -w 7 .env",
        "cut -c1-30 .env; cut -c30- .env",
        "tr a-z A-Z < .env",
        "base32 .env",
        "python3 -c \"import base64;print(base64.b64encode(open('.env','rb').read()))\"",
        "python3 -c \"print(list(open('.env','rb').read()))\"",
        "python3 -c \"print(open('.env','rb').read().hex())\"",
        "python3 -c \"import codecs;print(codecs.encode(open('.env').read(),'rot13'))\"",
    ]
    script = [reply(tool_calls=[("bash", {"command": c}) for c in commands]), reply(text="done")]
    with ScriptedServer(script) as server:
        user_config(home, server.base_url, sandboxed=sandboxed, leaky=None)
        async with open_session(root, home=home, mode="bypassPermissions") as session:
            events = await collect(session.run(f"my key is {PLAIN}; keep it safe"))
            sent = json.dumps(server.requests[1]["messages"][-1])  # the tool results
    assert sent.count("[REDACTED:") >= len(commands), sent
    assert not leaks(sent), leaks(sent)
    progress = "".join(e.output for e in events if isinstance(e, ToolProgress))
    assert not leaks(progress), leaks(progress)
    # the session's files: the prompt held the key; the log and meta.json do not
    [folder] = (root / ".mewcode" / "sessions").iterdir()
    for file in folder.rglob("*"):
        if file.is_file():
            text = file.read_text(errors="replace")
            assert not leaks(text), (file.name, leaks(text))
    conversation = (folder / "conversation.jsonl").read_text()
    assert "my key is [REDACTED:" in conversation
    assert '"type":"permission"' in conversation  # the audit lines are there, clean


@pytest.mark.usefixtures("secrets_env")
async def test_a_hooks_printed_output_and_failures_hold_no_secret(tmp_path: Path) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    (root / ".env").write_text(f"{PLAIN}\n{KEY}\n")
    with ScriptedServer([reply(text="done")]) as server:
        user_config(home, server.base_url, sandboxed=False, leaky=None)
        hooks(home, "base64 .env; xxd .env; rev .env; cat .env >&2; exit 1")
        async with open_session(root, home=home) as session:
            events = await collect(session.run("hello"))
            stats = repr(session.hooks.stats if session.hooks else {})
    ran = [e for e in events if isinstance(e, HookRan)]
    assert ran and "[REDACTED:" in ran[0].output
    for text in (repr(events), stats):
        assert not leaks(text), leaks(text)


@pytest.mark.usefixtures("secrets_env")
async def test_a_project_provider_key_is_known_once_the_project_is_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's provider with ``${VAR}`` is ignored until trusted; once
    trusted its key is a known secret like the user's."""
    monkeypatch.delenv("MEWCODE_TRUST_PROJECT", raising=False)
    project_key = _random("", 30)
    monkeypatch.setenv("TEAM_LLM", project_key)
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    (root / ".mewcode.yaml").write_text(
        "providers:\n  team:\n    protocol: openai\n    model: m\n"
        "    base_url: http://127.0.0.1:9/v1\n    api_key: ${TEAM_LLM}\n"
    )
    with ScriptedServer([]) as server:
        user_config(home, server.base_url, sandboxed=False, leaky=None)
        session: AgentSession = open_session(root, home=home)
        encoded = base64.b64encode(project_key.encode()).decode()
        assert session.safety.redactor.redact(encoded) == encoded
        session.trust_project()
        assert session.safety.redactor.redact(encoded).startswith("[REDACTED:team API key]")
        env = session.safety.child_env.build({"PATH": "/bin", "LANG": project_key[::-1]})
        assert env == {"PATH": "/bin"}
