"""The process that starts bubblewrap when a command needs more than its
command line: placeholders for protected paths that do not exist yet
(``leases.py``) and the seccomp filter for ``network: off`` (``seccomp.py``).

``Sandbox.wrap`` returns ``[python, launcher.py, LEASES, SECCOMP, N,
(BASE REL KIND) * N, M, PATH * M, bwrap, ...]``, so every spawner keeps
passing a plain command line around (``SECCOMP``: ``-`` for no filter,
``unix`` or ``no-unix``: whether ``AF_UNIX`` stays allowed; the ``M`` paths
are watched, ``planted.py``). The launcher
(the process the spawner waits on and signals):

1. takes the leases and makes the missing placeholders;
2. writes the seccomp program into a pipe (``--seccomp FD``);
3. forks a janitor in a session of its own, out of reach of the process-group
   kill spawners use on timeout;
4. forks bubblewrap with ``--info-fd`` (the janitor learns the PID of the
   sandbox's init) and ``--block-fd`` (the sandbox waits until the janitor
   watches that init, so it can never outlive the janitor's knowledge);
5. waits for bubblewrap (forwarding TERM, INT and HUP to it; if the spawner
   itself dies, bubblewrap is killed), then for the janitor: once the
   sandbox's init is gone, so is every process in it, and the janitor gives
   the leases back, removing the placeholders nobody else relies on (it
   also removes a watched path as soon as one appears, and once more at
   the end, ``planted.py``);
6. exits as bubblewrap did. So a placeholder is gone by the time the
   spawner sees the command end. If the launcher is killed outright
   (SIGKILL), bubblewrap dies with it and the janitor still cleans up, just
   after the spawner saw the end.

Started with ``-E -s -S`` (no environment variable, user site or
site-packages changes how it runs), and it imports only what a bare
interpreter starts fast with: it runs for every command.
"""

from __future__ import annotations

# ``_signal``, the C module: ``signal`` wraps it in enums, which take longer
# to import than everything else the launcher needs
import _signal as signal
import os
import select
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

try:  # in the package
    from .leases import Held, LeaseError, Leases, Placeholder
    from .planted import Watch, remove_planted
    from .seccomp import filter_program, native_arch
except ImportError:  # run as a script: the siblings are top-level modules
    from leases import Held, LeaseError, Leases, Placeholder  # type: ignore[no-redef]
    from planted import Watch, remove_planted  # type: ignore[no-redef]
    from seccomp import filter_program, native_arch  # type: ignore[no-redef]

__all__ = ["LAUNCHER", "launcher_argv", "main"]

LAUNCHER = os.path.abspath(__file__)
_FAILED = 125
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def launcher_argv(
    python: str,
    bwrap_argv: Sequence[str],
    *,
    lease_dir: str,
    placeholders: Sequence[Placeholder],
    seccomp_allow_unix: bool | None,
    watched: Sequence[str] = (),
) -> list[str]:
    """The command line that runs ``bwrap_argv`` through the launcher.
    ``seccomp_allow_unix``: ``None`` for no filter, else whether ``AF_UNIX``
    stays allowed; ``watched``: paths removed if they appear."""
    seccomp = "-" if seccomp_allow_unix is None else ("unix" if seccomp_allow_unix else "no-unix")
    spec = [lease_dir, seccomp, str(len(placeholders))]
    for p in placeholders:
        spec += [p.base, p.rel, p.kind]
    spec += [str(len(watched)), *watched]
    return [python, "-E", "-s", "-S", LAUNCHER, *spec, *bwrap_argv]


