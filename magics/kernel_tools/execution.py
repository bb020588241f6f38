"""Running the agent's Python code in the user's namespace (``run_python``).

The code runs on the kernel's own thread (the thread of the event loop the
agent turn runs on), in ``shell.user_ns``: what it defines stays there for
the next cell. It is compiled like a cell: a last bare expression is
evaluated and its value reported. Its ``print`` output and stderr are
captured, up to ``MAX_OUTPUT`` characters.

Bounds, on the main thread (where signals arrive; elsewhere there are none):
the run gets ``SIGALRM`` after its timeout, raised as ``RunTimeout``, a
``BaseException`` so that the code's own ``except Exception`` cannot swallow
it; Kernel › Interrupt (``SIGINT``) raises ``KeyboardInterrupt`` inside the
code, whatever it is doing (a loop, a ``time.sleep``), instead of waiting
for the event loop that the code is blocking. The previous handlers come
back when it returns.

The processes the code starts run in the session's OS sandbox when it is
active, with the environment every child process of the session gets; ways
of starting one that cannot be put in the sandbox are refused (see
``children``). The code itself is not confined.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import linecache
import signal
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from mewcode_kernel.core.child_env import ChildEnv

from .cell_outputs import OutputSink, capturing
from .children import Wrapper, confined
from .secret_values import traceback_secrets

__all__ = ["MAX_OUTPUT", "RunResult", "RunTimeout", "run_code"]

MAX_OUTPUT = 20_000
"""Characters of output (stdout and stderr together) a run keeps."""
MAX_VALUE = 4_000
_counter = itertools.count(1)


class RunTimeout(BaseException):
    """The code ran past its time limit."""


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one run produced. ``error``: the formatted traceback of an
    exception the code raised (``None`` when it finished); ``secrets``: the
    secret values its frames held (to mask in the traceback by value)."""

    output: str
    value: str | None
    error: str | None
    interrupted: bool = False
    timed_out: bool = False
    dropped: int = 0
    secrets: tuple[tuple[str, str], ...] = ()
    #: what it output, as a notebook cell's outputs (``cell_outputs``)
    outputs: tuple[dict[str, Any], ...] = ()


def _raise_timeout(signum: int, frame: FrameType | None) -> None:
    raise RunTimeout


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _bounded(timeout: float) -> Iterator[None]:
    """SIGALRM after ``timeout`` seconds and SIGINT as ``KeyboardInterrupt``
    while inside (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old_int = signal.signal(signal.SIGINT, _raise_interrupt)
    old_alrm = signal.signal(signal.SIGALRM, _raise_timeout)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_alrm)
        signal.signal(signal.SIGINT, old_int)


def _user_traceback(exc: BaseException, filename: str) -> str:
    """The traceback from the first frame of the code on (not this module's)."""
    tb: TracebackType | None = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()


def run_code(
    shell: Any,
    code: str,
    *,
    timeout: float,
    limit: int = MAX_OUTPUT,
    sandbox: Wrapper | None = None,
    env: ChildEnv | None = None,
    count: int | None = None,
    name: str = "run_python",
) -> RunResult:
    """Run ``code`` in ``shell.user_ns`` (see the module docstring); the
    processes it starts run in ``sandbox`` when it is active, with the
    environment ``env`` builds (``children``). What it prints and displays
    is captured (``outputs``), never shown in the agent cell; ``count``: the
    execution count its result carries."""
    filename = f"<{name}-{next(_counter)}>"
    sink = OutputSink()
    try:
        tree = ast.parse(code, filename=filename)
    except SyntaxError as exc:
        error = _user_traceback(exc, filename)
        sink.error(type(exc).__name__, str(exc), error.splitlines())
        return RunResult(output="", value=None, error=error, outputs=tuple(sink.outputs))
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    # tracebacks and inspect.getsource read the code from here, as for a cell
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    body = compile(tree, filename, "exec")
    tail = compile(last, filename, "eval") if last is not None else None
    value: str | None = None
    error: str | None = None
    secrets: tuple[tuple[str, str], ...] = ()
    interrupted = timed_out = False
    namespace = shell.user_ns
    try:
        # the sandbox is outermost: the timer is off and the signal handlers are
        # back before the patches come off
        with confined(sandbox, shell, env), capturing(shell, sink), _bounded(timeout):
            exec(body, namespace)
            if tail is not None:
                result = eval(tail, namespace)
                if result is not None:
                    value = repr(result)
                    _publish_result(shell, sink, result, value, count)
    except KeyboardInterrupt:
        interrupted = True
        sink.error("KeyboardInterrupt", "", ["KeyboardInterrupt"])
    except RunTimeout:
        timed_out = True
        sink.error("TimeoutError", f"stopped after {timeout:g} s", [f"stopped after {timeout:g} s"])
    except BaseException as exc:  # the code's own failure is its result, SystemExit included
        error = _user_traceback(exc, filename)
        secrets = tuple(traceback_secrets(exc))
        sink.error(type(exc).__name__, str(exc), error.splitlines())
    if value is not None and len(value) > MAX_VALUE:
        value = value[:MAX_VALUE] + f"… [{len(value) - MAX_VALUE} more characters]"
    text = sink.text()
    return RunResult(
        output=text[:limit],
        value=value,
        error=error,
        interrupted=interrupted,
        timed_out=timed_out,
        dropped=max(0, len(text) - limit) + sink.dropped,
        secrets=secrets,
        outputs=tuple(sink.outputs),
    )


def _publish_result(
    shell: Any, sink: OutputSink, result: Any, value: str, count: int | None
) -> None:
    """The last expression's value as an ``execute_result`` (its rich forms too)."""
    formatter = getattr(shell, "display_formatter", None)
    data: dict[str, Any] = {"text/plain": value}
    metadata: dict[str, Any] = {}
    if formatter is not None:
        try:
            data, metadata = formatter.format(result)
        except Exception:  # a broken _repr_*_ must not lose the result
            pass
    sink.rich("execute_result", dict(data), dict(metadata or {}), count)
