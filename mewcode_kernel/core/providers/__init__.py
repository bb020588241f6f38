"""Model providers: Anthropic Messages, OpenAI Chat Completions, and replay."""

from __future__ import annotations

from .base import ModelRequest, Provider, ToolSpec, complete

__all__ = ["ModelRequest", "Provider", "ToolSpec", "complete"]
