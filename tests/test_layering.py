"""The core must not pull in the UI or provider SDKs outside their modules."""

from __future__ import annotations

import subprocess
import sys

CHECK = r"""
import sys
import mewcode_kernel.core
import mewcode_kernel.core.agent, mewcode_kernel.core.tools, mewcode_kernel.core.session
import mewcode_kernel.core.config, mewcode_kernel.testing
bad = sorted(m for m in sys.modules if m.split(".")[0] in {"IPython", "ipykernel", "ipywidgets", "anthropic", "openai", "mcp", "acp", "mewcode_acp"})
print(",".join(bad))
"""


def test_core_imports_no_ui_and_no_sdk() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core imported: {out.stdout.strip()}"
