"""What the kernel tools show the model of a notebook's values keeps secrets
out, however they are held: a DataFrame column named like one, a dict key, a
dataclass field, a key cut by a repr or a table's column width, credential
shapes beyond ``sk-...`` (Hugging Face, Stripe, a JWT, a password in a URL),
an exception message."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest

from magics.kernel_tools.errors import ErrorRecord
from magics.kernel_tools.namespace import describe, describe_in_depth, mask_keys

KEY = "sk-ant-api03-" + "Q7" * 20
HIDDEN = ("tok-9f8e7d6c5b", "Q7Q7Q7", "hunter2hunter2")


def shown(text: str) -> str:
    for secret in HIDDEN:
        assert secret not in text, text
    return text


def both(name: str, value: object) -> str:
    return shown(describe(name, value)) + "\n" + shown(describe_in_depth(name, value))


def test_a_frame_column_named_like_a_secret_is_masked_in_the_head_and_the_statistics() -> None:
    users = pd.DataFrame({"user": ["ann", "bob"], "api_token": ["tok-9f8e7d6c5b"] * 2})
    text = both("users", users)
    assert "ann" in text and "api_token" in text and "[masked]" in text
    assert "top" in text  # describe(include="all") ran, without the secret column's top value


def test_a_key_in_a_frame_cell_or_column_name_is_masked_before_the_cell_is_cut() -> None:
    for width in (5, 25, 30, 40):
        frame = pd.DataFrame({"note": ["x" * width + KEY, "ok"], KEY: [1, 2]})
        text = both("frame", frame)
        assert "sk-ant" not in text.replace("[masked]", ""), (width, text)


def test_a_value_under_a_secret_key_or_field_is_masked() -> None:
    @dataclass
    class Settings:
        password: str
        host: str

    text = both("cfg", {"db": {"password": "hunter2hunter2", "host": "db"}, "n": 1})
    assert "'host': 'db'" in text
    text = both("settings", Settings("hunter2hunter2", "db"))
    assert "host='db'" in text and "password='[masked]'" in text


def test_a_key_at_a_repr_cut_is_masked_before_the_cut() -> None:
    for before in range(40, 80, 3):
        text = both("notes", ["x" * before + KEY + "y" * 200])
        assert "sk-ant-api" not in text, (before, text)


@pytest.mark.parametrize(
    ("secret", "kept"),
    [
        ("hf_" + "a1B2" * 9, ""),
        ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", ""),
        ("rk_test_" + "4eC39HqLyjWDarjtT1zdp7dc", ""),
        ("glpat-" + "xY3" * 8, ""),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            "",
        ),
        ("postgresql://analyst:hunter2hunter2@db.internal:5432/sales", "postgresql://analyst:"),
        ("https://api.example.com/v1/data?format=csv&api_key=tok-9f8e7d6c5b", "format=csv"),
        ("https://example.com/x?access_token=tok-9f8e7d6c5b#top", "#top"),
    ],
)
def test_credential_shapes_are_masked(secret: str, kept: str) -> None:
    masked = mask_keys(f"value: {secret} end")
    assert "[masked]" in masked and kept in masked and "end" in masked
    assert secret not in masked
    text = both("connection", secret)
    assert secret not in text


def test_ordinary_text_is_left_alone() -> None:
    for text in (
        "http://127.0.0.1:8888/lab?token",
        "https://example.com/search?q=pandas&page=2",
        "see hf_hub_download() and sk_lite",
        "email me at ann@example.com",
    ):
        assert mask_keys(text) == text


def test_an_exception_message_and_traceback_are_masked_before_they_are_cut() -> None:
    try:
        raise ConnectionError(
            "x" * 150 + " could not reach postgresql://analyst:hunter2hunter2@db/sales " + KEY
        )
    except ConnectionError as exc:
        record = ErrorRecord(error=exc, cell="connect()", execution_count=3)
    shown(record.headline)
    shown(record.report())
