"""A known secret value printed in another form is still redacted: every way
a command or a line of Python can print it (base64 and base32 at every byte
offset, wrapped or not, URL-safe; hex in either case and with separators;
reversed; rot13; its bytes as numbers; the dumps of xxd, od and hexdump in
their formats; UTF-16; a piece of half of it or more), found by what the
real tools print (``base64``, ``xxd``, ``od``, ``hexdump``, ``rev``,
``fold`` run as processes), also when the text streams in chunks split at
every point. And the other way: ordinary text, short values and the
ordinary words inside a secret are left alone.

The environment rule (``core.child_env``) is checked here on its own: an
allowlist, what never passes, and any variable holding a known secret
dropped whatever its name."""

from __future__ import annotations

import base64
import codecs
import os
import random
import shutil
import string
import subprocess
from urllib.parse import quote

import pytest

from mewcode_kernel.core.child_env import DEFAULT_ALLOWLIST, NEVER_INHERITED, ChildEnv, child_env
from mewcode_kernel.core.redaction import Redactor

_RNG = random.Random(20261202)
_ALPHABET = string.ascii_letters + string.digits


def random_key(prefix: str = "", n: int = 40) -> str:
    return prefix + "".join(_RNG.choice(_ALPHABET) for _ in range(n))


KEY = random_key("sk-ant-api03-", 60)  # shaped like a credential
PLAIN = random_key("", 32)  # no shape at all: known only by value (a provider key in LLM=...)
SHORTISH = random_key("", 12)
NAME = "MY_CLAUDE"


def run(command: str, value: str) -> str:
    """What ``command`` prints with the secret on its stdin (as a shell pipe would)."""
    found = subprocess.run(
        ["/bin/bash", "-c", command],
        input=value.encode(),
        capture_output=True,
        check=True,
        env={"PATH": os.environ["PATH"], "LC_ALL": "C"},
    )
    return found.stdout.decode("utf-8", "replace")


