# ruff: noqa: F811  (the dirs fixture imported from tests._config is used as an argument)
from __future__ import annotations

from pathlib import Path

import pytest

from mewcode_kernel.core.config import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_MODEL,
    ResolvedConfig,
    load_config,
)
from mewcode_kernel.core.errors import ConfigError
from tests._config import dirs, write  # noqa: F401


def user_file(home: Path, text: str) -> Path:
    return write(home / ".mewcode" / "config.yaml", text)


def project_file(root: Path, text: str) -> Path:
    return write(root / ".mewcode.yaml", text)


def load(dirs: tuple[Path, Path], env: dict[str, str] | None = None) -> ResolvedConfig:
    root, home = dirs
    return load_config(root, home=home, env=env or {})


# --- layering ---------------------------------------------------------------


def test_no_files_no_env_gives_replay(dirs):
    cfg = load(dirs)
    assert cfg.warnings == []
    assert cfg.files == ()
    settings = cfg.select_provider()
    assert settings.name == "replay"
    assert settings.protocol == "replay"
    assert settings.is_offline


def test_empty_files_are_empty_config(dirs):
    root, home = dirs
    user_file(home, "")
    project_file(root, "# only a comment\n")
    cfg = load(dirs)
    assert cfg.warnings == []
    assert len(cfg.files) == 2
    assert cfg.providers == {}


def test_project_overrides_user_per_key(dirs):
    root, home = dirs
    user_file(
        home,
        """
        providers:
          a: {protocol: anthropic, api_key: k1}
          b: {protocol: openai, api_key: k2}
        default_provider: a
        default_model: m-user
        """,
    )
    project_file(root, "default_provider: b\n")
    cfg = load(dirs)
    assert cfg.warnings == []
    assert cfg.default_provider == "b"
    assert cfg.default_model == "m-user"
    settings = cfg.select_provider()
    assert (settings.name, settings.protocol, settings.model) == ("b", "openai", "m-user")


def test_provider_entries_merge_per_field(dirs):
    root, home = dirs
    user_file(
        home,
        """
        providers:
          work: {protocol: anthropic, model: claude-opus-4-1, api_key: sk-user, max_tokens: 1000}
          solo: {protocol: openai, api_key: sk-solo}
        """,
    )
    project_file(
        root,
        """
        providers:
          work:
            model: claude-sonnet-4-5
          extra: {protocol: openai, api_key: sk-extra, model: gpt-4o}
        """,
    )
    cfg = load(dirs)
    assert list(cfg.providers) == ["work", "solo", "extra"]
    work = cfg.select_provider("work")
    assert work.model == "claude-sonnet-4-5"  # project field wins
    assert work.max_tokens == 1000  # user field kept
    assert work.api_key is not None and work.api_key.get_secret_value() == "sk-user"
    assert work.origin.endswith(".mewcode.yaml:2")
    assert cfg.select_provider("extra").context_window == 128_000


def test_user_key_not_inherited_when_project_moves_the_endpoint(dirs):
    root, home = dirs
    user_file(home, "providers:\n  work: {protocol: openai, model: m, api_key: sk-user}\n")
    project_file(root, "providers:\n  work: {base_url: 'https://elsewhere.example/v1'}\n")
    work = load(dirs).select_provider("work")
    assert work.base_url == "https://elsewhere.example/v1"
    assert work.api_key is None


def test_permissions_concatenate_and_remember_their_source(dirs):
    root, home = dirs
    user = user_file(home, "permissions:\n  allow:\n    - Bash(ls:*)\n  deny: [Read(.env)]\n")
    project = project_file(
        root, "permissions:\n  allow: Bash(npm test:*)\n  ask:\n    - Bash\n    - Edit\n"
    )
    cfg = load(dirs)
    got = [(r.action, r.rule, r.source, r.line) for r in cfg.permission_rules]
    assert got == [
        ("allow", "Bash(ls:*)", str(user), 3),
        ("deny", "Read(.env)", str(user), 4),
        ("allow", "Bash(npm test:*)", str(project), 2),
        ("ask", "Bash", str(project), 4),
        ("ask", "Edit", str(project), 5),
    ]


