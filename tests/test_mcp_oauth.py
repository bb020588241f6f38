"""OAuth for streamable-HTTP MCP servers, against a real OAuth-protected MCP
server and its own authorization server on 127.0.0.1 (``tests/oauth_server``,
the SDK's server auth): the first connection (``/mcp login``: discovery,
dynamic registration, PKCE, the redirect on a loopback port or pasted back),
a refresh, an expired refresh token, logout with revocation; then what a
hostile party tries: forged callbacks, a token echoed by the server, another
URL under the same name, links in the token folder, and authorization
servers that fail or hang. Every file MewCode wrote is scanned for tokens."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from mewcode_kernel.core import AgentSession, open_session
from mewcode_kernel.core.commands import CommandResult, run_command
from mewcode_kernel.core.events import ToolFinished
from mewcode_kernel.core.mcp.oauth_store import AUTH_DIR
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._mcp import provider_yaml, servers_yaml
from tests.oauth_server import OAuthWorld, Provider, hanging_server, oauth_world

pytestmark = pytest.mark.usefixtures("trusted_projects")

UNUSED_MODEL = "http://127.0.0.1:9"


@pytest.fixture
def world() -> Iterator[OAuthWorld]:
    with oauth_world() as w:
        yield w


def project(root: Path, url: str, *, model: str = UNUSED_MODEL, **entry: Any) -> Path:
    (root / ".mewcode.yaml").write_text(
        provider_yaml(model) + servers_yaml({"remote": {"url": url, **entry}}, allow=["mcp__*"])
    )
    return root


def session(root: Path) -> AgentSession:
    return open_session(root, home=root / "home", project_trusted=lambda: True)


def auth_dir(root: Path) -> Path:
    return root / "home" / ".mewcode" / AUTH_DIR


async def status(s: AgentSession) -> dict[str, Any]:
    result = await run_command(s, "/mcp")
    [row] = result.data
    return row


async def browser(link: str, *, deliver: bool = True) -> str:
    """What a person's browser does: open the link, approve (the test server
    approves at once) and follow the redirect to MewCode's loopback port."""
    async with httpx2.AsyncClient() as http:
        answer = await http.get(link)
        assert answer.status_code in (302, 303, 307), answer.text
        back = answer.headers["location"]
        if deliver:
            done = await http.get(back)
            assert done.status_code == 200, done.text
    return back


async def login(s: AgentSession) -> CommandResult:
    """``/mcp login remote``, the browser, and the wait for it to finish."""
    started = await run_command(s, "/mcp login remote")
    assert not started.error, started.markdown
    assert started.meta["card"] == "mcp_login"
    await browser(started.meta["url"])
    assert s.mcp is not None
    await s.mcp.logins.wait("remote")
    await asyncio.wait_for(s.mcp.wait_until(lambda m: m.state_of("remote") == "connected"), 30)
    return started


def mewcode_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def assert_no_token(root: Path, provider: Provider) -> None:
    """No token the authorization server ever issued is in any file under
    ``root`` (the project, its .mewcode folder, the sessions, the logs), in
    any form, except the token store itself."""
    assert provider.issued
    store = auth_dir(root)
    for path in mewcode_files(root):
        if path.is_relative_to(store):
            continue
        data = path.read_bytes()
        for token in provider.issued:
            for form in (token, token[3:], token[3:23], token[::-1]):
                assert form.encode() not in data, f"{token[:6]}... in {path}"


# --- the first connection -------------------------------------------------------------


async def test_first_connection_logs_in_through_the_loopback(
    tmp_path: Path, world: OAuthWorld
) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        before = await status(s)
        assert before["state"] == "failed"
        assert before["auth"] == "not logged in"
        assert "/mcp login remote" in before["error"]
        assert world.provider.registrations == 0  # connecting registers nowhere
        table = (await run_command(s, "/mcp")).markdown
        assert "not logged in" in table

        started = await login(s)
        link = urlsplit(started.meta["url"])
        query = parse_qs(link.query)
        assert query["code_challenge_method"] == ["S256"]  # PKCE
        assert query["redirect_uri"][0].startswith("http://127.0.0.1:")
        assert world.provider.registrations == 1  # dynamic client registration

        after = await status(s)
        assert after["state"] == "connected"
        assert after["auth"] == "logged in"
        assert after["tools"] == 2
        assert "logged in" in " ".join(n.message for n in s.mcp.drain_notices())

    [file] = auth_dir(tmp_path).iterdir()
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(auth_dir(tmp_path).stat().st_mode) == 0o700
    # a new session (a restarted kernel) connects with the stored tokens
    async with session(tmp_path) as s:
        assert (await status(s))["state"] == "connected"
    assert world.provider.registrations == 1


