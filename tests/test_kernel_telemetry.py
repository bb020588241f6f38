# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""A ``%%agent`` turn in a real ``mewcode`` kernel, exported over OTLP/HTTP to
a receiver this test starts: the turn, its model requests (GenAI
attributes), its tool calls (who decided), and a subagent's turn under the
``Agent`` call that started it arrive, with their parent links, and no byte
holds the prompt, the answer or the provider key."""

from __future__ import annotations

from pathlib import Path

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import jupyter_path, kernel_env, running_kernel  # noqa: F401  (a fixture)
from tests._otlp import OtlpReceiver
from tests._telemetry import Router, by_name, children, forms_of, one

PROMPT = "Count the pelican invoices in notes.txt"
KEY = "sk-test-anthropic-5a8c1e3b7d9f"


def turns_arrived(receiver: OtlpReceiver) -> bool:
    names = {
        s.attributes.get("mewcode.agent.name") for s in by_name(receiver.spans(), "mewcode.turn")
    }
    return {"main", "Explore"} <= names


def test_an_agent_cell_exports_its_turn_and_its_subagent(
    tmp_path: Path, jupyter_path: Path
) -> None:
    router = Router()
    router.parent.extend(
        [
            reply(text="Reading.", tool_calls=[("read_file", {"path": "notes.txt"})]),
            reply(
                tool_calls=[
                    (
                        "Agent",
                        {
                            "description": "count",
                            "prompt": "Count them",
                            "subagent_type": "Explore",
                        },
                    )
                ]
            ),
            reply(text="There are 3 pelican invoices."),
        ]
    )
    router.child.extend(
        [reply(tool_calls=[("grep", {"pattern": "pelican"})]), reply(text="3 of them")]
    )
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("pelican invoice\n" * 3)
    with ScriptedServer([router] * 10) as server, OtlpReceiver() as receiver:
        (root / ".mewcode.yaml").write_text(
            "default_provider: claude\nproviders:\n  claude:\n    protocol: anthropic\n"
            f"    model: claude-sonnet-4-5\n    base_url: {server.base_url}\n    api_key: {KEY}\n"
        )
        env = kernel_env(tmp_path / "home", **receiver.env())
        with running_kernel(root, env) as kernel:
            cell = kernel.ok(f"%%agent\n{PROMPT}", timeout=120)
            assert cell.markdown[-1] == "There are 3 pelican invoices."
            receiver.wait_for(turns_arrived)
            session_id = cell.provenance[0]["session_id"]
        spans = receiver.spans()
        raw = receiver.raw

    turn = one(spans, "mewcode.turn", **{"mewcode.agent.name": "main"})
    assert turn.parent == "" and turn.attributes["session.id"] == session_id
    assert turn.resource["service.name"] == "mewcode"
    chats = [s for s in children(spans, turn) if s.name == "chat claude-sonnet-4-5"]
    assert len(chats) == 3
    for chat in chats:
        assert chat.attributes["gen_ai.provider.name"] == "anthropic"
        assert chat.attributes["gen_ai.response.model"] == "claude-sonnet-4-5"
        assert chat.attributes["gen_ai.usage.input_tokens"] > 0
    read = one(spans, "mewcode.tool", **{"gen_ai.tool.name": "read_file"})
    assert read.parent == turn.span_id
    assert read.attributes["mewcode.tool.decision"] == "allow"
    agent = one(spans, "mewcode.tool", **{"gen_ai.tool.name": "Agent"})
    assert agent.parent == turn.span_id and agent.attributes["mewcode.subagent.type"] == "Explore"
    child = one(spans, "mewcode.turn", **{"mewcode.agent.name": "Explore"})
    assert child.parent == agent.span_id and child.trace_id == turn.trace_id
    inside = children(spans, child)
    assert sorted(s.name.split()[0] for s in inside) == ["chat", "chat", "mewcode.tool"]
    grep = next(s for s in inside if s.name == "mewcode.tool")
    assert grep.attributes["gen_ai.tool.name"] == "grep"

    for secret in (PROMPT, "pelican", KEY, "Count them", "3 of them"):
        assert not any(form in raw for form in forms_of(secret)), secret
