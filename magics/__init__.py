"""The MewCode notebook front end: ``%%agent`` / ``%agent`` magics.

Loaded at start in the ``mewcode`` kernel; in any other IPython kernel run
``%load_ext magics``. An agent cell is rewritten by an input transformer into
top-level ``await`` on the kernel's loop (``transformer``), run by the
controller (``controller``), and drawn by a renderer: live widgets when a
person is at the notebook (``render_widgets``), text and Markdown otherwise
(``render_text``).

``await magics.wait_background()`` waits for the ``--background`` turns.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "_jupyter_labextension_paths",
    "load_ipython_extension",
    "unload_ipython_extension",
    "wait_background",
]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """The prebuilt JupyterLab extension this package carries (installed into
    ``share/jupyter/labextensions`` by pip; ``jupyter labextension develop``
    links it from here)."""
    return [{"src": "labextension", "dest": "mewcode-notebook"}]


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and the agent-cell transformer (idempotent)."""
    from .controller import controller_for
    from .frontends import front_ends
    from .magic import AgentMagics
    from .transformer import agent_cell_transformer, slash_cell_transformer

    ipython.register_magics(AgentMagics)
    cleanup = ipython.input_transformers_cleanup
    if agent_cell_transformer not in cleanup:
        cleanup.append(agent_cell_transformer)
    kernel = getattr(ipython, "kernel", None)
    ours = getattr(kernel, "implementation", None) == "mewcode"
    if ours and slash_cell_transformer not in cleanup:
        cleanup.append(slash_cell_transformer)  # "/help" cells: the mewcode kernel's promise
    # the mewcode kernel loads this while it starts, so it sees every client's first words
    front_ends(kernel, from_start=ours)
    controller_for(ipython)  # fixes the project root: the working directory now


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the transformer; the magics stay registered until the shell ends."""
    from .transformer import agent_cell_transformer, slash_cell_transformer

    cleanup = ipython.input_transformers_cleanup
    for transformer in (agent_cell_transformer, slash_cell_transformer):
        while transformer in cleanup:
            cleanup.remove(transformer)


async def wait_background(shell: Any = None) -> None:
    """Wait until every ``--background`` agent turn has finished."""
    from .controller import wait_background as wait

    await wait(shell)
