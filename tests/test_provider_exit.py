"""A script that used a provider exits at once: the SDK's thousands of objects
are moved out of the shutdown collection (``gc.freeze`` at exit), which took
0.9 s after the answer (see benchmarks/bench_core_start.py for the timing)."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import atexit, gc
# registered first, so it runs last: after the provider's own exit handler
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0, flush=True))
from mewcode_kernel.core.providers.{module} import {cls}
{cls}(name="p", model="m", api_key="sk-test", base_url="http://127.0.0.1:9")
print("frozen before exit:", gc.get_freeze_count() > 0, flush=True)
"""


def test_sdk_objects_are_kept_out_of_the_exit_collection() -> None:
    for module, cls in (("anthropic", "AnthropicProvider"), ("openai", "OpenAIProvider")):
        out = subprocess.run(
            [sys.executable, "-c", CHILD.format(module=module, cls=cls)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        assert "frozen before exit: False" in out  # nothing changes while the script runs
        assert "frozen at exit: True" in out, out
