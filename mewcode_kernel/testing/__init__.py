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
Anthropic and OpenAI wire formats, for tests through the real SDKs;
``PROVIDER_ENV_VARS``, ``scrubbed_env`` and ``install_kernelspec``
(``mewcode_kernel.testing.env``) keep the developer's keys, MewCode settings
and Jupyter directories away from tests and the kernels they start.
"""

from __future__ import annotations

from .env import PROVIDER_ENV_VARS, install_kernelspec, scrubbed_env
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
    "PROVIDER_ENV_VARS",
    "ScriptError",
    "ScriptedModel",
    "collect",
    "install_kernelspec",
    "reply",
    "scrubbed_env",
    "text",
    "thinking",
    "tool_call",
]
