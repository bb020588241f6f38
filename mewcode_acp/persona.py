"""MewCode as a persona in JupyterLab's chat (Jupyter AI 3): the extra
``mewcode[jupyter-ai]`` installs Jupyter AI's ACP client, whose persona
manager finds this class through the ``jupyter_ai.personas`` entry point.

The persona starts ``python -m mewcode_kernel acp`` with this interpreter;
each chat is one MewCode session in the chat file's folder, stored in that
project's ``.mewcode/sessions/`` like a notebook's. Jupyter AI's note about
its notebook MCP tools is left out: MewCode has its own tools, and a
server the client passes starts only in a trusted project.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from jupyter_ai_persona_manager import PersonaDefaults, PersonaRequirementsUnmet

try:
    from jupyter_ai_acp_client.base_acp_persona import BaseAcpPersona
except ImportError as exc:  # the persona manager without Jupyter AI's ACP client
    raise PersonaRequirementsUnmet(
        "The MewCode persona needs Jupyter AI's ACP client: pip install 'mewcode[jupyter-ai]'"
    ) from exc

__all__ = ["AVATAR", "COMMAND", "MewcodeAcpPersona"]

AVATAR = Path(__file__).resolve().parent / "static" / "mewcode.svg"
COMMAND = [sys.executable, "-m", "mewcode_kernel", "acp"]


class MewcodeAcpPersona(BaseAcpPersona):
    """The "MewCode" persona: MewCode's ACP server, one session per chat."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, executable=list(COMMAND), **kwargs)
        self._notebook_guidance_sent = True  # that guidance names tools MewCode has not

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name="MewCode",
            description="MewCode, the coding agent of your notebooks, in the chat.",
            avatar_path=str(AVATAR),
            system_prompt="unused",  # MewCode's own system prompt is used
        )