def test_mcp_servers_project_entry_replaces_user_entry(dirs):
    root, home = dirs
    user_file(
        home,
        """
        mcp_servers:
          fs: {command: npx, args: [-y, fs-server], env: {TOKEN: "${TOKEN}"}}
          web: {type: http, url: "https://mcp.example/mcp", headers: {Authorization: "Bearer x"}}
        """,
    )
    project_file(root, "mcp_servers:\n  fs:\n    command: uvx\n    args: [fs, 8080]\n")
    cfg = load(dirs)
    fs, web = cfg.mcp_servers["fs"], cfg.mcp_servers["web"]
    assert (fs.type, fs.command, fs.args, dict(fs.env)) == ("stdio", "uvx", ("fs", "8080"), {})
    assert (web.type, web.url) == ("http", "https://mcp.example/mcp")
    assert dict(web.headers) == {"Authorization": "Bearer x"}  # stored unexpanded
    assert "Bearer" not in repr(web)


def test_providers_as_a_named_list(dirs):
    root, _ = dirs
    project_file(
        root,
        """
        providers:
          - name: one
            protocol: anthropic
            api_key: k
          - protocol: openai
          - name: two
            protocol: openai
            api_key: k
            max_tokens: lots
        """,
    )
    cfg = load(dirs)
    assert list(cfg.providers) == ["one"]
    problems = [(w.line, w.field) for w in cfg.warnings]
    assert problems == [(5, "providers[1]"), (9, "providers.two.max_tokens")]
    with pytest.raises(ConfigError, match="two"):
        cfg.select_provider("two")


# --- ${VAR} -----------------------------------------------------------------


def test_vars_expand_in_api_key_and_base_url_only(dirs):
    root, _ = dirs
    project_file(
        root,
        """
        providers:
          gw:
            protocol: openai
            model: "${NOT_EXPANDED}"
            base_url: "${GW_URL:-http://localhost:4000}/v1"
            api_key: "${GW_KEY}"
        """,
    )
    settings = load(dirs, {"GW_KEY": "sk-gw"}).select_provider("gw")
    assert settings.base_url == "http://localhost:4000/v1"
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-gw"
    assert settings.model == "${NOT_EXPANDED}"
    other = load(dirs, {"GW_KEY": "k", "GW_URL": "https://gw.example"}).select_provider("gw")
    assert other.base_url == "https://gw.example/v1"


def test_missing_var_makes_provider_unusable_not_the_load(dirs):
    root, _ = dirs
    project_file(
        root,
        """
        providers:
          ok: {protocol: anthropic, api_key: plain}
          needs:
            protocol: anthropic
            api_key: ${MISSING_KEY}
        """,
    )
    cfg = load(dirs)
    assert cfg.warnings == []
    assert cfg.select_provider("ok").name == "ok"
    with pytest.raises(ConfigError) as info:
        cfg.select_provider("needs")
    err = info.value
    assert "${MISSING_KEY}" in str(err)
    assert err.line == 5 and err.field == "providers.needs.api_key"
    assert err.path == str(root / ".mewcode.yaml")


def test_project_value_clears_user_missing_var(dirs):
    root, home = dirs
    user_file(home, "providers:\n  a: {protocol: anthropic, api_key: '${NOPE}'}\n")
    project_file(root, "providers:\n  a: {api_key: direct}\n")
    assert load(dirs).select_provider("a").api_key is not None


# --- provider selection -----------------------------------------------------


def test_env_providers_when_nothing_configured(dirs):
    env = {"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-oai"}
    cfg = load(dirs, env)
    assert cfg.available_providers() == ["anthropic", "openai", "replay"]
    ant = cfg.select_provider()
    assert (ant.name, ant.protocol, ant.model) == (
        "anthropic",
        "anthropic",
        DEFAULT_ANTHROPIC_MODEL,
    )
    assert ant.context_window == 200_000 and ant.base_url is None
    oai = cfg.select_provider("openai")
    assert (oai.model, oai.context_window) == (DEFAULT_OPENAI_MODEL, 1_047_576)


