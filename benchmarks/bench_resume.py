"""Resume benchmark: time ``load_session`` on a 20k-message session.

Run by hand: ``python benchmarks/bench_resume.py [--messages N] [--keep DIR]``.
Prints the best of several loads against the 1 s target as a ratio (< 1 is
within target), plus the cost of one durable append and of a listing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import string
import tempfile
import time
from pathlib import Path

from mewcode_kernel.core.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    assistant,
    user,
)
from mewcode_kernel.core.session import (
    CONVERSATION_FILE,
    SessionStore,
    list_sessions,
    load_session,
)
from mewcode_kernel.core.session._files import encode_message

TARGET_SECONDS = 1.0
_WORDS = [
    "".join(random.Random(i).choices(string.ascii_lowercase, k=random.Random(i).randint(2, 9)))
    for i in range(2000)
]
_TOOLS = ("read_file", "grep", "glob", "edit_file", "bash", "write_file")


def _prose(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
        if rng.random() < 0.08:
            words.append("\n")
    return " ".join(words)


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        indent = "    " * rng.randint(0, 3)
        out.append(f"{i + 1:>6}\t{indent}{_prose(rng, rng.randint(10, 70)).strip()}")
    return "\n".join(out)


def build_messages(count: int, seed: int = 7) -> list[Message]:
    """A realistic mix: prompts, assistant text with tool calls (sometimes
    thinking), tool results from small to large (file reads, grep, bash)."""
    rng = random.Random(seed)
    messages: list[Message] = [user(_prose(rng, 400))]
    call = 0
    while len(messages) < count:
        blocks: list = []
        if rng.random() < 0.3:
            blocks.append(
                ThinkingBlock(thinking=_prose(rng, rng.randint(200, 1500)), signature="s" * 80)
            )
        blocks.append(TextBlock(text=_prose(rng, rng.randint(40, 600))))
        calls = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            call += 1
            name = rng.choice(_TOOLS)
            args: dict = {"path": f"src/pkg/module_{rng.randint(0, 300)}.py"}
            if name == "edit_file":
                args |= {"old_string": _code(rng, 6), "new_string": _code(rng, 8)}
            elif name == "write_file":
                args |= {"content": _code(rng, rng.randint(20, 120))}
            elif name == "bash":
                args = {"command": "pytest -q tests/ -k " + rng.choice(_WORDS)}
            calls.append(ToolUseBlock(id=f"toolu_{call:08d}", name=name, input=args))
        messages.append(assistant(*blocks, *calls))
        results = []
        for c in calls:
            size = rng.choice((2, 10, 40, 80, 150, 300)) if c.name in ("read_file", "bash") else 5
            results.append(
                ToolResultBlock(
                    tool_use_id=c.id, content=_code(rng, size), is_error=rng.random() < 0.05
                )
            )
        messages.append(user(*results))
        if rng.random() < 0.1:
            messages.append(assistant(_prose(rng, rng.randint(100, 1200))))
            messages.append(user(_prose(rng, rng.randint(30, 500))))
    return messages[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the session here and keep it")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        messages = build_messages(args.messages)
        writer = SessionStore.create(root, provider="anthropic", model="claude-sonnet-4-5")
        writer.append(messages[0])  # records the first prompt in meta
        with (writer.path / CONVERSATION_FILE).open("ab") as f:  # bulk, no per-line fsync
            f.writelines(encode_message(m) for m in messages[1:])
            f.flush()
            os.fsync(f.fileno())  # so the timed appends below do not pay for this bulk

        appends = []
        for m in messages[:200]:
            t0 = time.perf_counter()
            writer.append(m)
            appends.append(time.perf_counter() - t0)
        writer.close()
        total = args.messages + len(appends)

        size = (writer.path / CONVERSATION_FILE).stat().st_size
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            loaded = load_session(root, writer.id)
            times.append(time.perf_counter() - t0)
        assert len(loaded.messages) - len(loaded.unsaved) == total
        assert loaded.skipped_lines == 0

        t0 = time.perf_counter()
        [info] = list_sessions(root)
        listing = time.perf_counter() - t0
        assert info.message_count == total

        best = min(times)
        print(f"session: {total} messages, {size / 1e6:.1f} MB")
        print(
            f"load_session: best {best:.3f} s, median {statistics.median(times):.3f} s "
            f"over {args.runs} runs; ratio to the {TARGET_SECONDS:.0f} s target: "
            f"{best / TARGET_SECONDS:.2f}"
        )
        print(
            f"append (write + fsync): median {statistics.median(appends) * 1e3:.2f} ms, "
            f"max {max(appends) * 1e3:.2f} ms"
        )
        print(f"list_sessions (1 session): {listing * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
