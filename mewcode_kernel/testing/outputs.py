"""A cell's outputs as a front end keeps them, from the kernel's IOPub messages.

``CellOutputs.feed(msg)`` applies ``display_data`` / ``execute_result`` /
``stream`` / ``error`` / ``update_display_data`` (by display id) /
``clear_output`` the way JupyterLab does, so ``outputs`` is what a saved
notebook would hold (nbformat output dicts). Used to check what agent cells
leave in a saved notebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CellOutputs"]


@dataclass
class CellOutputs:
    outputs: list[dict[str, Any]] = field(default_factory=list)
    _by_display_id: dict[str, list[int]] = field(default_factory=dict)
    _clear_on_next: bool = False

    def feed(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "clear_output":
            if content.get("wait"):
                self._clear_on_next = True
            else:
                self._clear()
            return
        if kind not in {"display_data", "execute_result", "stream", "error", "update_display_data"}:
            return
        if kind == "update_display_data":
            display_id = content.get("transient", {}).get("display_id")
            for index in self._by_display_id.get(display_id, []):
                self.outputs[index]["data"] = dict(content["data"])
                self.outputs[index]["metadata"] = dict(content.get("metadata", {}))
            return
        if self._clear_on_next:
            self._clear()
        if kind == "stream":
            last = self.outputs[-1] if self.outputs else None
            if last and last["output_type"] == "stream" and last["name"] == content["name"]:
                last["text"] += content["text"]
            else:
                self.outputs.append(
                    {"output_type": "stream", "name": content["name"], "text": content["text"]}
                )
            return
        if kind == "error":
            self.outputs.append(
                {
                    "output_type": "error",
                    **{k: content[k] for k in ("ename", "evalue", "traceback")},
                }
            )
            return
        output: dict[str, Any] = {
            "output_type": kind,
            "data": dict(content["data"]),
            "metadata": dict(content.get("metadata", {})),
        }
        if kind == "execute_result":
            output["execution_count"] = content.get("execution_count")
        display_id = content.get("transient", {}).get("display_id")
        if display_id:
            self._by_display_id.setdefault(display_id, []).append(len(self.outputs))
        self.outputs.append(output)

    def _clear(self) -> None:
        self.outputs.clear()
        self._by_display_id.clear()
        self._clear_on_next = False
