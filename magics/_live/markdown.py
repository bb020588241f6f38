"""Markdown as HTML that is safe to show in a trusted notebook output.

JupyterLab renders a ``text/markdown`` output with raw HTML passed through,
and a kernel's outputs are trusted: an ``<img onerror=...>`` or ``<script>``
in the model's answer (a prompt injection asks for one) would run in the
page, next to the kernel, with no approval. So every Markdown bundle the
live renderer shows carries its own ``text/html``, made here, which front
ends prefer over ``text/markdown``: raw HTML is shown as text, links go
only to web and mail addresses (markdown-it's link check), and images are
not fetched (a remote image is how an answer would leak what it read): they
become links a person may follow.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["markdown_bundle", "markdown_html"]

_CLASS = "mewcode-markdown"


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")  # ![alt](url) reads as "!" and a link: nothing is fetched
    md.add_render_rule("link_open", _link_open)
    return md


def _link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    # links open beside the notebook, never replacing JupyterLab, and tell the
    # target nothing about where they came from
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


def markdown_html(text: str, css_class: str = _CLASS) -> str:
    """``text`` (Markdown from the model, a command, a file) as safe HTML."""
    return f'<div class="{css_class}">{_parser().render(text)}</div>'


def markdown_bundle(text: str, css_class: str = _CLASS) -> dict[str, Any]:
    """A bundle showing ``text`` as Markdown: the safe HTML first, the Markdown
    source for viewers that read it (GitHub, nbviewer sanitise it) and text."""
    if not text:
        return {"text/markdown": "", "text/plain": ""}
    return {
        "text/html": markdown_html(text, css_class),
        "text/markdown": text,
        "text/plain": text,
    }