def shown_pieces(secret: str, text: str) -> list[str]:
    """Runs of ``secret`` of at least half of it that ``text`` still shows."""
    half = max(8, -(-len(secret) // 2))
    return [
        secret[i : i + half] for i in range(len(secret) - half + 1) if secret[i : i + half] in text
    ]


def assert_redacted(redactor: Redactor, text: str, secret: str) -> str:
    out = redactor.redact(text)
    assert "[REDACTED:" in out, (text, out)
    assert not shown_pieces(secret, out), out
    return out


COMMANDS = {
    "base64": "base64",
    "base64 -w0": "base64 -w0",
    "base64 of a line with it": "sed 's/^/API_KEY=/' | base64",
    "base64 after 1 byte": "sed 's/^/x/' | base64",
    "base64 after 2 bytes": "sed 's/^/xy/' | base64",
    "base64 wrapped at 20": "base64 -w 20",
    "base64 url-safe": "base64 -w0 | tr '+/' '-_'",
    "base32": "base32",
    "base32 after 3 bytes": "sed 's/^/abc/' | base32",
    "xxd -p": "xxd -p",
    "xxd -p -u": "xxd -p -u",
    "xxd": "xxd",
    "xxd after 5 bytes": "sed 's/^/abcde/' | xxd",
    "xxd -g1": "xxd -g1",
    "xxd -c 7": "xxd -c 7",
    "xxd -e": "sed 's/^/a/' | xxd -e",
    "xxd -b": "xxd -b",
    "xxd -i": "xxd -i",
    "xxd -u": "xxd -u",
    "od -c": "od -c",
    "od -An -c": "od -An -c",
    "od -x": "sed 's/^/a/' | od -x",
    "od": "od",
    "od after 1 byte": "sed 's/^/a/' | od",
    "od -b": "od -b",
    "od -tx1": "od -tx1",
    "od -An -tx1": "od -An -tx1",
    "od -tu1": "od -An -tu1",
    "od -d": "sed 's/^/q/' | od -d",
    "od -tx4": "sed 's/^/qq/' | od -tx4",
    "od -Ax -tx1z": "od -Ax -tx1z",
    "hexdump": "sed 's/^/a/' | hexdump",
    "hexdump -C": "hexdump -C",
    "hexdump -C after 3 bytes": "sed 's/^/abc/' | hexdump -C",
    "rev": "rev",
    "fold -w 8": "fold -w 8",
    "one character per line": "sed 's/./&\\n/g'",
    "spaced characters": "sed 's/./& /g'",
    "tr upper case": "tr a-z A-Z",
    "rot13": "tr 'A-Za-z' 'N-ZA-Mn-za-m'",
    "first half": "cut -c1-{half}",
    "second half": "cut -c{half}-",
    "the middle": "cut -c{quarter}-{three_quarters}",
}


@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["sk-key", "plain"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_what_a_command_prints_of_a_secret_is_redacted(name: str, secret: str) -> None:
    tool = COMMANDS[name].split()[0]
    if shutil.which(tool) is None and "|" not in COMMANDS[name]:
        package = "xxd" if tool == "xxd" else "coreutils"
        pytest.skip(f"needs {tool}: apt-get install -y {package}")
    n = len(secret)
    command = COMMANDS[name].format(
        half=(n + 1) // 2, quarter=n // 4, three_quarters=3 * n // 4 + 1
    )
    printed = run(command, secret + "\n")
    assert_redacted(Redactor({NAME: secret}), printed, secret)


def python_forms(secret: str) -> dict[str, str]:
    data = secret.encode()
    return {
        "b64encode": repr(base64.b64encode(data)),
        "urlsafe_b64encode": base64.urlsafe_b64encode(b"zz" + data).decode(),
        "encodebytes (wrapped, in a repr)": repr(base64.encodebytes(data * 3)),
        "b32encode": base64.b32encode(b"k" + data).decode(),
        "hex": data.hex(),
        "hex upper": data.hex().upper(),
        "hex with colons": data.hex(":"),
        "hex with spaces": data.hex(" ", 2),
        "list of bytes": repr(list(data)),
        "ords": repr([ord(c) for c in secret]),
        "hex() of each": repr([hex(b) for b in data]),
        "\\x escapes": "".join(f"\\x{b:02x}" for b in data),
        "octal escapes": "".join(f"\\{b:03o}" for b in data),
        "percent-encoded": "".join(f"%{b:02X}" for b in data),
        "url-quoted": quote(secret, safe=""),
        "rot13": codecs.encode(secret, "rot13"),
        "reversed": secret[::-1],
        "utf-16 repr": repr(secret.encode("utf-16-le")),
        "utf-16-be hex": secret.encode("utf-16-be").hex(),
        "json of chunks": repr([secret[i : i + 5] for i in range(0, len(secret), 5)]),
        "print(*secret)": " ".join(secret),
        "in a JSON string with \\n breaks": "\\n".join(
            secret[i : i + 9] for i in range(0, len(secret), 9)
        ),
    }


@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["sk-key", "plain"])
@pytest.mark.parametrize("form", sorted(python_forms(KEY)))
def test_what_python_prints_of_a_secret_is_redacted(form: str, secret: str) -> None:
    text = f"before {python_forms(secret)[form]} after"
    out = assert_redacted(Redactor({NAME: secret}), text, secret)
    assert out.startswith("before ") and out.endswith(" after")


@pytest.mark.parametrize("offset", range(3))
@pytest.mark.parametrize("alphabet", ["standard", "urlsafe"])
def test_base64_inside_a_longer_blob_at_every_alignment(offset: int, alphabet: str) -> None:
    encode = base64.b64encode if alphabet == "standard" else base64.urlsafe_b64encode
    for _ in range(5):
        before = bytes(_RNG.randrange(256) for _ in range(30 + offset))
        after = bytes(_RNG.randrange(256) for _ in range(_RNG.randrange(40)))
        blob = encode(before + PLAIN.encode() + after).decode()
        assert_redacted(Redactor({NAME: PLAIN}), blob, PLAIN)


@pytest.mark.parametrize("secret", [KEY, PLAIN, SHORTISH], ids=["sk-key", "plain", "short"])
def test_a_secret_split_in_two_anywhere_has_its_longer_half_masked(secret: str) -> None:
    redactor = Redactor({NAME: secret})
    for cut in range(1, len(secret)):
        first, second = secret[:cut], secret[cut:]
        out = redactor.redact(f"first: {first}\nand later: {second}")
        longer = first if len(first) >= len(second) else second
        if len(longer) >= 8:
            assert longer not in out, (cut, out)


@pytest.mark.parametrize("form", ["raw", "base64", "xxd", "hex", "reversed", "od -c", "spaced"])
def test_a_stream_split_at_every_point_never_shows_the_secret(form: str) -> None:
    printed = {
        "raw": f"key={PLAIN}\n",
        "base64": run("base64", PLAIN),
        "xxd": run("xxd", PLAIN),
        "hex": PLAIN.encode().hex(),
        "reversed": PLAIN[::-1],
        "od -c": run("od -c", PLAIN),
        "spaced": " ".join(PLAIN),
    }[form]
    text = f"some output before\n{printed}\nand after\n"
    redactor = Redactor({NAME: PLAIN})
    whole = redactor.redact(text)
    for cut in range(1, len(text)):
        stream = redactor.stream()
        shown = [stream.feed(text[:cut]), stream.feed(text[cut:]), stream.flush()]
        joined = "".join(shown)
        assert not shown_pieces(PLAIN, joined), (cut, shown)
        if form in ("raw", "base64", "hex", "reversed", "spaced"):
            assert "[REDACTED:" in joined, (cut, shown)
    assert "[REDACTED:" in whole


def test_a_stream_of_many_small_chunks_is_redacted_and_innocent_text_flows() -> None:
    redactor = Redactor({NAME: PLAIN})
    text = "line one\n" + base64.encodebytes(PLAIN.encode() * 2).decode() + "line three\n"
    stream = redactor.stream()
    shown = [stream.feed(text[i : i + 3]) for i in range(0, len(text), 3)] + [stream.flush()]
    assert not shown_pieces(PLAIN, "".join(shown))
    plain = redactor.stream()
    assert plain.feed("nothing secret here.\n") == "nothing secret here.\n"


ORDINARY = [
    "The quick brown fox jumps over the lazy dog, again and again.",
    "def compute(total, count):\n    return total / count\n",
    "2025-01-01 INFO request served in 12 ms",
    "0123456789abcdef" * 4,
    base64.b64encode(b"nothing to see here at all").decode(),
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    redactor = Redactor({NAME: PLAIN, "KEY": KEY, "DB_PASSWORD": "correct-horse-battery-staple-42"})
    assert redactor.redact(text) == text


def test_short_values_and_ordinary_words_inside_a_secret_are_no_secrets() -> None:
    redactor = Redactor({"PIN": "1234", "DB_PASSWORD": "correct-horse-battery-staple-42"})
    text = "pin 1234; a horse and a battery; the battery staple; correct horses"
    assert redactor.redact(text) == text
    assert redactor.redact("pw correct-horse-battery-staple-42!") == "pw [REDACTED:DB_PASSWORD]!"
    # a piece with the digits is no ordinary word
    assert "staple-42" not in redactor.redact("the end: horse-battery-staple-42")


def test_the_longest_whole_value_names_a_match() -> None:
    redactor = Redactor({"A_TOKEN": "abcdefgh12", "B_KEY": "abcdefgh12345"})
    assert redactor.redact("x abcdefgh12345 y abcdefgh12") == (
        "x [REDACTED:B_KEY] y [REDACTED:A_TOKEN]"
    )


def test_a_redactor_learns_a_secret_later() -> None:
    redactor = Redactor({"A_TOKEN": "abcdefgh12"})
    assert redactor.redact(PLAIN) == PLAIN
    redactor.add({"late provider API key": PLAIN})
    assert redactor.redact(base64.b64encode(PLAIN.encode()).decode()).startswith("[REDACTED:late")


def test_credentials_in_the_environment_are_known_whatever_their_name() -> None:
    env = {
        "LLM": KEY,  # shaped like a key
        "DATABASE_URL": f"postgres://app:{PLAIN}@db:5432/app",  # a password in a URL
        "DB_PASSWORD": SHORTISH,  # named like a secret
        "CALLBACK": f"https://api.example.com/hook?sessionid={PLAIN[::-1]}",
        "HOME": "/home/ann",
    }
    redactor = Redactor.from_environment(env)
    for value in (KEY, PLAIN, SHORTISH, PLAIN[::-1]):
        assert_redacted(redactor, base64.b64encode(value.encode()).decode(), value)
    assert redactor.redact("/home/ann") == "/home/ann"


# --- the environment rule --------------------------------------------------------------


def test_the_environment_is_an_allowlist_minus_every_known_secret() -> None:
    secrets = Redactor({"local API key": PLAIN})
    source = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/home/ann",
        "LC_TIME": "C",  # a family: LC_*
        "CONDA_PREFIX": "/opt/conda",
        "HTTPS_PROXY": "http://proxy:3128",
        "http_proxy": f"http://ann:{SHORTISH}@proxy:3128",  # a password in it: dropped
        "MY_CLAUDE": PLAIN,  # the provider key, by any name
        "LLM": KEY,  # shaped like a key
        "EXTRA_OPTS": f"--verbose --key={PLAIN}",  # holds it
        "ENCODED": base64.b64encode(PLAIN.encode()).decode(),  # holds it, encoded
        "HALF": PLAIN[: len(PLAIN) // 2 + 1],  # holds half of it
        "LANG": KEY[::-1],  # an allowlisted name is no pass for a secret
        "GITHUB_TOKEN": "not-shaped-but-named",  # named like a secret
        "ANTHROPIC_BASE_URL": "http://elsewhere",  # never
        "BASH_ENV": "/tmp/evil",  # never
        "BASH_FUNC_ls%%": "() { echo evil; }",  # never
        "UNLISTED": "harmless",  # not on any allowlist
    }
    env = child_env(source, allowlist=["EXTRA_OPTS", "ENCODED", "HALF", "MY_*"], secrets=secrets)
    assert env == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/home/ann",
        "LC_TIME": "C",
        "CONDA_PREFIX": "/opt/conda",
        "HTTPS_PROXY": "http://proxy:3128",
    }


def test_never_inherited_wins_over_an_allowlist_and_keep() -> None:
    source = {name: "x" for name in NEVER_INHERITED} | {"BASH_FUNC_f%%": "() { :; }"}
    env = child_env(source, allowlist=list(source), keep=list(source), secrets=Redactor())
    assert env == {}
    assert {"PATH", "HOME", "LANG", "LC_*", "TMPDIR", "HTTPS_PROXY"} <= set(DEFAULT_ALLOWLIST)


def test_configured_entries_are_set_as_written_and_keep_still_checks_secrets() -> None:
    secrets = Redactor({"local API key": PLAIN})
    env = child_env(
        {"PATH": "/bin", "MINE": "1", "SNEAKY": PLAIN[::-1]},
        keep=["MINE", "SNEAKY"],
        secrets=secrets,
        configured={"SERVER_KEY": PLAIN, "MEWCODE_PROJECT_DIR": "/p"},
    )
    assert env == {"PATH": "/bin", "MINE": "1", "SERVER_KEY": PLAIN, "MEWCODE_PROJECT_DIR": "/p"}


def test_bytes_environments_keep_their_type_and_a_lone_star_is_no_allowlist() -> None:
    secrets = Redactor({"k": PLAIN})
    source = {b"PATH": b"/bin", b"LEAK": PLAIN.encode(), b"OTHER": b"x"}
    assert child_env(source, allowlist=["*", "LEAK"], secrets=secrets) == {b"PATH": b"/bin"}


def test_a_rule_without_secrets_reads_them_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WHATEVER_NAME", KEY)
    monkeypatch.setenv("SERVICE_PASSWORD", PLAIN)
    env = ChildEnv(allowlist=("COPY_*",)).build(
        {"PATH": "/bin", "COPY_A": KEY, "COPY_B": f"x{PLAIN}x", "COPY_C": "fine"}
    )
    assert env == {"PATH": "/bin", "COPY_C": "fine"}


@pytest.mark.parametrize("secret", [KEY, PLAIN], ids=["sk-key", "plain"])
@pytest.mark.parametrize("encoding", ["base64", "base64 -w0 | tr '+/' '-_'", "xxd -p", "rev"])
def test_each_half_encoded_on_its_own_has_the_longer_half_masked(
    encoding: str, secret: str
) -> None:
    redactor = Redactor({NAME: secret})
    for cut in (len(secret) // 3, len(secret) // 2, len(secret) // 2 + 1, 2 * len(secret) // 3):
        first, second = secret[:cut], secret[cut:]
        printed = run(encoding, first) + "\n" + run(encoding, second)
        out = redactor.redact(printed)
        longer = first if len(first) >= len(second) else second
        assert run(encoding, longer).strip() not in out, (cut, printed, out)
        assert "[REDACTED:" in out
