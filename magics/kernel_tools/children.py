"""The processes ``run_python``'s code starts: into the session's OS sandbox,
with the environment every child process of the session gets.

The code itself runs in the kernel's own process (that is the point: the
user's namespace), so it cannot be confined; the processes it starts can.
While one run lasts (``confined``), and only for calls made on the thread
running the code (and threads it starts during the run):

* every ``subprocess.Popen`` (so ``run``, ``call``, ``check_output``,
  ``os.popen``, asyncio's subprocesses, IPython's ``getoutput``) goes through
  ``Sandbox.wrap``, patched once at ``Popen._execute_child``, where the final
  command line is known: a shell string becomes ``["/bin/sh", "-c", cmd]``,
  ``executable=`` replaces ``argv[0]``. The child's environment is built by
  ``core.child_env`` under the session's rule, as ``bash``'s is (the
  allowlist, no known secret by any name): from the kernel's environment, or
  from the code's ``env=``, where what the code set itself (a variable that
  differs from the kernel's) is kept though no allowlist names it, unless it
  holds a secret;
* ``os.system`` and IPython's ``system`` (``!cmd``, which would use pexpect,
  that is ``fork``) run their shell command the same way;
* what cannot be wrapped (``os.fork``/``forkpty``, ``os.exec*``,
  ``os.spawn*``, ``os.posix_spawn[p]``, ``_posixsubprocess.fork_exec`` called
  directly, ``preexec_fn=``, which is Python run in the forked child) raises
  ``PermissionError`` naming the sandbox: refused rather than run unconfined.
  ``multiprocessing`` and ``pty`` are built on these, so they are refused too.

The low-level functions are patched in every module that holds them (``os``
and ``posix``; ``_posixsubprocess`` and ``subprocess``'s alias), so a
reloaded ``subprocess`` finds the guards and is refused rather than escaping.

Without an active sandbox, only the environment is taken care of: the same
calls start their process unwrapped, with the same environment, and nothing
is refused (``os.fork`` and the like then inherit the kernel's environment).

The patches are process-global, so each guard first asks whether the caller
is the run's thread: MCP servers, hooks and warm-up started by other threads
meanwhile are neither wrapped nor refused. Everything is put back when the
run ends (exception, timeout, interrupt included), so the user's own cells
spawn as before.

The limit: the code runs in-process with the kernel's rights. It can undo
these patches, call libc through ``ctypes``, or leave work (a thread, an
IPython event) that spawns after the run ended. The permission ask and the
``RunPython`` allow rules are the boundary for the code; this module keeps
honest code's children (a build, a shell one-liner, a tool it calls) inside
the sandbox that ``bash`` uses.
"""

from __future__ import annotations

import _posixsubprocess
import _thread
import contextlib
import errno
import os
import posix
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mewcode_kernel.core.child_env import ChildEnv

__all__ = ["Wrapper", "confined"]

_SHELL = "/bin/sh"


class Wrapper(Protocol):
    """What ``confined`` needs of a session's ``Sandbox``."""

    @property
    def active(self) -> bool: ...

    def wrap(
        self, argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None
    ) -> list[str]: ...


@dataclass(eq=False)
class _Run:
    sandbox: Wrapper | None  # None: not confined, only the environment is built
    env: ChildEnv
    popen: type[subprocess.Popen[Any]]
    threads: set[int] = field(default_factory=set)


_current: _Run | None = None
_install = threading.Lock()
_permit = threading.local()


def _confining() -> _Run | None:
    """The run whose rules apply to this call: ``None`` off the run's threads,
    and inside the wrapped spawn itself (which starts bubblewrap)."""
    run = _current
    if run is None or threading.get_ident() not in run.threads or getattr(_permit, "on", False):
        return None
    return run


@contextlib.contextmanager
def _permitted() -> Iterator[None]:
    _permit.on = True
    try:
        yield
    finally:
        _permit.on = False


def _refused(what: str) -> PermissionError:
    return PermissionError(
        errno.EPERM,
        f"{what} is refused inside run_python: processes started by run_python's code "
        "run in the OS sandbox (bubblewrap), and this way of starting one cannot be put "
        "there. Use subprocess (run, Popen, check_output) or os.system instead.",
    )


# --- the wrapped spawn -----------------------------------------------------------------


def _command_line(args: Any, executable: Any, shell: bool) -> list[str]:
    """The argv ``Popen`` would execute (its own rules, POSIX)."""
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    if shell:
        argv = [_SHELL, "-c", *argv]
    if executable is not None:
        argv[0] = executable
    return [os.fsdecode(a) for a in argv]