def test_env_openai_only_and_sdk_base_url(dirs):
    env = {"OPENAI_API_KEY": "sk-oai", "OPENAI_BASE_URL": "https://proxy.example/v1"}
    settings = load(dirs, env).select_provider()
    assert (settings.name, settings.base_url) == ("openai", "https://proxy.example/v1")


def test_configured_providers_replace_env_ones(dirs):
    root, _ = dirs
    project_file(root, "providers:\n  mine: {protocol: anthropic}\n")
    cfg = load(dirs, {"ANTHROPIC_API_KEY": "sk-env", "ANTHROPIC_BASE_URL": "https://p.example"})
    assert cfg.available_providers() == ["mine", "replay"]
    mine = cfg.select_provider()  # the only configured one is the default
    assert mine.api_key is not None and mine.api_key.get_secret_value() == "sk-env"
    assert mine.base_url == "https://p.example"


def test_protocol_inferred_from_a_well_known_name(dirs):
    root, _ = dirs
    project_file(root, "providers:\n  openai: {model: gpt-4o}\n")
    settings = load(dirs, {"OPENAI_API_KEY": "sk"}).select_provider()
    assert (settings.name, settings.protocol, settings.model) == ("openai", "openai", "gpt-4o")


def test_official_endpoint_without_any_key_is_unusable(dirs):
    root, _ = dirs
    project_file(root, "providers:\n  mine: {protocol: anthropic}\n")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        load(dirs).select_provider("mine")
    # as the default it is reported when used, not when config is read
    default = load(dirs).select_provider()
    assert default.name == "mine" and "ANTHROPIC_API_KEY" in (default.problem or "")


def test_a_default_provider_missing_its_variable_fails_only_when_used(dirs):
    """README's sample config without ANTHROPIC_API_KEY: the default provider is
    reported at its first request; the local one works."""
    root, _ = dirs
    project_file(
        root,
        "default_provider: claude\nproviders:\n  claude:\n    protocol: anthropic\n"
        "    model: claude-sonnet-4-5\n    api_key: ${ANTHROPIC_API_KEY}\n"
        "  local:\n    protocol: openai\n    model: qwen2.5-coder\n"
        "    base_url: http://127.0.0.1:8000/v1\n    api_key: ${LOCAL_KEY:-none}\n",
    )
    cfg = load(dirs)
    claude = cfg.select_provider()
    assert claude.problem is not None and ".mewcode.yaml:6" in claude.problem
    assert "${ANTHROPIC_API_KEY}" in claude.problem
    assert cfg.select_provider("local").problem is None
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        cfg.select_provider("claude")  # asked for by name: at once


def test_custom_endpoint_needs_model_but_no_key(dirs):
    root, _ = dirs
    project_file(
        root,
        """
        providers:
          local: {protocol: openai, base_url: "http://localhost:11434/v1", model: llama3}
          nomodel: {protocol: openai, base_url: "http://localhost:8000/v1"}
          noproto: {model: x}
        """,
    )
    cfg = load(dirs, {"OPENAI_API_KEY": "sk-must-not-leak"})
    local = cfg.select_provider("local")
    assert local.api_key is None and local.max_tokens is None
    with pytest.raises(ConfigError, match="no 'model'"):
        cfg.select_provider("nomodel")
    with pytest.raises(ConfigError, match="no 'protocol'") as info:
        cfg.select_provider("noproto")
    assert info.value.line == 4


