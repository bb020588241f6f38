# ruff: noqa: F811  (the dirs fixture imported from tests._config is used as an argument)
"""MCP server config: ``mcp_servers`` in both YAML files and ``.mcp.json``,
the ``type`` rules, ``${VAR}`` expansion in ``env`` and ``headers`` only (per
file, before merging), bad entries reported with their file and skipped,
and every real ``.mcp.json`` we collected loading or rejected clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mewcode_kernel.core.config import MCP_JSON, ResolvedConfig, load_config
from tests._config import dirs, write  # noqa: F401

FIXTURES = Path(__file__).parent / "fixtures" / "mcp_configs"


def load(dirs: tuple[Path, Path], env: dict[str, str] | None = None) -> ResolvedConfig:
    root, home = dirs
    return load_config(root, home=home, env=env or {})


def messages(cfg: ResolvedConfig) -> list[str]:
    return [str(w) for w in cfg.warnings]


# --- every real .mcp.json ------------------------------------------------------------

# file -> {server: (type, command or url)}; every one of them loads with no warning
REAL_FILES: dict[str, dict[str, tuple[str, str]]] = {
    "anthropics__claude-plugins-official__external_plugins_context7__mcp.json": {
        "context7": ("http", "https://mcp.context7.com/mcp")
    },
    "anthropics__claude-plugins-official__external_plugins_discord__mcp.json": {
        "discord": ("stdio", "bun")
    },
    "anthropics__claude-plugins-official__external_plugins_fakechat__mcp.json": {
        "fakechat": ("stdio", "bun")
    },
    "anthropics__claude-plugins-official__external_plugins_github__mcp.json": {
        "github": ("http", "https://api.githubcopilot.com/mcp/")
    },
    "anthropics__claude-plugins-official__external_plugins_gitlab__mcp.json": {
        "gitlab": ("http", "https://gitlab.com/api/v4/mcp")
    },
    "anthropics__claude-plugins-official__external_plugins_greptile__mcp.json": {
        "greptile": ("http", "https://api.greptile.com/mcp")
    },
    "anthropics__claude-plugins-official__external_plugins_linear__mcp.json": {
        "linear": ("http", "https://mcp.linear.app/mcp")
    },
    "anthropics__claude-plugins-official__external_plugins_playwright__mcp.json": {
        "playwright": ("stdio", "npx")
    },
    "anthropics__claude-plugins-official__external_plugins_serena__mcp.json": {
        "serena": ("stdio", "uvx")
    },
    "anthropics__claude-plugins-official__external_plugins_terraform__mcp.json": {
        "terraform": ("stdio", "docker")
    },
    "anthropics__claude-plugins-official__plugins_example-plugin__mcp.json": {
        "example-server": ("http", "https://mcp.example.com/api")
    },
    "modelcontextprotocol__python-sdk__examples_clients_simple-chatbot_mcp_simple_chatbot__servers_config.json": {
        "sqlite": ("stdio", "uvx"),
        "puppeteer": ("stdio", "npx"),
    },
    "trailofbits__skills__plugins_second-opinion__mcp.json": {"codex": ("stdio", "codex")},
    "trailofbits__skills__plugins_zeroize-audit__mcp.json": {"serena": ("stdio", "uvx")},
}


def test_the_table_covers_every_fixture() -> None:
    assert sorted(REAL_FILES) == sorted(p.name for p in FIXTURES.glob("*.json"))


@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_mcp_json_loads_unchanged(dirs, name: str) -> None:
    root, _ = dirs
    (root / MCP_JSON).write_bytes((FIXTURES / name).read_bytes())
    cfg = load(dirs, {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp-x", "GREPTILE_API_KEY": "g-x"})
    assert messages(cfg) == []
    got = {
        n: (s.type, s.command if s.type == "stdio" else s.url) for n, s in cfg.mcp_servers.items()
    }
    assert got == REAL_FILES[name]
    for server in cfg.mcp_servers.values():
        assert server.scope == "project"
        assert server.source == str(root / MCP_JSON) and server.line is not None


def test_real_files_keep_args_literal_and_expand_headers(dirs) -> None:
    root, _ = dirs
    fixture = "anthropics__claude-plugins-official__external_plugins_"
    (root / MCP_JSON).write_bytes((FIXTURES / f"{fixture}discord__mcp.json").read_bytes())
    discord = load(dirs, {"CLAUDE_PLUGIN_ROOT": "/plugins/discord"}).mcp_servers["discord"]
    assert "${CLAUDE_PLUGIN_ROOT}" in discord.args  # args are never expanded

    (root / MCP_JSON).write_bytes((FIXTURES / f"{fixture}greptile__mcp.json").read_bytes())
    greptile = load(dirs, {"GREPTILE_API_KEY": "g-secret"}).mcp_servers["greptile"]
    assert greptile.headers == {"Authorization": "Bearer g-secret"}
    assert greptile.unset_vars == ()
    assert "g-secret" not in repr(greptile)

    unset = load(dirs).mcp_servers["greptile"]  # GREPTILE_API_KEY not set: empty, and said so
    assert unset.headers == {"Authorization": "Bearer "} and unset.unset_vars == (
        "GREPTILE_API_KEY",
    )

    (root / MCP_JSON).write_bytes((FIXTURES / f"{fixture}context7__mcp.json").read_bytes())
    context7 = load(dirs).mcp_servers["context7"]  # ${CONTEXT7_API_KEY:-}: a default, not unset
    assert context7.headers == {"Authorization": ""} and context7.unset_vars == ()


# --- bad .mcp.json files and entries ---------------------------------------------------

BAD_FILES = [
    ("not-json", '{"mcpServers": {"a": {"command": "x"},}}', "invalid JSON", 1),
    ("a-list", '[{"command": "x"}]', "top level must be a JSON object", 1),
    ("wrapper-not-object", '{"mcpServers": ["x"]}', "'mcpServers' must be an object", 1),
]


@pytest.mark.parametrize(("case", "text", "expected", "line"), BAD_FILES)
def test_unusable_mcp_json_is_reported_and_ignored(dirs, case, text, expected, line) -> None:
    root, _ = dirs
    (root / MCP_JSON).write_text(text)
    cfg = load(dirs)
    assert cfg.mcp_servers == {}
    [warning] = cfg.warnings
    assert warning.path == str(root / MCP_JSON) and warning.line == line
    assert expected in warning.message and "this file was ignored" in warning.message


def test_bad_entries_are_reported_with_their_file_and_skipped(dirs) -> None:
    root, _ = dirs
    (root / MCP_JSON).write_text(
        json.dumps(
            {
                "mcpServers": {
                    "good": {"command": "uvx", "args": ["srv"], "_docs": "a comment"},
                    "no-type": {"args": ["x"]},
                    "sse": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
                    "http-no-url": {"type": "http"},
                    "stdio-no-command": {"type": "stdio", "url": "http://x"},
                    "a-string": "npx server",
                    "extra": {"command": "x", "disabled": True},
                    "timeouts": {"url": "http://127.0.0.1:1/mcp", "timeout": -1},
                }
            },
            indent=2,
        )
    )
    cfg = load(dirs)
    assert sorted(cfg.mcp_servers) == ["extra", "good"]
    by_field = {w.field: w for w in cfg.warnings}
    assert set(by_field) == {
        "mcpServers.no-type",
        "mcpServers.sse",
        "mcpServers.http-no-url",
        "mcpServers.stdio-no-command",
        "mcpServers.a-string",
        "mcpServers.extra.disabled",
        "mcpServers.timeouts",
    }
    for w in cfg.warnings:
        assert w.path == str(root / MCP_JSON) and w.line is not None
    assert "missing type" in by_field["mcpServers.no-type"].message
    assert "server 'no-type' was ignored" in by_field["mcpServers.no-type"].message
    assert "'stdio', 'http' or 'streamable-http'" in by_field["mcpServers.sse"].message
    assert "needs 'url'" in by_field["mcpServers.http-no-url"].message
    assert "needs 'command'" in by_field["mcpServers.stdio-no-command"].message
    assert "must be an object" in by_field["mcpServers.a-string"].message
    assert "unknown key 'disabled'; it is ignored" in by_field["mcpServers.extra.disabled"].message
    assert "timeout" in by_field["mcpServers.timeouts"].message
    # a line points at the entry
    text = (root / MCP_JSON).read_text().splitlines()
    assert '"no-type"' in text[by_field["mcpServers.no-type"].line - 1]


def test_bare_map_and_wrapper_are_the_same(dirs) -> None:
    root, _ = dirs
    entry = {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp", "timeout": 5}
    (root / MCP_JSON).write_text(json.dumps({"web": entry}))
    bare = load(dirs).mcp_servers["web"]
    (root / MCP_JSON).write_text(json.dumps({"mcpServers": {"web": entry}}))
    wrapped = load(dirs).mcp_servers["web"]
    assert bare.type == wrapped.type == "http"  # streamable-http is http
    assert bare.timeout == wrapped.timeout == 5.0


# --- the YAML files -----------------------------------------------------------------------


def test_type_rules_in_yaml(dirs) -> None:
    root, _ = dirs
    path = write(
        root / ".mewcode.yaml",
        """
        mcp_servers:
          cmd: {command: uvx}
          web: {url: "http://127.0.0.1:9/mcp"}
          both: {command: uvx, url: "http://127.0.0.1:9/mcp"}
          streamable: {type: streamable-http, url: "http://127.0.0.1:9/mcp"}
          nothing: {args: [a]}
          timeouts: {command: x, timeout: 120, connect_timeout: 2.5}
        """,
    )
    cfg = load(dirs)
    types = {n: s.type for n, s in cfg.mcp_servers.items()}
    assert types == {
        "cmd": "stdio",
        "web": "http",
        "both": "stdio",  # command wins when type is left out
        "streamable": "http",
        "timeouts": "stdio",
    }
    [w] = cfg.warnings
    assert (w.path, w.line, w.field) == (str(path), 6, "mcp_servers.nothing")
    assert w.message.startswith("missing type") and "server 'nothing' was ignored" in w.message
    timeouts = cfg.mcp_servers["timeouts"]
    assert (timeouts.timeout, timeouts.connect_timeout) == (120.0, 2.5)


def test_expansion_is_per_file_before_merging_and_only_in_env_and_headers(dirs) -> None:
    root, home = dirs
    write(
        home / ".mewcode" / "config.yaml",
        """
        mcp_servers:
          gh:
            command: "${HOME_CMD}"
            args: ["--token", "${TOKEN}"]
            env: {TOKEN: "${TOKEN}", MODE: "${MODE:-user-default}", GONE: "${USER_ONLY_UNSET}"}
          web:
            url: "https://${HOST}/mcp"
            headers: {Authorization: "Bearer ${TOKEN}", X-Team: "${TEAM:-core}"}
        """,
    )
    write(
        root / ".mewcode.yaml",
        """
        mcp_servers:
          gh:
            command: gh-mcp
            env: {TOKEN: "${PROJECT_TOKEN}", MISSING: "${NOT_SET}"}
        """,
    )
    cfg = load(dirs, {"TOKEN": "t0k", "PROJECT_TOKEN": "p-t0k", "HOST": "example.org"})
    gh, web = cfg.mcp_servers["gh"], cfg.mcp_servers["web"]
    # the project entry replaced the user's whole: no user env, no user unset variables
    assert gh.command == "gh-mcp" and gh.args == ()
    assert dict(gh.env) == {"TOKEN": "p-t0k", "MISSING": ""}
    assert gh.unset_vars == ("NOT_SET",)
    assert gh.scope == "project" and gh.shadows is not None
    assert gh.shadows.command == "${HOME_CMD}"  # the user's entry, command literal
    assert gh.shadows.args == ("--token", "${TOKEN}")  # args literal
    assert dict(gh.shadows.env) == {"TOKEN": "t0k", "MODE": "user-default", "GONE": ""}
    assert gh.shadows.unset_vars == ("USER_ONLY_UNSET",)
    # url literal, headers expanded, defaults used
    assert web.url == "https://${HOST}/mcp"
    assert dict(web.headers) == {"Authorization": "Bearer t0k", "X-Team": "core"}
    assert web.scope == "user" and web.unset_vars == ()
    for text in (repr(cfg), repr(gh), repr(web), *messages(cfg)):
        assert "t0k" not in text


def test_project_files_override_in_order(dirs) -> None:
    root, home = dirs
    write(
        home / ".mewcode" / "config.yaml",
        "mcp_servers:\n  a: {command: user-a}\n  b: {command: user-b}\n  c: {command: user-c}\n",
    )
    (root / MCP_JSON).write_text(
        json.dumps({"mcpServers": {"b": {"command": "json-b"}, "c": {"command": "json-c"}}})
    )
    write(root / ".mewcode.yaml", "mcp_servers:\n  c: {command: yaml-c}\n")
    cfg = load(dirs)
    got = {n: (s.command, s.scope, Path(s.source).name) for n, s in cfg.mcp_servers.items()}
    assert got == {
        "a": ("user-a", "user", "config.yaml"),
        "b": ("json-b", "project", ".mcp.json"),
        "c": ("yaml-c", "project", ".mewcode.yaml"),
    }
    # the user's c is what stands in for the project's while the project is untrusted
    assert cfg.mcp_servers["c"].shadows.command == "user-c"


def test_env_allowlist_comes_from_the_user_file_only(dirs) -> None:
    root, home = dirs
    write(home / ".mewcode" / "config.yaml", "mcp_env_allowlist: [JAVA_HOME, NODE_OPTIONS]\n")
    path = write(root / ".mewcode.yaml", "mcp_env_allowlist: [AWS_SECRET_ACCESS_KEY]\n")
    cfg = load(dirs)
    assert cfg.mcp_env_allowlist == ("JAVA_HOME", "NODE_OPTIONS")
    [w] = cfg.warnings
    assert (w.path, w.line, w.field) == (str(path), 1, "mcp_env_allowlist")
    assert "read from ~/.mewcode/config.yaml only" in w.message