def _check_program(argv: list[str], env: Mapping[Any, Any], cwd: str) -> None:
    """``FileNotFoundError`` as ``Popen`` raises it, which bubblewrap's exit
    status would otherwise hide from code that catches it."""
    program = argv[0]
    if "/" in program:
        where = os.path.join(cwd, program)  # a relative one is found from cwd
        found = os.access(where, os.X_OK) and not os.path.isdir(where)
    else:
        path = next((os.fsdecode(v) for k, v in env.items() if os.fsdecode(k) == "PATH"), None)
        found = shutil.which(program, path=path if path is not None else os.defpath) is not None
    if not found:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def _execute_child_guard(original: Callable[..., Any]) -> Callable[..., Any]:
    def _execute_child(
        self: subprocess.Popen[Any],
        args: Any,
        executable: Any,
        preexec_fn: Any,
        close_fds: bool,
        pass_fds: Any,
        cwd: Any,
        env: Any,
        startupinfo: Any,
        creationflags: int,
        shell: bool,
        *rest: Any,
        **kw: Any,
    ) -> Any:
        run = _confining()
        if run is None:
            return original(
                self, args, executable, preexec_fn, close_fds, pass_fds, cwd, env,
                startupinfo, creationflags, shell, *rest, **kw,
            )  # fmt: skip
        child_env = _environment(run.env, env)
        if run.sandbox is None:
            with _permitted():
                return original(
                    self, args, executable, preexec_fn, close_fds, pass_fds, cwd, child_env,
                    startupinfo, creationflags, shell, *rest, **kw,
                )  # fmt: skip
        if preexec_fn is not None:
            raise _refused("subprocess with preexec_fn (Python code run in the child)")
        argv = _command_line(args, executable, shell)
        where = os.fsdecode(cwd) if cwd is not None else os.getcwd()
        if not shell:
            _check_program(argv, child_env, where)
        wrapped = run.sandbox.wrap(argv, cwd=where)
        with _permitted():
            return original(
                self, wrapped, None, None, close_fds, pass_fds, cwd, child_env,
                startupinfo, creationflags, False, *rest, **kw,
            )  # fmt: skip

    _execute_child.__wrapped__ = original  # type: ignore[attr-defined]
    return _execute_child


def _environment(rule: ChildEnv, env: Mapping[Any, Any] | None) -> dict[Any, Any]:
    """The child's environment: from the kernel's, or from ``env``, keeping
    what the code set itself (not the kernel's own value) unless it is a secret."""
    if env is None:
        return rule.build(os.environ)
    own = [
        name
        for name, value in ((os.fsdecode(k), os.fsdecode(v)) for k, v in env.items())
        if os.environ.get(name) != value
    ]
    return rule.build(env, keep=own)


def _shell_status(run: _Run, command: Any) -> int:
    """Run ``command`` with ``/bin/sh -c`` in the sandbox, the way ``os.system``
    does (inherited stdio); its wait status, as ``os.system`` returns it."""
    code = run.popen([_SHELL, "-c", os.fsdecode(command)]).wait()
    return code << 8 if code >= 0 else -code


def _system_guard(original: Callable[[Any], int]) -> Callable[[Any], int]:
    def system(command: Any) -> int:
        run = _confining()
        if run is None:
            return original(command)
        return _shell_status(run, command)

    system.__wrapped__ = original  # type: ignore[attr-defined]
    return system


def _refusing_guard(original: Callable[..., Any], name: str) -> Callable[..., Any]:
    def refusing(*args: Any, **kwargs: Any) -> Any:
        if _confining() is not None:
            raise _refused(name)
        return original(*args, **kwargs)

    refusing.__wrapped__ = original  # type: ignore[attr-defined]
    refusing.__name__ = getattr(original, "__name__", name)
    return refusing


