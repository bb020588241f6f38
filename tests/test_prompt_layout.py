"""The cache-stable prompt layout: a byte-stable system prompt holding the
instruction files and memory, per-turn context on the user side, cache
breakpoints, and replays that ignore what the environment block says."""

from __future__ import annotations

import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import ReplayMismatch
from mewcode_kernel.core.events import Notice
from mewcode_kernel.core.messages import assistant, user
from mewcode_kernel.core.prompt import (
    ENV_OPEN,
    gather_environment,
    mask_environment,
    prompt_text,
    render_environment,
    turn_message,
)
from mewcode_kernel.core.prompt.environment import idle_note
from mewcode_kernel.core.prompt.system import BASE_INSTRUCTIONS, TOOL_GUIDANCE
from mewcode_kernel.core.providers._retry import RetryPolicy
from mewcode_kernel.core.providers.anthropic import AnthropicProvider, to_anthropic_request
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.providers.recording.replay import ReplayProvider, make_http_client
from mewcode_kernel.testing import collect, reply, tool_call
from mewcode_kernel.testing.cache import cache_prefix_share
from mewcode_kernel.testing.wire import ScriptedServer
from mewcode_kernel.testing.wire import reply as wire_reply
from tests._context import make_session, responder, scripted


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


# --- the system prompt ---------------------------------------------------------------


async def test_system_prompt_and_tools_are_identical_across_a_session(tmp_path: Path) -> None:
    (tmp_path / "MEWCODE.md").write_text("Use tabs.\n")
    (tmp_path / "a.txt").write_text("alpha\n")
    model = scripted(
        responder(
            lambda r, p: reply(tool_call("read_file", {"path": "a.txt"})),
            lambda r: reply("It says alpha."),
        )
    )
    session = make_session(tmp_path, model)
    for prompt in ("what is in a.txt?", "and now?", "once more"):
        await collect(session.run(prompt))
    bodies = [to_anthropic_request(r, "m", 100) for r in model.requests]
    assert len(bodies) == 6
    assert all(b["system"] == bodies[0]["system"] for b in bodies)
    assert all(b["tools"] == bodies[0]["tools"] for b in bodies)
    system = bodies[0]["system"][0]["text"]
    assert system.startswith(BASE_INSTRUCTIONS + "\n\n" + TOOL_GUIDANCE)
    assert "## MEWCODE.md\n\nUse tabs." in system
    assert "date:" not in system and str(tmp_path) not in system


async def test_each_turn_carries_its_environment_on_the_user_side(tmp_path: Path) -> None:
    model = scripted(responder(lambda r, p: reply("ok")))
    session = make_session(tmp_path, model)
    await collect(session.run("first"))
    await collect(session.run("second"))
    first, second = model.requests
    assert second.messages[: len(first.messages)] == first.messages  # nothing rewritten
    newest = second.messages[-1]
    assert newest.meta == {"context_blocks": 1}
    assert newest.content[0].text.startswith(ENV_OPEN)
    assert f"project root: {tmp_path}" in newest.content[0].text
    assert prompt_text(newest) == "second"
    assert session.conversation.messages[0].meta == {"context_blocks": 1}
    # the session listing shows the user's words, not the context block
    from mewcode_kernel.core.session import list_sessions

    assert list_sessions(tmp_path)[0].first_prompt == "first"


def test_environment_block_in_a_git_repository(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "trunk")
    (tmp_path / "new.py").write_text("x = 1\n")
    env = gather_environment(tmp_path, today=date(2026, 1, 2))
    text = render_environment(env)
    assert "- date: 2026-01-02" in text
    assert "- git branch: trunk" in text
    assert "?? new.py" in text
    assert "not a git repository" in render_environment(gather_environment(tmp_path / "new.py"))


