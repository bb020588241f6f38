"""Building blocks of the live widget renderer (``magics.render_widgets``).

``coalesce``: the paint scheduler (about 20 repaints per second per part, a
message budget per tick, no threads). ``blocks``: splitting streamed text into
blocks that can be shown apart, so finished text is sent once. ``surface``:
where parts are shown (the cell's outputs). ``parts``: the transcript's
pieces (answer text, thinking, tool rows, lines). ``card``: the approval card.
``lines``: notices, errors and the footer. ``fmt``: small formatting helpers.
"""
