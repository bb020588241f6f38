"""The agent-cell controller: one per IPython shell, holding the session that
consecutive agent cells continue; the ``--background`` turns run in that
session's task manager (at most ``tasks.max_running`` at once, default
``MAX_BACKGROUND``, the rest queued) and are recorded in its task table.

An agent cell arrives as ``await run_cell(shell, line, body)`` (``transformer``);
the controller parses, picks the session and hands off: slash commands to
``core.commands``, turns to ``turn.drive_turn``; expected failures become
``AgentCellError``. Imported when the extension loads, it keeps the agent core
out of kernel start-up: the first agent cell imports it.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from .cell import (
    draws_live_widgets,
    for_cell,
    previous_session_note,
    settle_live,
    settle_reverted_cards,
    unavailable_reason,
)
from .errors import AgentCellError, AgentInterrupted, AgentUsageError
from .kernel_tools.errors import ErrorTracker
from .kernel_tools.frontend import FrontendLinks
from .options import AgentCall, AgentOptions, parse_cell
from .starting import StartingLine

if TYPE_CHECKING:
    from mewcode_kernel.core import AgentSession
    from mewcode_kernel.core.events import AgentEvent
    from mewcode_kernel.core.tasks import TaskManager

    from .kernel_tools.tools import KernelTools
    from .render_base import Renderer
    from .tasks_view import TaskBoards
    from .turn import TurnOutcome

__all__ = [
    "KERNEL_SHUTDOWN",
    "MAX_BACKGROUND",
    "AgentController",
    "close_all",
    "controller_for",
    "run_cell",
    "wait_background",
]

#: the default cap on background work (``tasks.max_running`` in config sets it)
MAX_BACKGROUND = 4
"""How many ``--background`` turns run at once; more wait in a queue."""

_controllers: weakref.WeakKeyDictionary[Any, AgentController] = weakref.WeakKeyDictionary()


def controller_for(shell: Any) -> AgentController:
    """The controller of ``shell`` (made on first use)."""
    controller = _controllers.get(shell)
    if controller is None:
        controller = _controllers[shell] = AgentController(shell)
    return controller


async def run_cell(shell: Any, line: str, cell: str | None) -> None:
    """Run one agent cell: ``%%agent LINE`` + ``cell``, or ``%agent LINE`` (``cell`` None)."""
    started_at = time.monotonic()
    try:
        await controller_for(shell).run(line, cell, started_at=started_at)
    except UsageError as exc:
        raise AgentUsageError(str(exc)) from None


async def wait_background(shell: Any = None) -> None:
    """Wait for every ``--background`` turn of ``shell`` (default: the running IPython)."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    await controller_for(shell).wait_background()


#: why background work ends when the kernel does (the kernel cannot tell which)
KERNEL_SHUTDOWN = "the kernel shut down while it ran (stopped, restarted or culled as idle)"


async def close_all(reason: str = KERNEL_SHUTDOWN) -> None:
    """Close every controller's session and background turns (kernel shutdown or
    restart), recording unfinished work as interrupted first; settle live widgets."""
    controllers = list(_controllers.values())
    for controller in controllers:
        controller.interrupt_background(reason)
    settle_live()
    await asyncio.gather(*(c.aclose(reason) for c in controllers))