def main(argv: Sequence[str]) -> int:
    try:
        leases = Leases(argv[1])
        seccomp = argv[2]
        count = int(argv[3])
        end = 4 + 3 * count
        fields = argv[4:end]
        wanted = [Placeholder(*fields[i : i + 3]) for i in range(0, 3 * count, 3)]
        n_watched = int(argv[end])
        watched = list(argv[end + 1 : end + 1 + n_watched])
        end += 1 + n_watched
        bwrap, rest = argv[end], list(argv[end + 1 :])
        if seccomp not in ("-", "unix", "no-unix") or len(wanted) != count:
            raise ValueError(seccomp)
        if len(watched) != n_watched or not all(os.path.isabs(w) for w in watched):
            raise ValueError("watched paths")
    except (IndexError, ValueError) as exc:
        return _fail(f"bad launch spec: {exc}")
    extra: list[str] = []
    passed: list[int] = []
    if seccomp != "-":
        arch = native_arch()
        if arch is None:
            return _fail(f"no seccomp filter for this architecture ({os.uname().machine})")
        program = filter_program(arch, allow_unix=seccomp == "unix")
        read, write = os.pipe()
        os.write(write, program)  # a few hundred bytes: never more than a pipe holds
        os.close(write)
        extra += ["--seccomp", str(read)]
        passed.append(read)
    try:
        held = leases.acquire(wanted) if wanted else []
    except (OSError, LeaseError) as exc:
        return _fail(f"cannot cover the protected paths: {exc}")
    if not held and not watched:
        _exec_bwrap(bwrap, extra, rest, passed)
    return _supervise(bwrap, extra, rest, passed, leases, held, watched)


def _fail(message: str) -> int:
    print(f"mewcode-sandbox: {message}", file=sys.stderr, flush=True)
    return _FAILED


def _exec_bwrap(bwrap: str, extra: list[str], rest: list[str], passed: list[int]) -> None:
    """Become bubblewrap, with the signal dispositions a shell expects (Python
    ignores SIGPIPE and SIGXFSZ, and ignored signals survive ``exec``)."""
    for fd in passed:
        os.set_inheritable(fd, True)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execv(bwrap, [bwrap, *extra, *rest])
    except OSError as exc:
        print(f"mewcode-sandbox: cannot run {bwrap}: {exc.strerror}", file=sys.stderr, flush=True)
        os._exit(_FAILED)


def _supervise(
    bwrap: str,
    extra: list[str],
    rest: list[str],
    passed: list[int],
    leases: Leases,
    held: list[Held],
    watched: list[str],
) -> int:
    try:
        parent = _parent_watch()
        info_r, info_w = os.pipe()
        block_r, block_w = os.pipe()
        alive_r, alive_w = os.pipe()
        done_r, done_w = os.pipe()
    except (OSError, _SpawnerGone) as exc:
        leases.release(held)
        return _fail(f"cannot start: {exc}")
    janitor = os.fork()
    if janitor == 0:
        code = 0
        try:
            os.setsid()
            for fd in (info_w, block_r, alive_w, done_r, *passed, *([parent] if parent else [])):
                os.close(fd)
            _quiet_stdio()
            _janitor(info_r, block_w, alive_r, done_w, leases, held, watched)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    for fd in (info_r, block_w, alive_r, done_w):
        os.close(fd)
    for h in held:
        os.close(h.fd)  # the janitor holds the leases now
    child = os.fork()
    if child == 0:
        os.close(alive_w)
        os.close(done_r)
        _exec_bwrap(
            bwrap, ["--info-fd", str(info_w), "--block-fd", str(block_r), *extra], rest,
            [info_w, block_r, *passed],
        )  # fmt: skip
    for fd in (info_w, block_r, *passed):
        os.close(fd)
    reaped: list[bool] = []

    def forward(sig: int, _frame: object) -> None:
        if reaped:  # its PID may be another process's by now
            return
        try:
            os.kill(child, sig)
        except ProcessLookupError:
            pass

    for sig in _FORWARDED:
        signal.signal(sig, forward)
    _quiet_stdio()  # bubblewrap has the spawner's pipes; only it may hold them open
    status = _wait_child(child, parent)
    reaped.append(True)
    os.close(alive_w)  # the janitor may clean up now
    try:
        os.read(done_r, 1)  # it said so, or it died (end of file)
    except OSError:
        pass
    try:
        os.waitpid(janitor, 0)
    except ChildProcessError:
        pass
    return _exit_as(status)


