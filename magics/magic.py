"""``AgentMagics``: the ``%agent`` / ``%%agent`` magic as IPython registers it.

In a kernel the input transformer turns agent cells into awaited calls before
IPython's magic handling, so this function runs only where that did not
happen: ``%agent`` below other code in a cell, or ``run_cell_magic`` called
directly. With no event loop running (a script, terminal IPython without
autoawait) the turn runs to completion here; inside a running loop it cannot
wait without blocking, so it says how to write the cell instead.

IPython's own ``{var}`` expansion of the line is turned off
(``no_var_expand``): it would expand the whole line before the options are
split, letting a value add options; ``parse_cell`` expands instead.
"""

from __future__ import annotations

import asyncio

from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from . import options
from .errors import AgentUsageError

__all__ = ["AgentMagics"]


@magics_class
class AgentMagics(Magics):
    """Registers ``agent`` as both a line and a cell magic."""

    @line_cell_magic
    @no_var_expand  # ``parse_cell`` expands, one value per option: IPython's would split values
    def agent(self, line: str, cell: str | None = None) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            magic = "%%agent" if cell is not None else "%agent"
            raise AgentUsageError(
                f"{magic} must start its cell: the turn runs as top-level await on the "
                "kernel's event loop, which a magic in the middle of a cell cannot do"
            )
        from .controller import run_cell

        asyncio.run(run_cell(self.shell, line, cell))

    agent.__doc__ = options.agent.__doc__
