"""The seccomp filter that closes host sockets when ``sandbox.network`` is ``off``.

``--unshare-net`` gives the process an empty network namespace, but a unix
socket is reached through a file (the Docker socket, D-Bus, an ssh agent),
and ``AF_VSOCK`` reaches the host past any network namespace. With the
filter, ``socket()`` fails with ``EACCES`` for every address family except
IPv4, IPv6 and netlink (which only see the empty namespace), and ``AF_UNIX``
when the user keeps listed sockets reachable; ``io_uring`` is off (it can
create sockets without the ``socket`` system call). ``socketpair`` stays:
its two ends reach nothing but each other.

The program is classic BPF for the native architecture only (x86_64,
aarch64): a system call of any other ABI (i386 through ``int 0x80``, x32)
is refused, so no foreign entry point bypasses the checks. It imports only
what a bare interpreter starts fast with: the launcher (``launcher.py``)
runs it for every command.
"""

from __future__ import annotations

import os
import struct

__all__ = ["ARCHES", "Arch", "filter_program", "native_arch"]

# struct sock_filter: u16 code, u8 jt, u8 jf, u32 k
_INSN = struct.Struct("=HBBI")
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EACCES = 13
# offsets in struct seccomp_data: int nr, u32 arch, u64 ip, u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16
_X32_BIT = 0x40000000

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16


class Arch:
    """What the filter needs to know about one architecture."""

    __slots__ = ("audit", "io_uring", "name", "socket", "x32")

    def __init__(
        self, name: str, audit: int, socket: int, io_uring: tuple[int, ...], *, x32: bool = False
    ) -> None:
        self.name = name
        self.audit = audit
        self.socket = socket
        self.io_uring = io_uring
        self.x32 = x32


ARCHES: dict[str, Arch] = {
    "x86_64": Arch("x86_64", 0xC000003E, 41, (425, 426, 427), x32=True),
    "aarch64": Arch("aarch64", 0xC00000B7, 198, (425, 426, 427)),
}


def native_arch(machine: str | None = None) -> Arch | None:
    """The filter's view of this machine (``os.uname().machine``), or
    ``None`` where no filter can be built."""
    name = machine if machine is not None else os.uname().machine
    return ARCHES.get({"amd64": "x86_64", "arm64": "aarch64"}.get(name, name))


def filter_program(arch: Arch, *, allow_unix: bool) -> bytes:
    """The filter as bwrap's ``--seccomp`` reads it: ``struct sock_filter``s."""
    families = [AF_INET, AF_INET6, AF_NETLINK] + ([AF_UNIX] if allow_unix else [])
    prog: list[tuple[int, str | int, str | int, int]] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, "deny", arch.audit),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if arch.x32:
        prog.append((_JGE_K, "deny", 0, _X32_BIT))
    prog += [(_JEQ_K, "deny", 0, nr) for nr in arch.io_uring]
    prog += [
        (_JEQ_K, 0, "allow", arch.socket),
        # the family is an int: the kernel reads the low 32 bits of the argument
        (_LD_W_ABS, 0, 0, _ARG0),
    ]
    prog += [(_JEQ_K, "allow", 0, family) for family in families]
    prog.append((_RET_K, 0, 0, _RET_ERRNO | _EACCES))  # deny
    prog.append((_RET_K, 0, 0, _RET_ALLOW))  # allow
    labels = {"deny": len(prog) - 2, "allow": len(prog) - 1}
    out = bytearray()
    for at, (code, jt, jf, k) in enumerate(prog):
        out += _INSN.pack(code, _jump(labels, at, jt), _jump(labels, at, jf), k)
    return bytes(out)


def _jump(labels: dict[str, int], at: int, target: str | int) -> int:
    if isinstance(target, int):
        return target
    offset = labels[target] - at - 1
    assert 0 <= offset < 256
    return offset