def _thread_guard(original: Callable[..., Any]) -> Callable[..., Any]:
    """Threads the code starts during the run are confined like its own."""

    def start_thread(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        run = _current
        if run is None or threading.get_ident() not in run.threads:
            return original(function, *args, **kwargs)

        def confined_thread(*a: Any, **k: Any) -> Any:
            ident = threading.get_ident()
            run.threads.add(ident)
            try:
                return function(*a, **k)
            finally:
                run.threads.discard(ident)

        return original(confined_thread, *args, **kwargs)

    start_thread.__wrapped__ = original  # type: ignore[attr-defined]
    return start_thread


# --- IPython's system (``!cmd``) -----------------------------------------------------------


def _ipython_system(shell: Any, original: Callable[[str], Any]) -> Callable[[str], Any]:
    """``shell.system`` for the run: the command through the wrapped ``Popen``
    (IPython's own uses pexpect, which forks), output printed as it comes."""

    def system(cmd: str) -> None:
        run = _confining()
        if run is None:
            return original(cmd)
        if cmd.rstrip().endswith("&"):
            raise OSError("Background processes not supported.")  # as IPython says
        expanded = shell.var_expand(cmd, depth=1)
        with run.popen(
            [_SHELL, "-c", expanded], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line.decode(errors="replace"))
            code = proc.wait()
        shell.user_ns["_exit_code"] = code
        if getattr(shell, "system_raise_on_error", False) and code != 0:
            raise subprocess.CalledProcessError(code, cmd)
        return None

    return system


# --- installing and restoring ------------------------------------------------------------------

_REFUSED_OS = (
    "fork",
    "forkpty",
    "execv",
    "execve",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "execvp",
    "execvpe",
    "spawnv",
    "spawnve",
    "spawnvp",
    "spawnvpe",
    "spawnl",
    "spawnle",
    "spawnlp",
    "spawnlpe",
    "posix_spawn",
    "posix_spawnp",
)


def _original(value: Any) -> Any:
    """What a guard stands for (a guard left over is never saved as the original)."""
    while hasattr(value, "__wrapped__") and getattr(value, "__module__", None) == __name__:
        value = value.__wrapped__
    return value


def _patches(popen: type[subprocess.Popen[Any]], *, confine: bool) -> list[tuple[Any, str, Any]]:
    """(owner, attribute, guard) for everything patched during a run
    (``confine``: the sandbox is active, what cannot be wrapped is refused)."""
    out: list[tuple[Any, str, Any]] = [
        (popen, "_execute_child", _execute_child_guard(_original(popen._execute_child)))
    ]
    for module in (os, posix):
        if hasattr(module, "system"):
            out.append((module, "system", _system_guard(_original(module.system))))
        for name in _REFUSED_OS if confine else ():
            if hasattr(module, name):
                guard = _refusing_guard(_original(getattr(module, name)), f"os.{name}")
                out.append((module, name, guard))
    if confine:
        fork_exec = _refusing_guard(
            _original(_posixsubprocess.fork_exec), "_posixsubprocess.fork_exec"
        )
        out.append((_posixsubprocess, "fork_exec", fork_exec))
        if hasattr(subprocess, "_fork_exec"):  # 3.12+'s alias, imported at load
            out.append((subprocess, "_fork_exec", fork_exec))
    for owner, name in (
        (_thread, "start_new_thread"),
        (_thread, "start_joinable_thread"),  # 3.13+
        (threading, "_start_new_thread"),  # the alias Thread.start calls
        (threading, "_start_joinable_thread"),
    ):
        if getattr(owner, name, None) is not None:
            out.append((owner, name, _thread_guard(_original(getattr(owner, name)))))
    return out


@contextlib.contextmanager
def confined(
    sandbox: Wrapper | None, shell: Any = None, env: ChildEnv | None = None
) -> Iterator[None]:
    """While inside: the calling thread's child processes run in ``sandbox``
    with the environment ``env`` builds (the session's rule; default: the
    secrets read from the environment). Without an active sandbox, only
    their environment is built (the session already said commands run
    unsandboxed). See the module docstring."""
    global _current
    active = sandbox if sandbox is not None and sandbox.active else None
    popen = subprocess.Popen
    with _install:
        if _current is not None:
            raise RuntimeError("run_python's child sandbox is already in place")
        run = _Run(
            sandbox=active, env=env or ChildEnv(), popen=popen, threads={threading.get_ident()}
        )
        saved: list[tuple[Any, str, Any]] = []
        try:
            for owner, name, guard in _patches(popen, confine=active is not None):
                saved.append((owner, name, _original(getattr(owner, name))))
                setattr(owner, name, guard)
            held = _hold_ipython_system(shell)
            _current = run
        except BaseException:
            _restore(saved)
            raise
    try:
        yield
    finally:
        # first: every guard left behind passes through from here on
        _current = None
        with _install:
            _restore(saved)
            _release_ipython_system(shell, held)


def _restore(saved: list[tuple[Any, str, Any]]) -> None:
    for owner, name, original in reversed(saved):
        setattr(owner, name, original)


_NAMES = ("system", "system_piped")


def _hold_ipython_system(shell: Any) -> dict[str, Any] | None:
    """Put the wrapped ``system`` on ``shell`` (instance attributes: the class
    stays as it is); what its ``__dict__`` held before, to give back."""
    if shell is None or not hasattr(shell, "var_expand"):
        return None
    before = {name: shell.__dict__[name] for name in _NAMES if name in shell.__dict__}
    for name in _NAMES:
        setattr(shell, name, _ipython_system(shell, getattr(shell, name)))
    return before


def _release_ipython_system(shell: Any, before: dict[str, Any] | None) -> None:
    if before is None:
        return
    for name in _NAMES:
        if name in before:
            setattr(shell, name, before[name])
        else:
            shell.__dict__.pop(name, None)
