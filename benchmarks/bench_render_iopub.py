"""What streaming an answer costs on IOPub, by rendering strategy.

Run by hand: ``python benchmarks/bench_render_iopub.py [--deltas N] [--seconds S]``.
Starts a plain ipykernel, and in it streams the same answer (N deltas of a
few characters, spread over S seconds, with a blank line every ~60 deltas)
with each strategy, counting the IOPub messages and bytes the cell sends
(status and execute_input excluded). Strategies:

- ``update-every-delta``: one display, ``update_display`` with the whole text at every delta;
- ``html-widget-20hz``: an ``HTML`` widget whose value (the whole text) is set 20 times a second;
- ``output-widget-20hz``: an ``Output`` widget, ``append_display_data`` of each new chunk
  20 times a second (the widget resends its whole ``outputs`` list each time);
- ``mewcode``: ``WidgetRenderer`` (finished blocks sent once, the tail repainted at 20 Hz).

Note that with a browser attached, an ``Output`` widget that *captures*
output also echoes its whole ``outputs`` back on IOPub for every message; no
front end is attached here, so that cost is not counted.
"""

from __future__ import annotations

import argparse
import json
import textwrap
import time

from jupyter_client.manager import start_new_kernel

PRELUDE = """
import asyncio, time
DELTAS = [("word%d " % i) + ("\\n\\n" if i % 60 == 59 else "") for i in range({n})]
PAUSE = {seconds} / len(DELTAS) * 10
async def paced(step):
    for i, d in enumerate(DELTAS):
        step(d)
        if i % 10 == 9:
            await asyncio.sleep(PAUSE)
"""

STRATEGIES = {
    "update-every-delta": """
from IPython.display import display, update_display, Markdown
acc = ""
h = display(Markdown(""), display_id=True)
def step(d):
    global acc
    acc += d
    h.update(Markdown(acc))
await paced(step)
""",
    "html-widget-20hz": """
import ipywidgets as w
from IPython.display import display
acc, last = "", 0.0
html = w.HTML("")
display(html)
def step(d):
    global acc, last
    acc += d
    if time.monotonic() - last >= 0.05:
        html.value = acc; last = time.monotonic()
await paced(step)
html.value = acc
""",
    "output-widget-20hz": """
import ipywidgets as w
from IPython.display import display, Markdown
pending, last = "", 0.0
out = w.Output()
display(out)
def step(d):
    global pending, last
    pending += d
    if time.monotonic() - last >= 0.05:
        out.append_display_data(Markdown(pending)); pending = ""; last = time.monotonic()
await paced(step)
out.append_display_data(Markdown(pending))
""",
    "mewcode": """
from magics.render_widgets import WidgetRenderer
from mewcode_kernel.core.events import TextDelta
r = WidgetRenderer()
r.start(prompt="", provider_label="bench", session_id=None)
await paced(lambda d: r.on_event(TextDelta(text=d)))
r.finish(None)
""",
}


def run(kc, code: str) -> tuple[int, int, float]:
    msg_id = kc.execute(code, allow_stdin=False)
    count = size = 0
    first = last = None
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            break
        if kind in ("status", "execute_input"):
            continue
        if kind == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))
        now = time.monotonic()
        first = first or now
        last = now
        count += 1
        size += len(json.dumps(msg["content"]))
    reply = kc.get_shell_msg(timeout=60)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(reply["content"])
    return count, size, (last or 0) - (first or 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        run(kc, textwrap.dedent(PRELUDE.format(n=args.deltas, seconds=args.seconds)))
        print(f"{args.deltas} deltas over ~{args.seconds:g} s")
        print(f"{'strategy':22} {'messages':>9} {'msg/s':>7} {'bytes':>11}")
        for name, code in STRATEGIES.items():
            count, size, span = run(kc, code)
            rate = count / span if span > 0 else float("nan")
            print(f"{name:22} {count:9d} {rate:7.0f} {size:11,d}")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
