"""The warm-up rehearses a request through the provider's SDK, offline: in a
fresh process, for each protocol, the rehearsal streams its canned reply and
nothing reaches the configured server, nor a proxy that the environment names
(HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, any case), nor the network; and a real
turn afterwards still talks to the real server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mewcode_kernel.testing import scrubbed_env
from mewcode_kernel.testing.wire import ScriptedServer, reply

REPO = Path(__file__).resolve().parent.parent

CHILD = """
import asyncio, sys
from pydantic import SecretStr
from mewcode_kernel.core.config import ProviderSettings
from mewcode_kernel.core.providers.factory import build_provider
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.providers.warmup import warm_up
from mewcode_kernel.core.messages import Message, TextBlock

protocol, base_url = sys.argv[1], sys.argv[2]
settings = ProviderSettings(name="p", protocol=protocol, model="m", base_url=base_url,
                            api_key=SecretStr("sk-test-rehearsal"), context_window=100_000)
print("warmed", warm_up(settings), flush=True)
print("ASK", flush=True)
sys.stdin.readline()  # the test checks the servers here

async def real_turn():
    provider = build_provider(settings)
    request = ModelRequest(system="s", messages=[Message(role="user", content=[TextBlock(text="hi")])])
    async for event in provider.stream(request):
        if event.kind == "response_done":
            print("answer", event.message.content[0].text, flush=True)

asyncio.run(real_turn())
"""


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_the_rehearsal_sends_nothing_anywhere(protocol: str) -> None:
    with ScriptedServer([reply(text="real")]) as model, ScriptedServer() as proxy:
        base = model.base_url if protocol == "anthropic" else model.openai_base_url
        proxies = {
            name: proxy.base_url
            for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy")
        }
        # the real turn must reach the model directly, as a user's NO_PROXY would say
        env = scrubbed_env(**proxies, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        env["PYTHONPATH"] = str(REPO)
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, protocol, base],
            cwd=REPO, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stdin is not None
        warmed = proc.stdout.readline()
        assert proc.stdout.readline() == "ASK\n", proc.stderr.read() if proc.stderr else ""
        assert warmed == f"warmed mewcode_kernel.core.providers.{protocol}\n"
        assert model.received == [] and proxy.received == []  # the rehearsal stayed inside
        proc.stdin.write("go\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert out == "answer real\n"  # the real client, made afterwards, is the real one
        assert len(model.received) == 1 and proxy.received == []
        assert "rehearsal" not in str(model.requests[0])