async def test_the_redirect_can_be_pasted_back(tmp_path: Path, world: OAuthWorld) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        started = await run_command(s, "/mcp login remote")
        back = await browser(started.meta["url"], deliver=False)
        pasted = await run_command(s, f"/mcp login remote {back}")
        assert not pasted.error, pasted.markdown
        await s.mcp.logins.wait("remote")
        await asyncio.wait_for(s.mcp.wait_until(lambda m: m.state_of("remote") == "connected"), 30)


# --- refresh, expiry, logout ----------------------------------------------------------


def _age_tokens(root: Path) -> None:
    """Make the stored access token look expired (as hours later)."""
    [file] = auth_dir(root).iterdir()
    data = json.loads(file.read_text())
    data["expires_at"] = 1.0
    file.write_text(json.dumps(data))


async def test_an_expired_access_token_is_refreshed(tmp_path: Path, world: OAuthWorld) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        await login(s)
    world.provider.expire_access()
    _age_tokens(tmp_path)
    async with session(tmp_path) as s:
        row = await status(s)
        assert row["state"] == "connected", row
        assert row["auth"] == "logged in"
    assert world.provider.refreshes == 1
    assert_no_token(tmp_path, world.provider)


async def test_an_expired_refresh_token_asks_for_a_login_again(
    tmp_path: Path, world: OAuthWorld
) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        await login(s)
    world.provider.expire_access()
    world.provider.expire_refresh()
    _age_tokens(tmp_path)
    async with session(tmp_path) as s:
        row = await status(s)
        assert row["state"] == "failed"
        assert row["auth"] == "expired"
        assert "/mcp login remote" in row["error"]
        await login(s)  # and logging in again works, without a new registration
        assert (await status(s))["auth"] == "logged in"
    assert world.provider.registrations == 1


async def test_logout_revokes_and_forgets_the_tokens(tmp_path: Path, world: OAuthWorld) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        await login(s)
        [file] = auth_dir(tmp_path).iterdir()
        stored = json.loads(file.read_text())["tokens"]
        out = await run_command(s, "/mcp logout remote")
        assert not out.error, out.markdown
        assert "revoked" in out.markdown
        assert stored["refresh_token"] in world.provider.revoked
        assert stored["access_token"] in world.provider.revoked
        row = await status(s)
        assert row["auth"] == "not logged in"
        assert row["state"] == "failed"
        assert json.loads(file.read_text())["tokens"] is None


# --- no token anywhere ------------------------------------------------------------------


async def test_no_token_reaches_the_model_the_session_or_any_file(
    tmp_path: Path, world: OAuthWorld
) -> None:
    """The server echoes the bearer token in a tool result: the model gets it
    redacted; the session log, hooks' payloads and every other file MewCode
    wrote hold no token."""
    hook_out = tmp_path / "hook-payloads.txt"
    script = [reply(tool_calls=[("mcp__remote__whoami", {}, "c1")]), reply(text="done")]
    with ScriptedServer(script) as model:
        project(tmp_path, world.url, model=model.base_url, connect_timeout=10)
        user = tmp_path / "home" / ".mewcode"
        user.mkdir(parents=True, exist_ok=True)
        (user / "hooks.yaml").write_text(
            "hooks:\n  - name: keep-payloads\n    event: PostToolUse\n"
            f"    action: {{type: shell, command: {json.dumps('cat >> ' + str(hook_out))}}}\n"
        )
        async with session(tmp_path) as s:
            await login(s)
            events = await collect(s.run("Who am I?"))
            [finished] = [e for e in events if isinstance(e, ToolFinished)]
        sent = json.dumps(model.requests)
    tokens = world.provider.issued
    assert "you called with" in str(finished.result.content)
    for token in tokens:
        assert token not in sent
        assert token not in str(finished.result.content)
    assert "you called with" in hook_out.read_text()  # the hook saw the (redacted) result
    assert_no_token(tmp_path, world.provider)


# --- hostile input ----------------------------------------------------------------------


async def test_a_forged_callback_is_ignored_and_the_real_one_still_works(
    tmp_path: Path, world: OAuthWorld
) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        started = await run_command(s, "/mcp login remote")
        back = await browser(started.meta["url"], deliver=False)
        real = urlsplit(back)
        state = parse_qs(real.query)["state"][0]
        base = f"{real.scheme}://{real.netloc}{real.path}"
        async with httpx2.AsyncClient() as http:
            for forged in (
                f"{base}?code=evil&state=not-the-state",
                f"{base}?code=evil",
                f"{base}?code=evil&state={state[:-1]}",
                f"{base}?code=evil&state={state}x",
                f"{base}?error=access_denied&state=wrong",
                f"{real.scheme}://{real.netloc}/other?code=evil&state={state}",
            ):
                answer = await http.get(forged)
                assert answer.status_code in (400, 404), forged
        bad = await run_command(s, f"/mcp login remote {base}?code=evil&state=forged")
        assert bad.error and "state" in bad.markdown
        async with httpx2.AsyncClient() as http:
            assert (await http.get(back)).status_code == 200
        await s.mcp.logins.wait("remote")
        await asyncio.wait_for(s.mcp.wait_until(lambda m: m.state_of("remote") == "connected"), 30)


