"""MewCode: a coding agent that lives in Jupyter.

``mewcode_kernel.core`` holds the agent harness (no IPython, no widgets);
``mewcode_kernel.testing`` ships the scripted model and event builders.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
