"""How one tool call is described to the person asked about it.

``describe_call(request, root)`` gives the approval card's title and body as
HTML, and the same as Markdown for saved notebooks: for a tool that changes a
file (its ``preview`` metadata) the diff, for a shell command or Python code
(their rule families) the code highlighted with where it runs, otherwise the
input as JSON; each with the reason the permission engine gave for asking.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalRequest
from mewcode_kernel.core.tools import RunContext, Tool

from .diff import ChangeView, highlight_code, render_change
from .fmt import BOX_BACKGROUND, MUTED, esc, key_argument, pre, pretty_json

__all__ = ["CallView", "change_of", "code_of", "describe_call", "input_html"]

_COMMAND_BOX = (
    "margin:2px 0 6px;padding:4px 6px;white-space:pre-wrap;word-break:break-word;"
    f"max-height:16em;overflow:auto;background:{BOX_BACKGROUND};border-radius:3px;"
    "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px)"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class CallView:
    """``detail_html``: what the live card shows; ``brief_html`` / ``markdown``:
    what a saved notebook keeps of it (without the diff, which the tool row
    above the card keeps already)."""

    title_html: str
    detail_html: str
    brief_html: str
    markdown: str
    change: ChangeView | None = None


def change_of(tool: Tool | None, call: ToolUseBlock, root: Path | None) -> ChangeView | None:
    """The diff of a file-changing call, asked of the tool before it runs
    (``None``: not a file change, or it cannot be worked out)."""
    if tool is None or tool.preview is None or root is None:
        return None
    change = tool.change(RunContext(root=root), call.input)
    if change is None:
        return None
    return render_change(
        change.path,
        change.before,
        change.after,
        whole_file=change.whole_file,
        label=change.label,
        syntax=change.syntax,
    )


def code_of(tool: Tool | None, args: dict[str, Any]) -> tuple[str, str] | None:
    """A shell command's or Python code's text and language (``None`` for other
    tools): what a person reads in place of the call's JSON."""
    if tool is None or tool.family not in ("command", "python"):
        return None
    code = tool.subject(args)
    if not isinstance(code, str):
        return None
    return code, "python" if tool.family == "python" else "bash"


def code_html(code: str, language: str) -> str:
    return f'<pre class="mewcode-command" style="{_COMMAND_BOX}">{highlight_code(code, language)}</pre>'


def input_html(tool: Tool | None, args: dict[str, Any]) -> str:
    """A call's input as a person reads it: the code for a command or Python,
    else the arguments as JSON."""
    code = code_of(tool, args)
    if code is not None:
        return code_html(*code)
    return pre(pretty_json(args))


def describe_call(
    request: ApprovalRequest, root: Path | None, change: ChangeView | None = None
) -> CallView:
    call, tool, reason = request.call, request.tool, request.reason
    # a shell command, or Python code run in the kernel (run_python): shown whole
    command_tool = tool.family in ("command", "python")
    language = "python" if tool.family == "python" else "bash"
    arg = key_argument(tool, call.input, limit=120)
    title = (
        f"<b>Allow <code>{esc(call.name)}</code>"
        + (f" <code>{esc(arg)}</code>" if arg and not command_tool else "")
        + "?</b>"
    )
    why = f'<div style="{MUTED}">{esc(reason)}</div>' if reason else ""
    md_title = f"**{call.name}**" + (f" `{arg}`" if arg and not command_tool else "")
    md_reason = f"\n\n*{reason}*" if reason else ""
    change = change if change is not None else change_of(tool, call, root)
    if change is not None:
        summary = f'<div style="{MUTED}">{esc(change.summary)}</div>'
        return CallView(
            title_html=title,
            detail_html=summary + change.html + why,
            brief_html=summary + why,
            markdown=f"{md_title} · {change.summary}{md_reason}",
            change=change,
        )
    code = code_of(tool, call.input)
    if code is not None:
        command = code[0]
        if language == "python":
            where = " in the notebook's kernel"
        else:
            where = f" in {request.cwd or root}" if (request.cwd or root) is not None else ""
        detail = f'{code_html(*code)}<div style="{MUTED}">runs{esc(where)}</div>{why}'
        fence = "```"
        while fence in command:
            fence += "`"
        markdown = f"{md_title}{where}\n\n{fence}{language}\n{command}\n{fence}{md_reason}"
        return CallView(title_html=title, detail_html=detail, brief_html=detail, markdown=markdown)
    detail = (
        why
        + '<details><summary style="cursor:pointer">input</summary>'
        + pre(pretty_json(call.input))
        + "</details>"
    )
    markdown = f"{md_title}{md_reason}"
    return CallView(title_html=title, detail_html=detail, brief_html=why, markdown=markdown)
