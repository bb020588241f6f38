"""A Jupyter server extension: a saved notebook keeps MewCode's widgets as
their static forms.

MewCode shows every widget (a card, a task board) in one output with its
static form beside it (HTML, Markdown and text; ``magics._live.settle``),
marked ``{"mewcode": {"static_form": true}}`` in the output's metadata. A
notebook saved while such a widget is live would keep its widget view, and
JupyterLab, reopening it (trusted: the person saved it) without the
widget's kernel, shows "Error displaying widget: model not found": it
prefers the widget view and has no fallback. So when the server saves a
notebook, this hook drops the widget view from those outputs only; the page
that saved it keeps its live widget.

``python -m mewcode_kernel install`` enables it beside the kernelspec (in the
matching ``jupyter_server_config.d``); ``jupyter server extension list``
shows it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONFIG", "keep_static_forms", "pre_save_hook"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: the server config that enables this extension
CONFIG = {"ServerApp": {"jpserver_extensions": {__name__: True}}}


def _marked(output: Any) -> bool:
    metadata = output.get("metadata")
    mewcode = metadata.get("mewcode") if isinstance(metadata, dict) else None
    return isinstance(mewcode, dict) and mewcode.get("static_form") is True


def keep_static_forms(notebook: Any) -> int:
    """Drop the widget view from every MewCode output that carries a static
    form (HTML); returns how many outputs changed. Anything else is left as
    it is: other widgets, outputs without a static form, malformed cells."""
    changed = 0
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    for cell in cells if isinstance(cells, list) else ():
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else ():
            data = output.get("data") if isinstance(output, dict) else None
            if isinstance(data, dict) and WIDGET_VIEW in data and _marked(output):
                if data.get("text/html"):
                    del data[WIDGET_VIEW]
                    changed += 1
    return changed


def pre_save_hook(model: dict[str, Any], **_: Any) -> None:
    """The contents manager's pre-save hook (``register_pre_save_hook``)."""
    if model.get("type") == "notebook":
        keep_static_forms(model.get("content"))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    serverapp.contents_manager.register_pre_save_hook(pre_save_hook)
    serverapp.log.info("MewCode: saved notebooks keep the static forms of its widgets")