def test_the_per_turn_git_status_runs_no_program_the_repository_names(tmp_path: Path) -> None:
    # A cloned repository's .git/config may name an fsmonitor hook (run by every
    # "git status") and a clean filter (run when a modified file is hashed).
    project, marker = tmp_path / "repo", tmp_path / "ran"
    project.mkdir()
    _git(project, "init", "-q", "-b", "main")
    (project / ".gitattributes").write_text("* filter=evil\n")
    (project / "a.txt").write_text("one\n")
    _git(project, "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    _git(project, "config", "core.fsmonitor", f"touch {marker}; true")
    _git(project, "config", "filter.evil.clean", f"touch {marker}; cat")
    _git(project, "config", "core.hooksPath", str(tmp_path))
    (project / "a.txt").write_text("two\n")
    text = render_environment(gather_environment(project))
    assert "M a.txt" in text and "- git branch: main" in text
    assert not marker.exists()


def test_environment_status_is_capped(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    for n in range(25):
        (tmp_path / f"f{n:02}.txt").write_text("x")
    text = render_environment(gather_environment(tmp_path))
    assert text.count("?? f") == 20 and "... and 5 more" in text


def test_turn_message_and_reminders() -> None:
    message = turn_message(
        "do it", environment="<environment>\nE\n</environment>", reminders=["R1"]
    )
    assert [b.text for b in message.content] == [
        "<environment>\nE\n</environment>",
        "<system-reminder>\nR1\n</system-reminder>",
        "do it",
    ]
    assert prompt_text(message) == "do it"
    assert turn_message("bare").meta == {}
    assert "resumed after 7 hours" in idle_note(timedelta(hours=7))
    assert "3.0 days" in idle_note(timedelta(days=3))


def test_mask_environment_blanks_only_the_block() -> None:
    text = "a <environment>\nroot: /x\ndate: 1\n</environment> b"
    assert mask_environment(text) == "a <environment>…</environment> b"
    assert mask_environment("no block") == "no block"


# --- cache breakpoints -----------------------------------------------------------------


def test_breakpoints_sit_on_the_stable_prefix_and_both_tails() -> None:
    request = ModelRequest(
        system="S",
        messages=[
            user("q1"),
            assistant("a1"),
            user("q2"),
        ],
    )
    body = to_anthropic_request(request, "m", 10)
    marked = [
        (m["role"], b.get("text"))
        for m in body["messages"]
        for b in m["content"]
        if "cache_control" in b
    ]
    assert marked == [("user", "q1"), ("user", "q2")]
    assert "cache_control" in body["system"][0]


async def test_thirty_turns_reach_the_cache_target(tmp_path: Path) -> None:
    for n in range(30):
        (tmp_path / f"m{n}.py").write_text(f"# module {n}\n" + "def f():\n    return 1\n" * 60)
    model = scripted(
        responder(
            lambda r, p: reply(
                "Looking.", tool_call("read_file", {"path": f"m{p.split()[-1]}.py"})
            ),
            lambda r: reply("Read it."),
        )
    )
    session = make_session(tmp_path, model)
    for n in range(30):
        await collect(session.run(f"read module {n}"))
    bodies = [to_anthropic_request(r, "m", 100) for r in model.requests]
    strict = cache_prefix_share(bodies, lookback=0)
    assert strict.share >= 0.9, strict.share
    assert cache_prefix_share(bodies).share >= strict.share


# --- replays ignore the environment ------------------------------------------------------


def _request(environment: str, prompt: str = "hi") -> ModelRequest:
    message = user(f"<environment>\n{environment}\n</environment>", prompt)
    return ModelRequest(system="S", messages=[message])


async def test_replay_masks_the_environment_block(tmp_path: Path) -> None:
    cassette = tmp_path / "env.cassette.json"
    async with ScriptedServer([wire_reply(text="hello")]) as server:
        client = make_http_client(record_to=cassette)
        live = AnthropicProvider(
            "live",
            "claude-x",
            "sk-live-key-123456",
            base_url=server.base_url,
            http_client=client,
            retry=RetryPolicy(base_delay=0.0),
        )
        await collect(live.stream(_request("date: 2026-01-01\nroot: /a")))
        await client.aclose()
    async with ReplayProvider.from_cassette(cassette) as replay:
        events = await collect(replay.stream(_request("date: 2027-05-05\nroot: /elsewhere")))
        assert events[-1].message.text == "hello"
    replay = ReplayProvider.from_cassette(cassette)
    with pytest.raises(ReplayMismatch, match="strings differ"):
        await collect(replay.stream(_request("date: 2026-01-01\nroot: /a", prompt="bye")))
    await replay.aclose(check=False)


def test_session_start_warns_about_oversized_instructions(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("x" * 50_000)
    session = make_session(tmp_path, scripted(responder(lambda r, p: reply("ok"))))
    warnings = [n.message for n in session._pending_notices if isinstance(n, Notice)]
    assert any("over the 40,000 limit" in w for w in warnings)
    assert len(session.agent.system_prompt) < 45_000