def test_mewcode_provider_and_model_override_the_default(dirs):
    root, _ = dirs
    project_file(
        root,
        """
        providers:
          a: {protocol: anthropic, api_key: k}
          b: {protocol: openai, api_key: k, model: gpt-4o}
        default_provider: a
        default_model: claude-opus-4-1
        """,
    )
    assert load(dirs).select_provider().model == "claude-opus-4-1"
    cfg = load(dirs, {"MEWCODE_PROVIDER": "b"})
    assert cfg.select_provider().name == "b"
    # default_model belongs to the default selection, which is now b
    assert cfg.select_provider().model == "claude-opus-4-1"
    cfg = load(dirs, {"MEWCODE_PROVIDER": "b", "MEWCODE_MODEL": "gpt-5"})
    assert cfg.select_provider().model == "gpt-5"
    assert cfg.select_provider().context_window == 400_000
    # an explicit name that is not the default uses its own model
    assert cfg.select_provider("a").model == "claude-sonnet-4-5"
    # an explicit model always wins
    assert cfg.select_provider(model="gpt-4.1-mini").model == "gpt-4.1-mini"


def test_unknown_provider_lists_available_names(dirs):
    root, _ = dirs
    project_file(root, "providers:\n  a: {protocol: anthropic, api_key: k}\n")
    with pytest.raises(ConfigError) as info:
        load(dirs).select_provider("nope")
    assert "'nope'" in str(info.value) and "a, replay" in str(info.value)
    with pytest.raises(ConfigError, match="MEWCODE_PROVIDER"):
        load(dirs, {"MEWCODE_PROVIDER": "zzz"}).select_provider()


def test_unknown_default_provider_names_its_line(dirs):
    root, _ = dirs
    path = project_file(
        root, "providers:\n  a: {protocol: anthropic, api_key: k}\ndefault_provider: b\n"
    )
    with pytest.raises(ConfigError) as info:
        load(dirs).select_provider()
    assert (info.value.path, info.value.line, info.value.field) == (
        str(path),
        3,
        "default_provider",
    )


# --- errors and warnings ----------------------------------------------------


def test_bad_yaml_names_file_and_line_and_user_layer_still_used(dirs):
    root, home = dirs
    user_file(home, "providers:\n  u: {protocol: anthropic, api_key: k}\n")
    path = project_file(root, "providers:\n  p: {protocol: openai\n  q: 1\ndefault_provider: p\n")
    cfg = load(dirs)
    assert len(cfg.warnings) == 1
    err = cfg.warnings[0]
    assert err.path == str(path) and err.line == 3
    assert f"{path}:3" in str(err) and "invalid YAML" in str(err)
    assert cfg.files == (home / ".mewcode" / "config.yaml",)
    assert cfg.select_provider().name == "u"


def test_nested_wrong_type_names_line_and_field_path(dirs):
    root, _ = dirs
    path = project_file(
        root,
        """
        default_provider: p
        providers:
          p:
            protocol: anthropic
            api_key: k
            context_window: lots
        """,
    )
    cfg = load(dirs)
    [err] = cfg.warnings
    assert (err.path, err.line, err.field) == (str(path), 6, "providers.p.context_window")
    assert "valid integer" in err.message
    assert f"{path}:6 (providers.p.context_window)" in str(err)
    with pytest.raises(ConfigError, match="context_window"):
        cfg.select_provider()


def test_a_bad_deny_entry_keeps_the_file_and_its_other_rules(dirs):
    """A deny entry that is not a rule string used to drop the whole file, and
    with it every deny rule it held (fail-open). The entry is now kept for the
    permission engine, which makes what it may cover ask (fail closed)."""
    root, home = dirs
    user_file(home, "providers:\n  u: {protocol: openai, api_key: k}\npermissions: {allow: [X]}\n")
    project_file(
        root,
        """
        default_provider: u
        permissions:
          deny:
            - Bash(rm:*)
            - {tool: Bash}
        """,
    )
    cfg = load(dirs)
    assert cfg.warnings == []
    assert [r.rule for r in cfg.permission_rules] == ["X", "Bash(rm:*)", {"tool": "Bash"}]
    assert cfg.permission_rules[-1].line == 5
    assert cfg.select_provider().name == "u"


