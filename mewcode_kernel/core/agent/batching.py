"""Grouping tool calls: consecutive read-only calls share a batch (run
concurrently), every other call is a batch of its own (run alone)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["partition"]

T = TypeVar("T")


def partition(calls: Sequence[T], is_read_only: Callable[[T], bool]) -> list[list[T]]:
    batches: list[list[T]] = []
    for call in calls:
        if is_read_only(call) and batches and all(is_read_only(c) for c in batches[-1]):
            batches[-1].append(call)
        else:
            batches.append([call])
    return batches
