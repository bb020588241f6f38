"""What runs before every model request costs only the request's new part:
the context manager estimates only the messages it has not seen (same frozen
object, same place), and gives exactly what estimating the whole conversation
gives, through growth, a compaction's new objects, cuts and reorderings; tool
ids already safe for Anthropic skip the regex and map exactly as it would."""

from __future__ import annotations

import random
import re

import pytest

from mewcode_kernel.core.context import tokens
from mewcode_kernel.core.context.tokens import MessageEstimates, estimate_messages
from mewcode_kernel.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from mewcode_kernel.core.providers.anthropic import _wire_id


def turn(i: int) -> list[Message]:
    call = ToolUseBlock(id=f"toolu_{i}", name="read_file", input={"path": f"f{i}.py"})
    return [
        Message(role="assistant", content=[TextBlock(text=f"step {i}" * (i % 7 + 1)), call]),
        Message(
            role="user",
            content=[ToolResultBlock(tool_use_id=f"toolu_{i}", content="x" * (i * 13 % 500))],
        ),
    ]


def test_the_running_estimate_is_the_whole_estimate_whatever_changes() -> None:
    rng = random.Random(23)
    estimates = MessageEstimates()
    messages = [Message(role="user", content=[TextBlock(text="go")])]
    for i in range(300):
        messages += turn(i)
        change = rng.random()
        if change < 0.05:  # a compaction: new objects for the start
            summary = Message(role="user", content=[TextBlock(text=f"summary {i}")])
            messages = [summary, *messages[-10:]]
        elif change < 0.08:  # cut short (a rewind)
            messages = messages[: len(messages) // 2]
        elif change < 0.10:  # the same objects in another order
            messages = messages[1:] + messages[:1]
        elif change < 0.12:  # one message replaced by an equal but new object
            k = rng.randrange(len(messages))
            messages[k] = messages[k].model_copy()
        assert estimates(messages) == estimate_messages(messages)


def test_a_request_estimates_only_its_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[Message] = []
    real = tokens.estimate_message

    def counting(message: Message) -> int:
        counted.append(message)
        return real(message)

    monkeypatch.setattr(tokens, "estimate_message", counting)
    estimates = MessageEstimates()
    messages = [m for i in range(200) for m in turn(i)]
    estimates(messages)
    assert len(counted) == 400
    counted.clear()
    messages += turn(200)
    estimates(messages)
    assert counted == messages[-2:]  # two new messages, not 402


UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@pytest.mark.parametrize(
    "tool_id",
    ["toolu_01ABCxyz", "call-9_z", "", "-", "_", "llm_version:0", "a b", "é", "x١٢", "ａ",
     "toolu\n", "id.with.dots", "ß", "a\x00b", "İ", "toolu_ＡＢ"],
)  # fmt: skip
def test_safe_ids_skip_the_regex_and_map_as_it_would(tool_id: str) -> None:
    assert _wire_id(tool_id) == (UNSAFE.sub("_", tool_id) or "toolu_empty")
