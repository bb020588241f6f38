"""Share of input tokens that are a cacheable prefix, over a 30-turn scripted
session (by hand): target >= 90%.

Each turn asks about one module; the model reads it with read_file and
answers. The requests the agent sent are serialised with the Anthropic
adapter (``to_anthropic_request``) and fed to a model of the prompt cache
(``mewcode_kernel.testing.cache``): a request reads the longest prefix,
ending at one of its breakpoints, that an earlier request wrote. Shown twice:
with exact breakpoint matches only, and with the service's look-back over
the ~20 blocks before a breakpoint.

    python benchmarks/bench_cache_prefix.py
"""

from __future__ import annotations

import asyncio
import copy
import tempfile
from pathlib import Path

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import ProviderSettings, ResolvedConfig
from mewcode_kernel.core.providers.anthropic import to_anthropic_request
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.testing import ScriptedModel, reply, tool_call
from mewcode_kernel.testing.cache import cache_prefix_share
from mewcode_kernel.testing.scripted import ScriptedReply

TURNS = 30
TARGET = 0.90


def answer(request: ModelRequest) -> ScriptedReply:
    last = request.messages[-1]
    if last.tool_results:
        return reply("The module defines `f`, which returns 1, repeated; nothing else.")
    n = last.content[-1].text.split()[-1]  # type: ignore[union-attr]
    return reply("Let me read it.", tool_call("read_file", {"path": f"pkg/mod{n}.py"}))


async def run(root: Path) -> list[dict]:
    (root / "pkg").mkdir()
    for n in range(TURNS):
        body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(40))
        (root / "pkg" / f"mod{n}.py").write_text(f'"""Module {n}."""\n\n{body}')
    (root / "MEWCODE.md").write_text("Prefer small functions. Run the tests after edits.\n")
    model = ScriptedModel([answer] * (2 * TURNS))
    settings = ProviderSettings(
        name="bench", protocol="anthropic", model="claude-sonnet-4-5", context_window=200_000
    )
    session = AgentSession(
        root,
        config=ResolvedConfig(root=root),
        provider=model,
        settings=settings,
        home=root / "home",
    )
    for n in range(TURNS):
        async for _ in session.run(f"What does module {n} do? It is {n}"):
            pass
    await session.aclose()
    model.assert_all_used()
    return [to_anthropic_request(r, "claude-sonnet-4-5", 16_384) for r in model.requests]


def tail_only(body: dict) -> dict:
    """``body`` with the previous-tail breakpoint removed (the older layout)."""
    messages = copy.deepcopy(body["messages"])
    for message in messages[:-1]:
        for block in message["content"]:
            block.pop("cache_control", None)
    return {**body, "messages": messages}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bodies = asyncio.run(run(Path(tmp)))
    strict = cache_prefix_share(bodies, lookback=0)
    loose = cache_prefix_share(bodies)
    older = cache_prefix_share([tail_only(b) for b in bodies], lookback=0)
    print(f"{TURNS} turns, {len(bodies)} requests, {strict.input_tokens:,} input tokens in all")
    rows = (
        ("exact breakpoints", strict),
        ("with 20-block look-back", loose),
        ("older layout, tail breakpoint only, exact", older),
    )
    for label, stats in rows:
        print(
            f"cacheable prefix ({label}): {stats.cached_tokens:,} tokens = {stats.share:.1%} "
            f"(target {TARGET:.0%}: ratio {stats.share / TARGET:.2f}, >= 1.00 meets it)"
        )


if __name__ == "__main__":
    main()
