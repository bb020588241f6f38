"""The telemetry worker runs what the loop hands it, in order, in bursts,
whatever fails, and a drain waits for all of it."""

from __future__ import annotations

import logging
import threading

import pytest

from mewcode_kernel.core.telemetry.worker import Worker


def test_calls_run_in_the_order_submitted_across_bursts_and_threads() -> None:
    worker = Worker(linger=0.001)
    seen: list[tuple[int, int]] = []

    def submit_from(source: int) -> None:
        for n in range(300):
            worker.submit("a call", seen.append, (source, n))

    threads = [threading.Thread(target=submit_from, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert worker.drain(10)
    assert len(seen) == 900
    for source in range(3):  # each submitter's calls in its order
        assert [n for s, n in seen if s == source] == list(range(300))


def test_a_long_linger_does_not_hold_up_a_drain() -> None:
    worker = Worker(linger=3600)
    seen: list[int] = []
    worker.submit("a call", seen.append, 1)
    assert worker.drain(10) and seen == [1]
    worker.submit("a call", seen.append, 2)  # and the next burst too
    assert worker.drain(10) and seen == [1, 2]


def test_a_failing_call_is_logged_once_and_the_rest_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    worker = Worker(linger=0)
    seen: list[int] = []

    def boom() -> None:
        raise RuntimeError("broken exporter")

    with caplog.at_level(logging.WARNING):
        for n in range(3):
            worker.submit("a broken call", boom)
            worker.submit("a call", seen.append, n)
        assert worker.drain(10)
    assert seen == [0, 1, 2]
    assert caplog.text.count("telemetry: a broken call failed; the session goes on") == 1


def test_a_drain_with_nothing_submitted_returns_at_once() -> None:
    before = {t.ident for t in threading.enumerate()}
    assert Worker().drain(0)
    assert {t.ident for t in threading.enumerate()} == before  # no thread started