def test_broken_project_layer_is_skipped_user_layer_used(dirs):
    root, home = dirs
    user_file(home, "providers:\n  u: {protocol: openai, api_key: k}\npermissions: {allow: [X]}\n")
    path = project_file(root, "default_provider: p\nproviders: [unclosed\n")
    cfg = load(dirs)
    [err] = cfg.warnings
    assert err.path == str(path) and "ignored" in err.message
    assert cfg.default_provider is None
    assert [r.rule for r in cfg.permission_rules] == ["X"]
    assert cfg.select_provider().name == "u"
    assert cfg.unreadable_rule_files == ()  # it mentions no deny rules


def test_an_unreadable_file_that_held_deny_rules_is_reported(dirs):
    root, _ = dirs
    path = project_file(root, "permissions:\n  deny: [Read(./secrets/**)\n")
    cfg = load(dirs)
    assert cfg.unreadable_rule_files == (str(path),)


def test_top_level_must_be_a_mapping(dirs):
    root, _ = dirs
    project_file(root, "- a\n- b\n")
    [err] = load(dirs).warnings
    assert err.line == 1 and "mapping" in err.message


def test_unknown_keys_warn_with_file_line_and_hint(dirs):
    _, home = dirs
    path = user_file(
        home,
        """
        provider:
          a: {protocol: anthropic}
        providers:
          b:
            protocol: anthropic
            api_key: k
            modle: claude-opus-4-1
        """,
    )
    cfg = load(dirs)
    got = [(w.path, w.line, w.field) for w in cfg.warnings]
    assert got == [(str(path), 1, "provider"), (str(path), 7, "providers.b.modle")]
    assert "did you mean 'providers'" in cfg.warnings[0].message
    assert "did you mean 'model'" in cfg.warnings[1].message
    assert cfg.select_provider("b").model == DEFAULT_ANTHROPIC_MODEL  # the rest still applies


def test_duplicate_keys_warn(dirs):
    root, _ = dirs
    project_file(root, "default_model: a\ndefault_model: b\n")
    cfg = load(dirs)
    [err] = cfg.warnings
    assert err.line == 2 and "duplicate" in err.message
    assert cfg.default_model == "b"


def test_invalid_mcp_server_is_dropped_alone(dirs):
    root, _ = dirs
    project_file(
        root,
        "mcp_servers:\n  ok: {command: x}\n  bad: {type: http}\n  worse: {type: sse, url: u}\n",
    )
    cfg = load(dirs)
    assert list(cfg.mcp_servers) == ["ok"]
    assert [(w.line, w.field) for w in cfg.warnings] == [
        (3, "mcp_servers.bad"),
        (4, "mcp_servers.worse.type"),
    ]


def test_unreadable_file_is_a_warning(dirs):
    root, _ = dirs
    (root / ".mewcode.yaml").write_bytes(b"default_model: \xff\xfe\n")
    [err] = load(dirs).warnings
    assert "UTF-8" in err.message


# --- secrets ----------------------------------------------------------------


def test_secrets_never_in_reprs_or_messages(dirs):
    root, home = dirs
    user_file(
        home,
        """
        providers:
          a: {protocol: anthropic, api_key: sk-literal-secret, context_window: x}
          b: {protocol: openai, api_key: "${KEY_B}"}
        mcp_servers:
          s: {command: c, env: {TOKEN: tok-secret}, wrong: 1}
        """,
    )
    project_file(root, "providers:\n  a: {api_key: 123}\n")
    env = {"KEY_B": "sk-env-secret", "ANTHROPIC_API_KEY": "sk-ant-secret"}
    cfg = load(dirs, env)
    settings = cfg.select_provider("b")
    assert settings.api_key is not None
    texts = [repr(cfg), str(cfg), repr(settings), str(settings)]
    texts += [str(w) for w in cfg.warnings] + [repr(w) for w in cfg.warnings]
    for text in texts:
        for secret in ("sk-literal-secret", "sk-env-secret", "sk-ant-secret", "tok-secret"):
            assert secret not in text
