"""The pieces under the widget renderer: the paint scheduler (rate, budget,
order, flush) and the splitting of streamed text into blocks."""

from __future__ import annotations

from magics._live.blocks import LineBlocks, MarkdownBlocks
from magics._live.coalesce import Painter
from magics._live.fmt import duration, key_argument, truncate
from mewcode_kernel.core.tools import bash, write_file


class Counter:
    def __init__(self, name: str, log: list[str], cost: int = 1) -> None:
        self.name, self.log, self.cost = name, log, cost

    def paint(self) -> int:
        self.log.append(self.name)
        return self.cost


class FakeLoop:
    """Timers on a clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[FakeTimer] = []

    def clock(self) -> float:
        return self.now

    def call_later(self, delay: float, callback, *args, context=None) -> FakeTimer:
        timer = FakeTimer(self.now + delay, callback, args)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        end = self.now + seconds
        while due := sorted(
            (t for t in self.timers if t.when <= end and not t.cancelled), key=lambda t: t.when
        ):
            timer = due[0]
            self.timers.remove(timer)
            self.now = timer.when
            timer.callback(*timer.args)
        self.now = end


class FakeTimer:
    def __init__(self, when: float, callback, args) -> None:
        self.when, self.callback, self.args, self.cancelled = when, callback, args, False

    def cancel(self) -> None:
        self.cancelled = True


def painter_on(loop: FakeLoop, **kw) -> Painter:
    return Painter(loop=loop, clock=loop.clock, **kw)  # type: ignore[arg-type]


def test_marks_within_one_interval_become_one_paint() -> None:
    loop, log = FakeLoop(), []
    painter = painter_on(loop, interval=0.05)
    part = Counter("a", log)
    for _ in range(100):
        painter.mark(part)
    loop.advance(0)  # the first tick is due at once
    assert log == ["a"]
    for _ in range(100):
        painter.mark(part)
    loop.advance(0.049)
    assert log == ["a"]  # the next tick waits for the interval
    loop.advance(0.001)
    assert log == ["a", "a"]


def test_a_part_marked_continuously_paints_twenty_times_a_second() -> None:
    loop, log = FakeLoop(), []
    painter = painter_on(loop, interval=0.05)
    part = Counter("a", log)
    for _ in range(3000):  # a mark every millisecond for three seconds
        painter.mark(part)
        loop.advance(0.001)
    assert 59 <= len(log) <= 61


def test_new_parts_paint_in_order_and_the_budget_defers_the_rest() -> None:
    loop, log = FakeLoop(), []
    painter = painter_on(loop, interval=0.05, budget=3)
    for i in range(7):
        painter.mark(Counter(str(i), log))
    loop.advance(0)
    assert log == ["0", "1", "2"]  # one tick: three messages
    loop.advance(0.05)
    assert log == ["0", "1", "2", "3", "4", "5"]
    loop.advance(0.05)
    assert log == [str(i) for i in range(7)]
    assert painter.ticks == 3 and painter.sent == 7


def test_flush_ignores_the_budget_and_close_ignores_later_marks() -> None:
    loop, log = FakeLoop(), []
    painter = painter_on(loop, budget=1)
    a, b = Counter("a", log), Counter("b", log)
    painter.mark(a)
    painter.mark(b)
    painter.close()
    assert log == ["a", "b"]
    painter.mark(a)
    loop.advance(1)
    assert log == ["a", "b"] and painter.pending == 0


def test_without_a_loop_every_mark_paints() -> None:
    log: list[str] = []
    painter = Painter(loop=None)
    painter.mark(Counter("a", log))
    assert log == ["a"]


def test_markdown_blocks_split_after_blank_lines_only_when_big_enough() -> None:
    blocks = MarkdownBlocks(min_size=10)
    para = "First paragraph here.\n\n"
    assert blocks.feed(para) == []  # the next line is not known yet
    assert blocks.feed("Second") == [para]
    assert blocks.tail == "Second"
    small = MarkdownBlocks(min_size=100)
    assert small.feed(para + "Second\n\nThird") == []


def test_markdown_blocks_never_split_fenced_code_or_indented_continuations() -> None:
    text = (
        "Intro paragraph long enough.\n\n"
        "```python\nx = 1\n\ny = 2\n```\n\n"
        "- item one\n\n    still item one\n\n"
        "~~~~\nraw\n\n~~~\nstill raw\n~~~~\n\n"
        "End."
    )
    blocks = MarkdownBlocks(min_size=5)
    done: list[str] = []
    for ch in text:  # one character at a time, the worst case
        done += blocks.feed(ch)
    assert "".join(done) + blocks.tail == text
    assert done == [
        "Intro paragraph long enough.\n\n",
        "```python\nx = 1\n\ny = 2\n```\n\n",
        "- item one\n\n    still item one\n\n",
        "~~~~\nraw\n\n~~~\nstill raw\n~~~~\n\n",
    ]
    assert blocks.tail == "End."


def test_line_blocks_split_plain_text_at_line_ends() -> None:
    blocks = LineBlocks(min_size=10)
    assert blocks.feed("short") == []
    assert blocks.feed(" line\nand more") == ["short line\n"]
    assert blocks.tail == "and more"


def test_formatting_helpers() -> None:
    assert key_argument(write_file, {"path": "a.txt", "content": "x"}) == "a.txt"
    assert key_argument(bash, {"command": "pytest -q\nsecond line"}) == "pytest -q"
    assert key_argument(None, {"limit": 3, "q": "bug"}) == "bug"  # a tool the session lacks
    assert key_argument(None, {}) == ""
    assert truncate("x" * 100, 50).endswith("(50 more characters)")
    assert duration(0.012) == "12 ms" and duration(1.25) == "1.2 s" and duration(125) == "2 min 5 s"
