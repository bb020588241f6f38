"""Test doubles for MewCode: a scripted model and builders for its replies.

``ScriptedModel`` is a ``Provider`` that plays back a script of replies and
records every request it received, so a test can check both what the agent
did and what the model was shown::

    model = ScriptedModel([
        reply(tool_call("write_file", {"path": "a.txt", "content": "hi"})),
        reply("Done."),
    ])
    ...
    model.assert_all_used()

``mewcode_kernel.testing.wire`` has a local HTTP server speaking the
Anthropic and OpenAI wire formats, for tests through the real SDKs.
"""

from __future__ import annotations

from .scripted import (
    ScriptedModel,
    ScriptError,
    collect,
    reply,
    text,
    thinking,
    tool_call,
)

__all__ = [
    "ScriptError",
    "ScriptedModel",
    "collect",
    "reply",
    "text",
    "thinking",
    "tool_call",
]
