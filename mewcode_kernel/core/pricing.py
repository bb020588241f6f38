"""What a turn cost, when the model's list price is known.

Prices are USD per million tokens, from the providers' public price lists;
they change, so anything shown is an estimate ("cost when known"). Models not
listed (local servers, new releases) have no cost: ``estimate_cost`` returns
``None`` rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .usage import Usage

__all__ = ["Price", "estimate_cost", "price_of"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Price:
    """USD per million tokens. ``cache_write`` is Anthropic's cache creation."""

    input: float
    output: float
    cache_read: float
    cache_write: float = 0.0


# Longest matching prefix wins (so "claude-opus-4-5" is not priced as "claude-opus-4").
_PRICES: dict[str, Price] = {
    "claude-opus-4-5": Price(input=5, output=25, cache_read=0.5, cache_write=6.25),
    "claude-opus-4": Price(input=15, output=75, cache_read=1.5, cache_write=18.75),
    "claude-sonnet-4": Price(input=3, output=15, cache_read=0.3, cache_write=3.75),
    "claude-3-7-sonnet": Price(input=3, output=15, cache_read=0.3, cache_write=3.75),
    "claude-3-5-sonnet": Price(input=3, output=15, cache_read=0.3, cache_write=3.75),
    "claude-haiku-4-5": Price(input=1, output=5, cache_read=0.1, cache_write=1.25),
    "claude-3-5-haiku": Price(input=0.8, output=4, cache_read=0.08, cache_write=1.0),
    "gpt-4.1-nano": Price(input=0.1, output=0.4, cache_read=0.025),
    "gpt-4.1-mini": Price(input=0.4, output=1.6, cache_read=0.1),
    "gpt-4.1": Price(input=2, output=8, cache_read=0.5),
    "gpt-4o-mini": Price(input=0.15, output=0.6, cache_read=0.075),
    "gpt-4o": Price(input=2.5, output=10, cache_read=1.25),
    "gpt-5-mini": Price(input=0.25, output=2, cache_read=0.025),
    "gpt-5-nano": Price(input=0.05, output=0.4, cache_read=0.005),
    "gpt-5": Price(input=1.25, output=10, cache_read=0.125),
}


def price_of(model: str) -> Price | None:
    """The list price of ``model`` (matched by prefix, provider prefixes like
    ``anthropic/`` ignored), or ``None`` when it is not known."""
    name = model.rsplit("/", 1)[-1].lower()
    best = max((p for p in _PRICES if name.startswith(p)), key=len, default=None)
    return _PRICES[best] if best is not None else None


def estimate_cost(model: str, usage: Usage) -> float | None:
    """USD for ``usage`` on ``model``, or ``None`` when the price is not known."""
    price = price_of(model)
    if price is None:
        return None
    total = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_creation_tokens * price.cache_write
    )
    return total / 1_000_000
