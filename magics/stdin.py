"""Asking the front end for one line over the kernel's stdin channel, without
blocking the event loop (``input()`` would: ipykernel's ``raw_input`` polls
the socket synchronously, so nothing else on the loop could run and an
interrupt could not cancel the turn).

Used by the text renderer to ask for approvals when the execute request allows
stdin but no live widgets are available.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

__all__ = ["StdinUnavailable", "ask_line"]

_POLL = 0.05


class StdinUnavailable(Exception):
    """This kernel cannot ask its front end for input now."""


async def ask_line(kernel: Any, prompt: str) -> str:
    """Send an ``input_request`` with ``prompt`` and return the reply's value.

    Cancelling the awaiting task abandons the request (the front end's input
    box is left to the front end). Raises ``StdinUnavailable`` when the kernel
    is not one that can ask (no stdin socket, or stdin not allowed).
    """
    try:
        socket = kernel.stdin_socket
        session = kernel.session
        parent = kernel.get_parent("shell")
        ident = kernel._parent_ident["shell"]
        allowed = kernel._allow_stdin
    except (AttributeError, KeyError) as exc:
        raise StdinUnavailable(str(exc)) from None
    if socket is None or session is None or not allowed:
        raise StdinUnavailable("the front end does not accept input requests")
    import zmq

    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    while True:  # drop stale replies
        try:
            socket.recv_multipart(zmq.NOBLOCK)
        except zmq.ZMQError:
            break
    session.send(
        socket, "input_request", {"prompt": prompt, "password": False}, parent, ident=ident
    )
    while True:
        if socket.poll(0):
            _, reply = session.recv(socket, mode=zmq.NOBLOCK)
            if reply is not None:
                value = reply.get("content", {}).get("value", "")
                return value if isinstance(value, str) else ""
        await asyncio.sleep(_POLL)
