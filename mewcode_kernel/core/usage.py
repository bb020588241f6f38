"""Token usage, summed per response, per turn and per session."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Usage"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
        )

    def __sub__(self, other: Usage) -> Usage:
        """What ``self`` has beyond ``other`` (never below zero)."""
        return Usage(
            input_tokens=max(self.input_tokens - other.input_tokens, 0),
            output_tokens=max(self.output_tokens - other.output_tokens, 0),
            cache_read_tokens=max(self.cache_read_tokens - other.cache_read_tokens, 0),
            cache_creation_tokens=max(self.cache_creation_tokens - other.cache_creation_tokens, 0),
        )

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Usage:
        """The inverse of ``to_dict`` (missing or odd values count as 0)."""

        def count(key: str) -> int:
            value = data.get(key)
            return value if isinstance(value, int) and value > 0 else 0

        return cls(
            input_tokens=count("input_tokens"),
            output_tokens=count("output_tokens"),
            cache_read_tokens=count("cache_read_tokens"),
            cache_creation_tokens=count("cache_creation_tokens"),
        )

    @property
    def total_input_tokens(self) -> int:
        """Every input token the provider processed, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
        }
