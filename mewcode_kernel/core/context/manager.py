"""``ContextManager``: what the agent loop asks before and after each request.

* ``shape_result`` (L1) decides, once, the form of each new tool result;
* ``observe`` records the provider-reported size of the last request (the
  anchor) so ``estimate`` is exact up to it and estimated after;
* ``manage`` (L2) compacts when the next request would pass
  ``compact_at`` of the window, unless the circuit breaker is open
  (``BREAKER_LIMIT`` automatic failures in a row);
* ``compact`` summarises older turns on demand (``/compact``) or on resume.

Thresholds (``ContextPolicy``): compact at 80% of the window, keep the most
recent 25% verbatim (whole turns where possible), offload results over
20,000 characters (or 10% of the window, if smaller).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..conversation import Conversation
from ..errors import ProviderError
from ..events import AgentEvent, CompactTrigger, Notice, PostCompact, PreCompact
from ..messages import ToolResultBlock, ToolUseBlock
from ..providers.base import ModelRequest, Provider, complete
from ..tools.base import FileEffect, Tool
from ..usage import Usage
from .compact import (
    CompactionError,
    choose_split,
    files_touched,
    summary_message,
    summary_request,
    summary_text,
)
from .offload import DEFAULT_OFFLOAD_CHARS, shape_result
from .state import BREAKER_LIMIT, CompactionRecord, ContextState
from .tokens import (
    CHARS_PER_TOKEN,
    MessageEstimates,
    estimate_messages,
    estimate_request,
    estimate_text,
    estimate_tools,
)

__all__ = ["DEFAULT_WINDOW", "ContextManager", "ContextPolicy"]

#: The context window assumed when no provider settings say otherwise.
DEFAULT_WINDOW = 200_000


@dataclass(frozen=True, kw_only=True, slots=True)
class ContextPolicy:
    """When to offload and compact, as shares of the context window."""

    compact_at: float = 0.8
    keep_recent: float = 0.25
    offload_chars: int = DEFAULT_OFFLOAD_CHARS
    offload_window_share: float = 0.1
    summary_max_tokens: int = 8_192
    summary_input_share: float = 0.85


class ContextManager:
    """Context management for one agent: L1 offload, usage anchor, L2 compaction.

    ``state`` is the session's ``ContextState`` (reset with the session);
    ``on_compacted`` runs after a successful compaction (the session rebuilds
    its system prompt there); ``on_usage`` receives what a summary cost;
    ``file_effects`` says which tools read or edit the file named by their
    ``path`` argument (from the tools' metadata), for the summary's file list.
    """

    def __init__(
        self,
        *,
        window: int,
        state: ContextState | None = None,
        policy: ContextPolicy | None = None,
        on_compacted: Callable[[], None] | None = None,
        on_usage: Callable[[Usage], None] | None = None,
        file_effects: Callable[[], Mapping[str, FileEffect]] = dict,
    ) -> None:
        if window < 1:
            raise ValueError("the context window must be positive")
        self.window = window
        self.state = state if state is not None else ContextState()
        self.policy = policy or ContextPolicy()
        self.on_compacted = on_compacted
        self.on_usage = on_usage
        self.file_effects = file_effects
        self._messages = MessageEstimates()  # measured before every request

    # --- thresholds -----------------------------------------------------------

    @property
    def compact_threshold(self) -> int:
        """Tokens past which the next request triggers a compaction."""
        return int(self.window * self.policy.compact_at)

    @property
    def keep_tokens(self) -> int:
        """Tokens of recent messages a compaction keeps verbatim."""
        return int(self.window * self.policy.keep_recent)

    @property
    def offload_threshold(self) -> int:
        """Characters past which a tool result is offloaded."""
        share = int(self.window * CHARS_PER_TOKEN * self.policy.offload_window_share)
        return max(min(self.policy.offload_chars, share), 1_000)

    # --- L1 and accounting ----------------------------------------------------

    def shape_result(
        self,
        call: ToolUseBlock | None,
        result: ToolResultBlock,
        *,
        tool: Tool | None,
        root: Path,
        session_dir: Path | None,
    ) -> ToolResultBlock:
        """The form in which a new tool result of ``tool`` enters the conversation."""
        effect = tool.file_effect if tool is not None else None
        if call is not None and effect is not None and not result.is_error:
            path = call.input.get("path")
            if isinstance(path, str):
                self.state.touch_file(path, effect)
        return shape_result(
            result,
            call,
            reread=tool is not None and tool.large_output == "reread",
            state=self.state,
            threshold=self.offload_threshold,
            root=root,
            session_dir=session_dir,
        )

    def observe(self, usage: Usage, messages: int) -> None:
        """Anchor on a response: its request had ``usage.total_input_tokens``
        and the conversation, now ``messages`` long, grew by its output."""
        if usage.total_input_tokens > 0:
            self.state.set_anchor(usage.total_input_tokens + usage.output_tokens, messages)

    def estimate(self, request: ModelRequest) -> int:
        """Tokens ``request`` will have (see ``measure``)."""
        return self.measure(request)[0]

    def measure(self, request: ModelRequest) -> tuple[int, bool]:
        """``(tokens, anchored)``: the anchor plus an estimate of the messages
        added since, or a whole estimate without a usable anchor. An anchor
        below half the whole estimate is not trusted (a provider or proxy that
        leaves cached tokens out of its count would otherwise stop compaction)."""
        whole = (
            estimate_text(request.system)
            + estimate_tools(request.tools)
            + self._messages(request.messages)
        )
        anchored = self.state.anchor_messages
        if 0 <= anchored <= len(request.messages):
            measured = self.state.anchor_tokens + estimate_messages(request.messages[anchored:])
            if measured * 2 >= whole:
                return measured, True
        return whole, False

    # --- L2 -------------------------------------------------------------------

    async def manage(
        self, provider: Provider, conversation: Conversation, request: ModelRequest
    ) -> AsyncIterator[AgentEvent]:
        """Compact before ``request`` is sent if it would pass the threshold."""
        if self.estimate(request) < self.compact_threshold:
            return
        if self.state.breaker_open:
            if not self.state.breaker_reported:
                self.state.breaker_reported = True
                yield Notice(
                    level="warning",
                    message=f"Automatic compaction failed {BREAKER_LIMIT} times in a row and is "
                    "off for this session; the context is nearly full. Try /compact, or /clear.",
                )
            return
        async for event in self.compact(provider, conversation, request, trigger="auto"):
            yield event

    async def compact(
        self,
        provider: Provider,
        conversation: Conversation,
        request: ModelRequest,
        *,
        trigger: CompactTrigger,
        instructions: str | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Summarise older messages and keep the recent ones. ``request`` is the
        request that would be sent now (its system prompt and tools are reused)."""
        messages = conversation.messages
        before = self.estimate(request)
        yield PreCompact(trigger=trigger, tokens=before, messages=len(messages))
        split = choose_split(messages, self.keep_tokens)
        if split is None:
            for event in self._failed(trigger, before, "there is nothing old enough to summarise"):
                yield event
            return
        head, tail = messages[:split], messages[split:]
        files = files_touched(head, self.state.files, self.file_effects())
        fixed = estimate_text(request.system) + estimate_tools(request.tools)
        max_out = min(self.policy.summary_max_tokens, max(self.window // 8, 256))
        budget = int(self.window * self.policy.summary_input_share) - fixed - max_out
        ask = summary_request(
            request,
            head,
            budget_tokens=budget,
            instructions=instructions,
            files=files,
            max_tokens=max_out,
        )
        usage = Usage()
        try:
            done = await complete(provider, ask)
            usage = done.usage
            summary = summary_text(done)
        except (ProviderError, CompactionError) as exc:
            if self.on_usage is not None and usage != Usage():
                self.on_usage(usage)
            for event in self._failed(trigger, before, str(exc), usage=usage):
                yield event
            return
        if self.on_usage is not None:
            self.on_usage(usage)
        kept = len(tail)
        after_messages = [summary_message(summary, files=files, record={}), *tail]
        after = estimate_request(
            ModelRequest(system=request.system, messages=after_messages, tools=request.tools)
        )
        record = {
            "trigger": trigger,
            "tokens_before": before,
            "tokens_after": after,
            "summarized": split,
            "kept": kept,
        }
        conversation.replace([summary_message(summary, files=files, record=record), *tail])
        self.state.clear_anchor()
        self.state.compact_failures = 0
        self.state.breaker_reported = False
        self.state.compactions.append(
            CompactionRecord(
                trigger=trigger,
                tokens_before=before,
                tokens_after=after,
                summarized_messages=split,
                kept_messages=kept,
            )
        )
        if self.on_compacted is not None:
            self.on_compacted()
        yield Notice(
            level="info",
            message=f"Context compacted ({trigger}): {split} older messages summarised, "
            f"{kept} recent kept; about {before:,} -> {after:,} tokens.",
        )
        yield PostCompact(
            trigger=trigger,
            ok=True,
            tokens_before=before,
            tokens_after=after,
            summarized_messages=split,
            kept_messages=kept,
            summary=summary,
            usage=usage,
        )

    def _failed(
        self, trigger: CompactTrigger, before: int, why: str, *, usage: Usage | None = None
    ) -> list[AgentEvent]:
        """The events of a failed compaction; automatic ones count toward the breaker."""
        if trigger != "manual":
            self.state.compact_failures += 1
        error = f"Compaction failed: {why}."
        return [
            Notice(level="warning", message=error),
            PostCompact(
                trigger=trigger,
                ok=False,
                tokens_before=before,
                tokens_after=before,
                error=error,
                usage=usage or Usage(),
            ),
        ]
