"""Redaction speed: a 1 MB tool result holding a handful of secrets (raw,
base64, hex, an ``xxd`` dump, a piece), redacted by value in every form.

Run by hand: ``python benchmarks/bench_redaction.py [--mb 1] [--secrets 5]``.
Prints, best of several runs:

* before: the old redactor (one regular expression of the raw values);
* after: ``Redactor.redact`` (every form: encodings, dumps, pieces), the
  same text streamed in 4 KB chunks (``StreamRedactor``), and a text with no
  secret at all;
* the kernel tools' case: a 4 KB repr against the values of a 2 000-row
  password column.

The target is well under 100 ms for the 1 MB result.
"""

from __future__ import annotations

import argparse
import base64
import random
import re
import string
import subprocess
import time
from collections.abc import Callable

from mewcode_kernel.core.redaction import Redactor

_ALPHABET = string.ascii_letters + string.digits


def _key(rng: random.Random, prefix: str, n: int) -> str:
    return prefix + "".join(rng.choice(_ALPHABET) for _ in range(n))


def _filler(rng: random.Random, size: int) -> list[str]:
    """Lines like a command's output: log lines, code, base64 and hex blobs."""
    lines: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.6:
            words = (
                "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
                for _ in range(10)
            )
            line = f"2025-01-0{rng.randint(1, 9)} INFO " + " ".join(words)
        elif kind < 0.8:
            line = f"    result = client.{_key(rng, 'call_', 12)}(x, y={rng.randint(0, 99999)})"
        elif kind < 0.9:
            line = base64.b64encode(rng.randbytes(57)).decode()
        else:
            line = rng.randbytes(30).hex()
        lines.append(line)
        total += len(line) + 1
    return lines


def _text(rng: random.Random, size: int, secrets: list[str]) -> str:
    lines = _filler(rng, size)
    xxd = subprocess.run(["xxd"], input=secrets[0].encode(), capture_output=True).stdout.decode()
    inserts = [
        secrets[0],
        base64.b64encode(f"token={secrets[-1]}".encode()).decode(),
        secrets[1 % len(secrets)].encode().hex(),
        xxd,
        secrets[-1][: len(secrets[-1]) // 2 + 2],
    ]
    for text in inserts:
        lines.insert(rng.randrange(len(lines)), text)
    return "\n".join(lines)


def _old_redact(secrets: dict[str, str]) -> Callable[[str], str]:
    """The redactor before by-value forms: the raw values, one regex."""
    names = {v: k for k, v in secrets.items()}
    pattern = re.compile("|".join(map(re.escape, sorted(names, key=len, reverse=True))))
    return lambda text: pattern.sub(lambda m: f"[REDACTED:{names[m.group(0)]}]", text)


def _best(run: Callable[[], object], times: int = 5) -> float:
    best = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main(mb: float, count: int) -> None:
    rng = random.Random(7)
    secrets = {f"SECRET_{i}": _key(rng, "sk-ant-api03-", 40 + 10 * i) for i in range(count)}
    values = list(secrets.values())
    text = _text(rng, int(mb * 1_000_000), values)
    clean = "\n".join(_filler(rng, int(mb * 1_000_000)))
    start = time.perf_counter()
    redactor = Redactor(secrets)
    built = (time.perf_counter() - start) * 1000
    old = _old_redact(secrets)

    def streamed() -> str:
        stream = redactor.stream()
        parts = [stream.feed(text[i : i + 4096]) for i in range(0, len(text), 4096)]
        return "".join(parts) + stream.flush()

    out = redactor.redact(text)
    assert not any(v in out or v[: len(v) // 2 + 2] in out for v in values)
    assert out.count("[REDACTED:") >= 5, out.count("[REDACTED:")
    print(f"text: {len(text) / 1e6:.2f} MB, {count} secrets; redactor built in {built:.1f} ms")
    print(f"{'case':<40} {'ms':>8}")
    print(f"{'before: raw values only (old)':<40} {_best(lambda: old(text)):>8.1f}")
    print(f"{'after: every form':<40} {_best(lambda: redactor.redact(text)):>8.1f}")
    print(f"{'after: streamed in 4 KB chunks':<40} {_best(streamed, 2):>8.1f}")
    print(f"{'after: no secret in the text':<40} {_best(lambda: redactor.redact(clean)):>8.1f}")
    column = {f"password[{i}]": _key(rng, "pw-", 12) for i in range(2000)}
    start = time.perf_counter()
    many = Redactor(column, every_form=False)
    many.redact("x" * 10)  # the look-up table is built on first use
    table = (time.perf_counter() - start) * 1000
    shown = repr(list(column.values())[:300])[:4000]
    print(f"{'2 000 values: build':<40} {table:>8.1f}")
    print(f"{'2 000 values: a 4 KB repr':<40} {_best(lambda: many.redact(shown)):>8.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--secrets", type=int, default=5)
    args = parser.parse_args()
    main(args.mb, args.secrets)
