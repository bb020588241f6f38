"""Secret values never reach the model, the session file or what the cell
shows: a key printed by a command (the parent's environ, ``env``, a config
file) is replaced in the tool result and in its streamed output, in one
place for every tool."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from magics.render_text import TextRenderer
from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.config import SandboxSettings, load_config
from mewcode_kernel.core.events import ToolProgress
from mewcode_kernel.core.redaction import Redactor, looks_secret
from mewcode_kernel.core.sandbox import Sandbox, SandboxSupport
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

KEY = "sk-ant-api03-0123456789abcdefXYZ"
TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvw"
PASSWORD = "correct-horse-battery"
CONFIG_KEY = "sk-config-file-key-0123456789"


def test_secret_names_and_values() -> None:
    assert looks_secret("ANTHROPIC_API_KEY") and looks_secret("GH_TOKEN")
    assert looks_secret("DB_PASSWORD") and looks_secret("AWS_SECRET_ACCESS_KEY")
    assert not looks_secret("PATH") and not looks_secret("SSH_KEY_PATH")
    r = Redactor({"A_TOKEN": "abcdefgh12", "SHORT_KEY": "abc", "B_KEY": "abcdefgh12345"})
    assert r.redact("x abcdefgh12345 y abcdefgh12 abc") == (
        "x [REDACTED:B_KEY] y [REDACTED:A_TOKEN] abc"
    )


def test_a_secret_split_across_chunks_is_caught() -> None:
    stream = Redactor({"K_TOKEN": "supersecretvalue"}).stream()
    shown = [stream.feed(c) for c in ("one super", "secr", "etvalue two sup", "er")]
    shown.append(stream.flush())
    assert "".join(shown) == "one [REDACTED:K_TOKEN] two super"
    assert "supersecretvalue" not in "".join(shown[:2])


@pytest.fixture
def secrets_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("DB_PASSWORD", PASSWORD)
    # whatever merely asks runs: the redaction, not the checks, is under test
    monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow")


@pytest.fixture
def kernel_like() -> Iterator[int]:
    """A process started with the key in its environment, as the kernel is:
    what ``cat /proc/$PPID/environ`` reads from a command the kernel runs
    (this test process got its variables after it started)."""
    env = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": KEY}
    proc = subprocess.Popen(["sleep", "60"], env=env)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.usefixtures("secrets_env", "trusted_projects")
async def test_printed_keys_never_reach_model_log_or_cell(tmp_path: Path, kernel_like: int) -> None:
    (tmp_path / ".mewcode.yaml").write_text(
        f"providers:\n  other: {{protocol: openai, model: m, api_key: {CONFIG_KEY}}}\n"
    )
    commands = [
        f"cat /proc/{kernel_like}/environ | tr '\\0' '\\n'",
        "env",
        'echo "token=$GITHUB_TOKEN pw=$DB_PASSWORD"',
        "cat .mewcode.yaml",
    ]
    model = ScriptedModel(
        [reply(*(tool_call("bash", {"command": c}) for c in commands)), reply("done")]
    )
    session = AgentSession(
        tmp_path,
        config=load_config(tmp_path, home=tmp_path / "home", env={}),
        provider=model,
        mode="bypassPermissions",
        home=tmp_path / "home",
        # unsandboxed: the command's parent is this process, whose environ holds the key
        sandbox=Sandbox(tmp_path, SandboxSettings(), support=SandboxSupport(available=False)),
    )
    events = await collect(session.run("show me the environment"))
    shown: list[str] = []
    renderer = TextRenderer(display=lambda *a, **k: shown.append(repr(a)), write=shown.append)
    renderer.start(prompt="", provider_label="scripted", session_id=None)
    for event in events:
        renderer.on_event(event)
    renderer.finish(None)
    sent = json.dumps([m.model_dump() for m in model.requests[1].messages])
    [log] = (tmp_path / ".mewcode" / "sessions").glob("*/conversation.jsonl")
    places = {"model": sent, "session file": log.read_text(), "cell": "".join(shown)}
    places["events"] = repr(events)
    for where, text in places.items():
        for secret in (KEY, TOKEN, PASSWORD, CONFIG_KEY):
            assert secret not in text, f"{secret[:8]}… reached the {where}"
    results = [r.content for r in model.requests[1].messages[-1].tool_results]
    assert "[REDACTED:ANTHROPIC_API_KEY]" in results[0]
    assert "GITHUB_TOKEN" not in results[1]  # a command's environment does not hold it at all
    # the command never had them: its environment holds no secret by any name
    assert results[2].startswith("token= pw=")
    assert "[REDACTED:other API key]" in results[3]
    assert any(isinstance(e, ToolProgress) and "[REDACTED:" in e.output for e in events)