async def test_a_refusal_in_the_redirect_ends_the_login_clearly(
    tmp_path: Path, world: OAuthWorld
) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        started = await run_command(s, "/mcp login remote")
        back = urlsplit(await browser(started.meta["url"], deliver=False))
        state = parse_qs(back.query)["state"][0]
        async with httpx2.AsyncClient() as http:
            refused = f"{back.scheme}://{back.netloc}{back.path}?error=access_denied&state={state}"
            assert (await http.get(refused)).status_code == 200
        with pytest.raises(Exception, match="access_denied"):
            await s.mcp.logins.wait("remote")
        row = await status(s)
        assert row["auth"] == "not logged in"
        assert (await run_command(s, "/mcp")).markdown  # the session still answers


async def test_another_url_under_the_same_name_gets_no_token(
    tmp_path: Path, world: OAuthWorld
) -> None:
    """A project that names its server like the user's, pointing elsewhere,
    never receives the user's token."""
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        await login(s)
    with oauth_world() as other:
        project(tmp_path, other.url, connect_timeout=10)
        async with session(tmp_path) as s:
            row = await status(s)
            assert row["auth"] == "not logged in"
            assert row["state"] == "failed"
        assert not other.provider.issued


async def test_a_linked_token_file_is_neither_read_nor_written_through(
    tmp_path: Path, world: OAuthWorld
) -> None:
    project(tmp_path, world.url, connect_timeout=10)
    async with session(tmp_path) as s:
        await login(s)
    [file] = auth_dir(tmp_path).iterdir()
    victim = tmp_path / "victim.json"
    victim.write_text(file.read_text())
    file.unlink()
    os.symlink(victim, file)
    before = victim.read_text()
    async with session(tmp_path) as s:
        assert (await status(s))["auth"] == "not logged in"  # not read through the link
        await login(s)
    assert victim.read_text() == before  # not written through the link
    assert not file.is_symlink()
    assert stat.S_IMODE(file.stat().st_mode) == 0o600


async def test_an_authorization_server_that_refuses_ends_with_a_clear_message(
    tmp_path: Path,
) -> None:
    with oauth_world(Provider(refuse_registration=True)) as world:
        project(tmp_path, world.url, connect_timeout=5)
        async with session(tmp_path) as s:
            out = await run_command(s, "/mcp login remote")
            assert out.error
            assert "login failed" in out.markdown
            assert "registration" in out.markdown.lower() or "closed" in out.markdown
            assert (await status(s))["auth"] == "not logged in"
            assert not (await run_command(s, "/mcp")).error


async def test_an_authorization_server_that_hangs_is_bounded(tmp_path: Path) -> None:
    with hanging_server() as dead, oauth_world(issuer=dead) as world:
        project(tmp_path, world.url, connect_timeout=1)
        async with session(tmp_path) as s:
            started = asyncio.get_running_loop().time()
            out = await run_command(s, "/mcp login remote")
            took = asyncio.get_running_loop().time() - started
            assert out.error
            assert "did not answer within 1 s" in out.markdown
            assert took < 15
            assert not (await run_command(s, "/mcp")).error


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://as.example/authorize?a=1&b=2", "https://as.example/authorize?a=1&b=2"),
        ("http://127.0.0.1:5/authorize?x=y", "http://127.0.0.1:5/authorize?x=y"),
        ("http://localhost/authorize", "http://localhost/authorize"),
        (
            "https://as.example/a)](javascript:alert(1))",
            "https://as.example/a%29%5D%28javascript:alert%281%29%29",
        ),
        ("https://as.example/a b<script>`x`", "https://as.example/a%20b%3Cscript%3E%60x%60"),
        ("http://as.example/authorize", None),  # plain http to another machine
        ("javascript:alert(1)", None),
        ("data:text/html,<b>x</b>", None),
        ("file:///etc/passwd", None),
        ("http://127.0.0.1.evil.example/authorize", None),
    ],
)
def test_the_card_shows_only_safe_links(url: str, shown: str | None) -> None:
    from mewcode_kernel.core.commands.mcp_login import card_link

    assert card_link(url) == shown
