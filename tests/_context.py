"""Helpers for the context tests: a session over a scripted model that
answers summary requests, and checks on the requests it received."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import ProviderSettings, ResolvedConfig
from mewcode_kernel.core.context import ContextPolicy
from mewcode_kernel.core.context.compact import SUMMARY_INSTRUCTIONS
from mewcode_kernel.core.messages import Message
from mewcode_kernel.core.providers.anthropic import to_anthropic_request
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.tools import RunContext, ToolRegistry, builtin_tools, tool
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import ScriptedModel
from mewcode_kernel.testing.scripted import ScriptedReply, reply

SUMMARY = (
    "## Goal\nKeep answering tasks.\n## Files touched\nnone\n## Decisions\nnone\n"
    "## Errors and fixes\nnone\n## Open work\nthe next task"
)


def big_output(n: int, size: int = 40_000) -> str:
    """A distinct, large tool output for call ``n``."""
    line = f"output {n}: " + "abcdefghij" * 7 + "\n"
    return (line * (size // len(line) + 1))[:size]


@tool(read_only=True, kind="read")
async def big(ctx: RunContext, n: int) -> str:
    """Produce a large output."""
    return big_output(n)


def wire_tokens(request: ModelRequest) -> int:
    """What a provider would report: the serialised Anthropic body / 4."""
    body = to_anthropic_request(request, "m", 1024)
    return len(json.dumps(body, ensure_ascii=False)) // 4


def is_summary_request(request: ModelRequest) -> bool:
    last = request.messages[-1]
    return last.role == "user" and last.text.startswith(SUMMARY_INSTRUCTIONS[:60])


def responder(
    on_prompt: Callable[[ModelRequest, str], ScriptedReply],
    on_results: Callable[[ModelRequest], ScriptedReply] | None = None,
    summary: str = SUMMARY,
) -> Callable[[ModelRequest], ScriptedReply]:
    """A script entry: summaries for summary requests, else ``on_prompt``
    (given the newest prompt text) or ``on_results`` after tool results.
    Usage is reported as the serialised size of the request."""

    def answer(request: ModelRequest) -> ScriptedReply:
        usage = Usage(input_tokens=wire_tokens(request), output_tokens=20)
        if is_summary_request(request):
            built = reply(summary)
        elif request.messages[-1].tool_results and on_results is not None:
            built = on_results(request)
        elif request.messages[-1].tool_results:
            built = reply("Done.")
        else:
            built = on_prompt(request, request.messages[-1].content[-1].text)  # type: ignore[union-attr]
        return ScriptedReply(blocks=built.blocks, stop_reason=built.stop_reason, usage=usage)

    return answer


def scripted(entry: Callable[[ModelRequest], ScriptedReply], n: int = 2_000) -> ScriptedModel:
    return ScriptedModel([entry] * n)


def make_session(
    root: Path,
    model: ScriptedModel,
    *,
    window: int = 200_000,
    home: Path | None = None,
    policy: ContextPolicy | None = None,
) -> AgentSession:
    settings = ProviderSettings(
        name="scripted", protocol="anthropic", model="scripted-1", context_window=window
    )
    return AgentSession(
        root,
        config=ResolvedConfig(root=root),
        provider=model,
        settings=settings,
        tools=ToolRegistry([*builtin_tools(), big]),
        home=home if home is not None else root / "home",
        context_policy=policy,
    )


def check_well_formed(messages: list[Message]) -> None:
    """Valid for the Messages API once same-role messages are merged: starts
    with the user, roles alternate, every call answered right after, no
    result without its call."""
    assert messages and messages[0].role == "user"
    merged: list[tuple[str, list]] = []
    for m in messages:
        if merged and merged[-1][0] == m.role:
            merged[-1][1].extend(m.content)
        else:
            merged.append((m.role, list(m.content)))
    for i, (role, blocks) in enumerate(merged):
        calls = [b.id for b in blocks if b.type == "tool_use"]
        results = [b.tool_use_id for b in blocks if b.type == "tool_result"]
        if role == "assistant" and calls:
            assert i + 1 < len(merged), "a dangling tool call"
            answered = [b.tool_use_id for b in merged[i + 1][1] if b.type == "tool_result"]
            assert sorted(answered) == sorted(calls)
        if results:
            assert role == "user" and i > 0
            asked = [b.id for b in merged[i - 1][1] if b.type == "tool_use"]
            assert sorted(asked) == sorted(results), "a result without its call"
