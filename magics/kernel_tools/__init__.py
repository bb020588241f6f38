"""The kernel toolset and prompt context: what only an agent that lives in
the kernel can see and do.

* ``tools``: ``notebook_variables``, ``inspect_variable``, ``last_error``,
  ``run_python`` and ``propose_cell`` (offered to the foreground session of
  an agent cell; never to plain front ends without a kernel).
* ``mentions``: ``@var`` in an agent cell's body attaches that variable's
  summary to the prompt.
* ``errors``: the last exception a (non-agent) cell raised; the turn right
  after it is told it can ask ``last_error``.

Only ``errors`` is imported when the extension loads (it follows every cell);
the rest, and the agent core with it, on the first agent cell.
"""
