"""The services an agent runs with: ``AgentRuntime``.

A frozen bundle of references, passed in whole when an agent is built: the
provider to stream from, the base run context (root, session folder,
checkpoints), who answers an "ask" (``ApprovalFlow``), the conversation
state, the lifecycle (hooks), context management, the OS sandbox, the
secrets taken out of results and the environment of child processes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..child_env import ChildEnv
from ..context import ContextManager
from ..lifecycle import Lifecycle
from ..providers.base import Provider
from ..redaction import Redactor
from ..sandbox import Sandbox
from ..tools.context import RunContext
from .approval import ApprovalFlow
from .state import ConversationState

__all__ = ["AgentRuntime"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentRuntime:
    """What an agent runs with (see the module docstring). ``context``:
    offload, accounting and compaction (``None``: the history is sent as is);
    ``sandbox``: where tools spawn processes (``None``: none)."""

    provider: Provider
    ctx: RunContext
    approvals: ApprovalFlow = field(default_factory=ApprovalFlow)
    state: ConversationState = field(default_factory=ConversationState)
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    context: ContextManager | None = None
    sandbox: Sandbox | None = None
    redactor: Redactor = field(default_factory=Redactor.from_environment)
    child_env: ChildEnv | None = None

    def environment(self) -> ChildEnv:
        """The environment rule for processes tools start (default: no
        allowlist of the user's, this runtime's secrets)."""
        return self.child_env if self.child_env is not None else ChildEnv(secrets=self.redactor)