class _SpawnerGone(Exception):
    pass


def _parent_watch() -> int | None:
    """A pidfd on the spawner: if it dies, the sandbox must not live on."""
    ppid = os.getppid()
    try:
        fd = os.pidfd_open(ppid)
    except (AttributeError, OSError):
        return None
    if os.getppid() != ppid:  # it died before we looked (the fd may be another process)
        os.close(fd)
        raise _SpawnerGone("the process that started the command is gone")
    return fd


def _wait_child(child: int, parent: int | None) -> int:
    try:
        child_fd = os.pidfd_open(child)
    except (AttributeError, OSError):
        child_fd = None
    if child_fd is not None:
        poller = select.poll()
        poller.register(child_fd, select.POLLIN)
        if parent is not None:
            poller.register(parent, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            if child_fd in ready:
                break
            if parent in ready:
                try:
                    os.kill(child, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                poller.unregister(parent)
    return os.waitpid(child, 0)[1]


def _exit_as(status: int) -> int:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


def _quiet_stdio() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _janitor(
    info_r: int,
    block_w: int,
    alive_r: int,
    done_w: int,
    leases: Leases,
    held: list[Held],
    watched: list[str],
) -> None:
    """Learn the sandbox's init, let the sandbox start, remove watched paths
    that appear, and once the launcher is done (or dead) and that init is
    gone, look once more and give the leases back."""
    try:
        init = _watch_init(_read_all(info_r))
        try:
            os.write(block_w, b"1")
        except OSError:
            pass
        os.close(block_w)
        _until_launcher_done(alive_r, watched)
        if init is not None:
            _wait_gone(init)
    finally:
        remove_planted(watched)
        leases.release(held)
        try:
            os.write(done_w, b"1")
        except OSError:
            pass


def _until_launcher_done(alive_r: int, watched: list[str]) -> None:
    """Wait for end of file on ``alive_r`` (the launcher finished waiting, or
    died), removing watched paths whenever something appears beside them."""
    watch = Watch(watched) if watched else None
    try:
        poller = select.poll()
        poller.register(alive_r, select.POLLIN)
        if watch is not None and watch.fd is not None:
            poller.register(watch.fd, select.POLLIN)
        remove_planted(watched)  # made before the watch started
        while True:
            ready = {fd for fd, _ in poller.poll()}
            if watch is not None and watch.fd in ready:
                watch.drain()
                remove_planted(watched)
            if alive_r in ready and not os.read(alive_r, 1):
                os.close(alive_r)
                return
    finally:
        if watch is not None:
            watch.close()


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        data = os.read(fd, 4096)
        if not data:
            os.close(fd)
            return b"".join(chunks)
        chunks.append(data)


def _watch_init(info: bytes) -> int | tuple[int] | None:
    """A pidfd on the sandbox's init (``--info-fd``'s ``child-pid``), taken
    before the sandbox may run (``--block-fd``); ``None`` when bubblewrap
    never started one, a 1-tuple of the PID where pidfds are missing."""
    pid = _child_pid(info)
    if pid is None:
        return None
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None
    except (AttributeError, OSError):
        return (pid,)


def _child_pid(info: bytes) -> int | None:
    """``child-pid`` from bubblewrap's ``{"child-pid": N, ...}``."""
    at = info.find(b'"child-pid"')
    if at < 0:
        return None
    rest = info[at + len(b'"child-pid"') :].lstrip()
    if not rest.startswith(b":"):
        return None
    digits = rest[1:].lstrip()
    end = 0
    while end < len(digits) and digits[end : end + 1].isdigit():
        end += 1
    return int(digits[:end]) if end else None


def _wait_gone(init: int | tuple[int]) -> None:
    if isinstance(init, int):
        select.select([init], [], [])
        os.close(init)
        return
    import time  # no pidfds (Linux < 5.3): look now and then

    while True:
        try:
            os.kill(init[0], 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