class AgentController:
    """Runs the agent cells of one shell. The project root is ``MEWCODE_ROOT``,
    else ``KERNEL_WORKING_DIR``, else the working directory at extension load.
    The session is entered when made and closed by ``aclose``; background turns
    use its MCP servers."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.start_dir = Path.cwd()
        self.session: AgentSession | None = None
        self._boards: TaskBoards | None = None
        #: Said once by the first live turn: the session a restart left behind.
        self._previous_note: str | None = None
        self._first_open = True
        self._trust_offered: set[str] = set()  # settings digests the card has shown
        #: the last exception a (non-agent) cell raised, for last_error
        self.errors = ErrorTracker()
        #: the number the running cell shows (``In [N]``), ``None`` if it has none
        self.cell_number: int | None = None
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("pre_run_cell", self._cell_started)
            events.register("post_run_cell", self.errors.post_run_cell)
        self._kernel_tools: KernelTools | None = None
        #: stops reporting the session's background work as the kernel's activity
        self._unwatch: Callable[[], None] | None = None
        #: the notebooks open in front ends with MewCode's extension (known before the first cell)
        self.links = FrontendLinks(self.start_dir)
        kernel = getattr(shell, "kernel", None)
        if kernel is not None:
            self.links.register(kernel)

    # --- one cell ------------------------------------------------------------------

    def _cell_started(self, info: Any) -> None:
        # IPython has already counted the cell when it says it starts: the
        # cell shown as In [N] runs while execution_count is N + 1
        count = getattr(self.shell, "execution_count", None)
        stored = getattr(info, "store_history", False)
        self.cell_number = count - 1 if stored and isinstance(count, int) else None

    async def run(self, line: str, cell: str | None, *, started_at: float | None = None) -> None:
        call = parse_cell(line, cell, self.shell.user_ns)
        options = call.options
        starting = None
        if call.command is None and not options.background:
            if draws_live_widgets(self.shell):
                starting = StartingLine(started_at).show()
        try:
            await self._run(call, starting, started_at)
        finally:
            if starting is not None:
                starting.clear()

    async def _run(
        self, call: AgentCall, starting: StartingLine | None, started_at: float | None
    ) -> None:
        options = call.options
        if options.background:
            if call.command is not None:
                raise UsageError("--background runs a prompt, not a slash command")
            await self._start_background(call)
            return
        if self.session is not None and self.session.session_id is None:
            if unavailable_reason(self.session) is not None:
                # its config may have been fixed since: read it again
                await self.aclose("its session was reopened after a config change")
        if self.session is None:
            # Importing the core and the provider SDK can take seconds on a cold
            # kernel: done off the loop so the "starting…" line keeps ticking,
            # after the kernel's warm-up (if still running) has done most of it.
            from .warmup import finished

            await finished()
            await self._adopt(await asyncio.to_thread(self._open, foreground=True))
        session = await self._foreground_session(options)
        if call.command is not None:
            await self._run_command(session, call)
        else:
            await self._run_turn(session, call, starting=starting, started_at=started_at)

    async def _foreground_session(self, options: AgentOptions) -> AgentSession:
        session = await self._session()
        if options.new or options.resume:
            self._previous_note = None
        if options.new:
            await session.new()
        elif options.resume:
            from mewcode_kernel.core.errors import SessionError

            try:
                loaded = await session.resume(options.resume, fork=options.fork)
            except SessionError as exc:
                raise AgentCellError(f"cannot resume {options.resume!r}: {exc}") from None
            if options.fork:
                print(f"↪ forked session {loaded.id} into {session.session_id}")
            else:
                print(f"↪ resumed session {loaded.id} ({len(loaded.messages)} messages)")
        return session

    async def _session(self) -> AgentSession:
        if self.session is None:
            await self._adopt(self._open(foreground=True))
        assert self.session is not None
        return self.session

    async def _adopt(self, session: AgentSession) -> None:
        """Enter ``session`` (its MCP servers start); consecutive cells continue it."""
        from .activity import watch

        try:
            await session.__aenter__()
        except BaseException:  # e.g. interrupted while its MCP servers start
            await session.aclose()
            raise
        self.session = session
        self._unwatch = watch(session.tasks)

    def interrupt_background(self, reason: str) -> None:
        """Record every unfinished background task as interrupted, and stop it."""
        if self.session is not None:
            self.session.tasks.interrupt_all(reason)

    async def aclose(self, reason: str = KERNEL_SHUTDOWN) -> None:
        """Close the session (its background work ends interrupted, ``reason``)."""
        session, self.session = self.session, None
        unwatch, self._unwatch = self._unwatch, None
        try:
            if session is not None:
                await session.aclose(reason)
        finally:
            if unwatch is not None:
                unwatch()

    def _open(self, *, foreground: bool = False, **kwargs: Any) -> AgentSession:
        """A new session (``foreground``: the one cells continue)."""
        from mewcode_kernel.core import open_session
        from mewcode_kernel.core.errors import MewcodeError
        from mewcode_kernel.core.events import Notice
        from mewcode_kernel.core.locations import locate_root

        if foreground and getattr(self.shell, "kernel", None) is not None:
            from .kernel_tools.tools import kernel_toolset

            kwargs["toolsets"] = [kernel_toolset(self.kernel_tools)]
            kwargs["notebooks"] = self.kernel_tools.notebooks.access
        try:
            located = locate_root(cwd=self.start_dir)
            session = open_session(located.path, **kwargs)
        except (MewcodeError, ValueError) as exc:
            raise AgentCellError(str(exc)) from None
        for problem in located.problems if foreground else ():
            session.notify(Notice(level="warning", message=problem))
        if self._first_open and foreground:
            self._first_open = False
            self._previous_note = previous_session_note(session.root)
        return session

    # --- slash commands ------------------------------------------------------------

    async def _run_command(self, session: AgentSession, call: AgentCall) -> None:
        from mewcode_kernel.core.commands import run_command

        from .turn import headless_setting, pick_renderer

        assert call.command is not None
        result = await run_command(session, call.command)
        settle_reverted_cards()  # a /rewind leaves no live button offering what it did
        if result.error:
            raise AgentCellError(result.markdown)
        renderer, _ = pick_renderer(self.shell, background=False, policy=headless_setting()[1])
        if result.prompt is not None:  # e.g. /<skill> args: its instructions are this turn
            if renderer.shows_widgets:  # a header, not a ▶ that looks like it opens something
                renderer.show_command(replace(result, markdown=f"↳ {result.markdown}"))
                renderer.finish(None)
            else:
                print(f"▶ {result.markdown}")
            await self._run_turn(session, replace(call, prompt=result.prompt, command=None))
            return
        board = result.meta.get("widget") == "tasks"
        tasks = [info.id for info in session.task_records.tasks()] if board else []
        if tasks and renderer.shows_widgets:
            self.boards.show(tasks)  # the live board says it all: no table beside it
        else:
            renderer.show_command(result)
            renderer.finish(None)
        if call.options.out:
            self.shell.user_ns[call.options.out] = (
                result.data if result.data is not None else result.markdown
            )

    # --- turns ---------------------------------------------------------------------

    async def _run_turn(
        self,
        session: AgentSession,
        call: AgentCall,
        *,
        starting: StartingLine | None = None,
        started_at: float | None = None,
    ) -> None:
        from mewcode_kernel.core.errors import MewcodeError

        from .trust import offer_trust
        from .turn import cell_origin, drive_turn

        await offer_trust(self.shell, session, self._trust_offered, starting)
        if starting is not None:  # the footer counts from the cell's start, less any trust wait
            started_at = starting.started_at
        # only the latest turn's "Revert" card stays live (a saved notebook reads
        # without the kernel); earlier turns are named by `/rewind` in their text
        settle_live("revert")
        renderer, warning, answers = self._attach_renderer(background=False)
        info = None
        if renderer.interactive and self._previous_note and session.session_id is None:
            info, self._previous_note = self._previous_note, None
        async with for_cell(session, call.options, answers):
            reason = unavailable_reason(session)
            if reason is not None:
                raise AgentCellError(reason)
            self._turn_context(session, call.prompt)
            try:
                with self.boards.watch(enabled=renderer.shows_widgets):
                    outcome = await drive_turn(
                        session,
                        call.prompt,
                        renderer,
                        max_turns=call.options.max_turns,
                        warning=warning,
                        info=info,
                        started_at=started_at,
                        starting=starting.hand_over() if starting is not None else None,
                        origin=cell_origin(self.shell, self.cell_number),
                    )
            except MewcodeError as exc:  # e.g. the session file cannot be written
                raise AgentCellError(str(exc)) from None
        self._conclude(outcome, call.options.out)

    def _attach_renderer(self, *, background: bool) -> tuple[Renderer, str | None, dict[str, Any]]:
        """The renderer for this run, and who answers approvals through it (card
        or headless policy), as overrides for ``AgentSession.for_cell``."""
        from .turn import approval_handler_for, headless_setting, pick_renderer

        allow, policy = headless_setting()
        renderer, warning = pick_renderer(self.shell, background=background, policy=policy)
        if not background and self._kernel_tools is not None:
            self._kernel_tools.interactive = lambda: renderer.interactive
        answers: dict[str, Any] = {
            "headless_allow": allow,
            "approval_handler": approval_handler_for(renderer),
            # background work asks on the task boards when a person can see them
            "background": self.boards.ask if renderer.shows_widgets else None,
        }
        return renderer, warning, answers

    @property
    def kernel_tools(self) -> KernelTools:
        """The kernel toolset's state: this shell and its last error (made on first use)."""
        if self._kernel_tools is None:
            from .interrupt import cancel_foreground
            from .kernel_tools.tools import KernelTools

            self._kernel_tools = KernelTools(
                self.shell, self.errors, root=self.start_dir, links=self.links
            )
            self._kernel_tools.on_interrupt = cancel_foreground
        return self._kernel_tools

    def _turn_context(self, session: AgentSession, prompt: str) -> None:
        """This turn's notebook context: ``@var`` variables, the last cell's error."""
        if "last_error" in session.tools.names:
            line = self.errors.context_line(self.shell)
            if line is not None:
                session.state.add_reminder(line)
        else:
            self.errors.take_fresh()
        if "@" in prompt:
            from .kernel_tools.mentions import mention_context

            attached = mention_context(self.shell, prompt)
            if attached is not None:
                session.state.add_reminder(attached)

    def _conclude(self, outcome: TurnOutcome, out: str | None) -> None:
        if outcome.cancelled:
            raise AgentInterrupted(
                "the agent turn was cancelled; the conversation so far is kept and the next "
                "agent cell continues it"
            )
        done = outcome.done
        if done is None:
            raise AgentCellError("the turn ended without a result")
        if done.reason == "error":
            raise AgentCellError(done.error or "the turn stopped with an error")
        if out:
            self.shell.user_ns[out] = done.text

    # --- background turns ----------------------------------------------------------

    @property
    def tasks(self) -> TaskManager:
        """The foreground session's task manager (all background work of this shell)."""
        assert self.session is not None, "background work needs the foreground session"
        return self.session.tasks

    @property
    def boards(self) -> TaskBoards:
        """The live task boards of this shell."""
        if self._boards is None:
            from .tasks_view import TaskBoards

            assert self.session is not None, "the task boards need the foreground session"
            self._boards = TaskBoards(self.session.tasks, root=self.session.root)
        return self._boards

    async def _start_background(self, call: AgentCall) -> None:
        options = call.options
        base = await self._session()
        if getattr(base.settings, "protocol", None) == "replay":
            raise AgentCellError(
                "--background needs a live provider: the offline replay plays one recorded "
                "conversation in order"
            )
        name = options.provider or (base.settings.name if base.settings else None)
        model = options.model if options.model or options.provider else base.provider.model
        session = self._open(
            provider=name, model=model, mode=options.mode or base.mode, tasks=base.tasks,
            mcp=base.mcp,
        )  # fmt: skip
        await session.__aenter__()
        if options.resume:
            from mewcode_kernel.core.errors import SessionError

            try:
                await session.resume(options.resume, fork=options.fork)
            except SessionError as exc:
                await session.aclose()
                raise AgentCellError(f"cannot resume {options.resume!r}: {exc}") from None
        renderer, warning, answers = self._attach_renderer(background=True)
        running = base.tasks.running
        info = base.launch_background(
            lambda: self._background_turn(session, call, renderer, warning, answers),
            name=call.prompt.strip().splitlines()[0][:60] if call.prompt.strip() else "turn",
            kind="turn",
            description=call.prompt,
        )
        if info.state == "queued":
            print(
                f"○ queued as {info.id}: {running} background turns are running (the limit is "
                f"{base.tasks.max_running}); it starts when one finishes"
            )
        else:
            print(
                f"◐ started in the background as {info.id} ({running + 1} running); "
                "its transcript appears here as it goes"
            )

    async def _background_turn(
        self,
        session: AgentSession,
        call: AgentCall,
        renderer: Renderer,
        warning: str | None,
        answers: dict[str, Any],
    ) -> AsyncIterator[AgentEvent]:
        """The events of one background turn, drawn into its box as they come."""
        from .turn import TurnOutcome, turn_events

        outcome = TurnOutcome(done=None, cancelled=False)
        try:
            async with session.for_cell(agent=call.options.agent, **answers):
                async for event in turn_events(
                    session,
                    call.prompt,
                    renderer,
                    outcome,
                    max_turns=call.options.max_turns,
                    warning=warning,
                ):
                    yield event
            done = outcome.done
            if done is not None and done.reason == "error":
                renderer.show_error(done.error or "the background turn stopped with an error")
            elif done is not None and call.options.out:
                self.shell.user_ns[call.options.out] = done.text
        except Exception as exc:  # nobody awaits this task: report, never lose it
            renderer.show_error(f"the background turn failed: {type(exc).__name__}: {exc}")
            raise
        finally:
            await session.aclose()

    async def wait_background(self) -> None:
        """Wait until every background turn (queued ones included) has finished."""
        if self.session is not None:
            await self.session.tasks.wait()
