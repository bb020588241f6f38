"""Where a kernel works: the project root (``MEWCODE_ROOT``, else
``KERNEL_WORKING_DIR``, else the working directory), the notebook
(``JPY_SESSION_NAME``), and what a missing variable's message says under a
gateway. Values a client or a hostile notebook server could send are tried:
relative paths, files, links, NUL bytes, blanks."""

from __future__ import annotations

from pathlib import Path

import pytest

from mewcode_kernel.core.errors import ConfigError
from mewcode_kernel.core.locations import (
    forwarding_hint,
    gateway_evidence,
    locate_root,
    notebook_path,
)

EG = {"EG_IMPERSONATION_ENABLED": "False"}


def test_mewcode_root_wins_over_the_gateways_folder_and_the_argument(tmp_path: Path) -> None:
    chosen, sent = tmp_path / "chosen", tmp_path / "sent"
    chosen.mkdir()
    sent.mkdir()
    env = {"MEWCODE_ROOT": str(chosen), "KERNEL_WORKING_DIR": str(sent)}
    found = locate_root(tmp_path, env, cwd=tmp_path)
    assert (found.path, found.source) == (chosen, "MEWCODE_ROOT")
    found = locate_root(None, {"KERNEL_WORKING_DIR": str(sent)}, cwd=tmp_path)
    assert (found.path, found.source, found.problems) == (sent, "KERNEL_WORKING_DIR", ())
    found = locate_root(None, {"KERNEL_WORKING_DIR": "  "}, cwd=tmp_path)
    assert (found.path, found.source) == (tmp_path, "working directory")


def test_links_are_resolved_to_the_folder_they_name(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert locate_root(None, {"KERNEL_WORKING_DIR": str(tmp_path / "link")}).path == real
    assert locate_root(None, {"MEWCODE_ROOT": str(tmp_path / "link")}).path == real


@pytest.mark.parametrize(
    "sent",
    ["relative/dir", "../..", "", "/no/such/folder", "/etc/hostname", "/tmp\x00/x", "~"],
)
def test_a_kernel_working_dir_naming_no_folder_is_passed_over_with_the_fix(
    tmp_path: Path, sent: str
) -> None:
    found = locate_root(None, {"KERNEL_WORKING_DIR": sent}, cwd=tmp_path)
    assert found.path == tmp_path and found.source == "working directory"
    if sent.strip():
        assert len(found.problems) == 1 and "MEWCODE_ROOT" in found.problems[0]


@pytest.mark.parametrize("chosen", ["/no/such/folder", "/etc/hostname", "/tmp\x00/x"])
def test_a_mewcode_root_naming_no_folder_is_an_error_never_a_silent_elsewhere(
    chosen: str,
) -> None:
    with pytest.raises(ConfigError, match="MEWCODE_ROOT"):
        locate_root(None, {"MEWCODE_ROOT": chosen})


def test_the_notebook_is_taken_relative_to_the_project(tmp_path: Path) -> None:
    env = {"JPY_SESSION_NAME": "sub/../nb.ipynb"}
    assert notebook_path(tmp_path, env) == tmp_path / "nb.ipynb"
    assert notebook_path(tmp_path, {"JPY_SESSION_NAME": "/abs/nb.ipynb"}) == Path("/abs/nb.ipynb")
    assert notebook_path(tmp_path, {"JPY_SESSION_NAME": "a\x00b"}) is None
    assert notebook_path(tmp_path, {}) is None


def test_a_missing_key_under_a_gateway_names_the_settings_that_forward_it() -> None:
    assert gateway_evidence({}) is None and forwarding_hint(["ANTHROPIC_API_KEY"], {}) == ""
    assert "Enterprise Gateway" in (gateway_evidence(EG) or "")
    hint = forwarding_hint(["ANTHROPIC_API_KEY"], EG)
    for part in ("ANTHROPIC_API_KEY", "EG_CLIENT_ENVS", "c.GatewayClient.allowed_envs", "keys.env"):
        assert part in hint, hint
    # a setting that is no secret never goes to the key file
    assert "keys.env" not in forwarding_hint(["ANTHROPIC_BASE_URL"], EG)
    assert "kernelspec" in forwarding_hint(["ANTHROPIC_BASE_URL"], {"KERNEL_GATEWAY": "1"})
