# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Hooks in a real ``mewcode`` kernel, driven from notebook cells with a
scripted model: every event with its payload, every action type, blocking,
permission decisions, changed input, context for the model, stopping the
turn, hooks that fail (the turn goes on), async and only-once rules, Claude
Code's settings used unchanged, and the attacks: payload injection, API keys
in the environment, project hooks run before trust or after a change.

The user's rules are written to ``~/.mewcode/hooks.yaml`` and read again by
``/clear``. Shell hooks write what they saw under the project (``hook-out/``).
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply, status
from tests._fifo import Fifo
from tests._kernel import (  # noqa: F401
    Kernel,
    anthropic_openai_config,
    jupyter_path,
    kernel_env,
    running_kernel,
    script,
    server,
)

FIXTURES = Path(__file__).parent / "fixtures" / "claude_hooks"
SECRET = "sk-ant-hooks-must-never-see-this"
LOG = 'cat >> "$MEWCODE_PROJECT_DIR/hook-out/events.jsonl"'


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    (home / ".mewcode").mkdir()
    return home


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / ".mewcode.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    (root / "notes.txt").write_text("hello from the notes\n")
    agents = root / ".mewcode" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a tool call before it runs.\n"
        "tools: read_file\n---\nYou review tool calls. Answer with JSON.\n"
    )
    return root


@pytest.fixture(scope="module")
def kernel(project: Path, home: Path, jupyter_path: Path) -> Iterator[Kernel]:
    env = kernel_env(home, ANTHROPIC_API_KEY=SECRET, MEWCODE_HEADLESS_APPROVAL="allow")
    with running_kernel(project, env) as k:
        yield k


@pytest.fixture
def out(project: Path) -> Path:
    """A clean ``hook-out/`` for what this test's hooks write."""
    path = project / "hook-out"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    return path


def use_hooks(kernel: Kernel, home: Path, rules: str) -> Kernel:
    """Make ``rules`` the user's hooks and start a new session that reads them."""
    (home / ".mewcode" / "hooks.yaml").write_text("hooks:\n" + rules)
    kernel.ok("%agent /clear")
    return kernel


def logged(out: Path) -> list[dict[str, Any]]:
    path = out / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block["type"] == "text":
            parts.append(block["text"])
        elif block["type"] == "tool_result":
            inner = block["content"]
            parts.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(parts)


def results_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        b["tool_use_id"]: b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"
    }


def shell_rule(name: str, event: str, command: str, extra: str = "") -> str:
    return (
        f"  - name: {name}\n    event: {event}\n{extra}"
        f"    action: {{type: shell, command: {json.dumps(command)}}}\n"
    )


# --- every event --------------------------------------------------------------------------

EVENTS: dict[str, set[str]] = {
    "SessionStart": {"source"},
    "UserPromptSubmit": {"prompt"},
    "PreUserMessage": {"iter"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PostToolUse": {
        "tool_name",
        "tool_input",
        "tool_use_id",
        "tool_result",
        "tool_response",
        "is_error",
        "duration_ms",
    },
    "Stop": {"iter", "stop_hook_active", "last_assistant_message"},
    "PreCompact": {"trigger", "before_tokens"},
    "PostCompact": {"trigger", "before_tokens", "after_tokens"},
    "Notification": {"kind", "detail"},
    "SessionEnd": {"reason"},
    "SessionResume": {"source"},
}
COMMON = {
    "event", "hook_event_name", "session_id", "cwd", "mode", "permission_mode", "transcript_path",
}  # fmt: skip


def test_every_event_fires_with_its_payload_fields(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, project: Path
) -> None:
    use_hooks(kernel, home, "".join(shell_rule(f"log-{e}", e, LOG) for e in EVENTS))
    script.add(
        reply(tool_calls=[("read_file", {"path": "notes.txt"}, "c1")]),
        reply(text="The notes say hello."),
        reply(text="Summary: the notes were read."),  # /compact
        status(401, message="invalid x-api-key"),  # a failed stream: Notification
        reply(text="Resumed and ready."),
    )
    first = kernel.ok("%%agent\nRead the notes.")
    session_id = first.provenance[-1]["session_id"]
    kernel.ok("%agent /compact")
    kernel.run("%%agent\nThis request fails.")
    kernel.ok("%agent /clear")
    kernel.ok(f"%%agent --resume {session_id}\nGo on.")
    seen = logged(out)
    fired = {p["event"] for p in seen}
    assert fired == set(EVENTS), set(EVENTS) - fired
    for event, fields in EVENTS.items():
        payloads = [p for p in seen if p["event"] == event]
        for payload in payloads:
            missing = (COMMON | fields) - payload.keys()
            assert not missing, (event, missing)
            assert payload["hook_event_name"] == event
            assert payload["session_id"], (event, "session_id is empty")
            assert payload["cwd"] == str(project)
            assert payload["transcript_path"].endswith("conversation.jsonl")
    by = {p["event"]: p for p in reversed(seen)}  # each event's first payload
    assert by["UserPromptSubmit"]["prompt"] == "Read the notes."
    assert by["PreToolUse"]["tool_input"] == {"path": "notes.txt"}
    assert "hello from the notes" in by["PostToolUse"]["tool_result"]
    assert by["PostToolUse"]["tool_response"] == by["PostToolUse"]["tool_result"]
    assert by["PostToolUse"]["is_error"] is False
    assert by["Stop"]["last_assistant_message"] == "The notes say hello."
    assert by["Stop"]["stop_hook_active"] is False
    assert by["SessionStart"]["source"] == "clear"  # use_hooks began a new session
    assert by["PostCompact"]["trigger"] == "manual"
    assert by["Notification"]["kind"] == "stream_error"
    assert "invalid x-api-key" in by["Notification"]["detail"]
    assert [p["reason"] for p in seen if p["event"] == "SessionEnd"] == ["clear"]
    assert by["SessionResume"]["session_id"] == session_id
    # one-line JSON with sorted keys on stdin
    raw = (out / "events.jsonl").read_text().splitlines()[0]
    assert list(json.loads(raw)) == sorted(json.loads(raw))
    # each run is a row in the cell
    assert "⚓ hook log-PreToolUse · PreToolUse · passed" in first.stdout


# --- blocking -------------------------------------------------------------------------------

BLOCKERS = {
    "exit2": "cat > /dev/null; echo 'not in this repo' >&2; exit 2",
    "json": 'cat > /dev/null; echo \'{"decision": "block", "reason": "not in this repo"}\'',
}


@pytest.mark.parametrize("style", sorted(BLOCKERS))
def test_a_hook_blocks_a_tool_call(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, project: Path, style: str
) -> None:
    use_hooks(kernel, home, shell_rule("guard", "PreToolUse", BLOCKERS[style]))
    script.add(
        reply(tool_calls=[("write_file", {"path": "blocked.txt", "content": "x"}, "w1")]),
        reply(text="The hook said no."),
    )
    cell = kernel.ok("%%agent\nWrite blocked.txt.")
    result = results_of(script.received[-1].body)["w1"]
    assert result["is_error"] and result["content"] == "[hook guard] not in this repo"
    assert not (project / "blocked.txt").exists()
    assert "⚓ hook guard · PreToolUse · blocked: not in this repo" in cell.stdout
    assert cell.markdown[-1] == "The hook said no."


@pytest.mark.parametrize("style", sorted(BLOCKERS))
def test_a_hook_blocks_a_prompt(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, style: str
) -> None:
    use_hooks(kernel, home, shell_rule("no-secrets", "UserPromptSubmit", BLOCKERS[style]))
    before = len(script.received)
    cell = kernel.ok("%%agent\nPaste the production password here.")
    assert len(script.received) == before  # never sent
    assert "The prompt was not sent: blocked by hook no-secrets: not in this repo" in cell.text


def test_permission_decisions_and_changed_input(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, project: Path
) -> None:
    decide = (
        "import json,sys; p=json.load(sys.stdin); i=p['tool_input']; "
        "d={'deny':'deny','ask':'ask'}.get(i.get('path','').split('.')[0],'allow'); "
        "o={'permissionDecision':d,'permissionDecisionReason':'policy '+d}; "
        "o.update({'updatedInput':dict(i,content='changed by the hook')} if d=='allow' else {}); "
        "print(json.dumps({'hookSpecificOutput':o}))"
    )
    use_hooks(kernel, home, shell_rule("policy", "PreToolUse", f"python3 -c {json.dumps(decide)}"))
    calls = [
        ("write_file", {"path": "deny.txt", "content": "a"}, "p1"),
        ("write_file", {"path": "allow.txt", "content": "b"}, "p2"),
    ]
    script.add(reply(tool_calls=calls), reply(text="One was denied, one written."))
    kernel.ok("%%agent\nWrite two files.")
    results = results_of(script.received[-1].body)
    assert results["p1"]["is_error"] and "policy deny" in results["p1"]["content"]
    assert not (project / "deny.txt").exists()
    assert not results["p2"].get("is_error")
    assert (project / "allow.txt").read_text() == "changed by the hook"


def test_context_reaches_the_next_request(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer
) -> None:
    rules = (
        "  - name: ticket\n    event: UserPromptSubmit\n"
        "    action: {type: prompt, text: 'The current ticket is ABC-123.'}\n"
    ) + shell_rule(
        "lint",
        "PostToolUse",
        'cat > /dev/null; echo \'{"hookSpecificOutput": {"additionalContext": "lint: 0 warnings"}}\'',
    )
    use_hooks(kernel, home, rules)
    script.add(reply(tool_calls=[("read_file", {"path": "notes.txt"}, "r1")]), reply(text="Noted."))
    kernel.ok("%%agent\nRead the notes.")
    first, second = script.received[-2].body, script.received[-1].body
    assert "The current ticket is ABC-123." in last_user_text(first)
    assert "lint: 0 warnings" in last_user_text(second)
    assert "<system-reminder>" in last_user_text(second)


def test_continue_false_ends_the_turn(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer
) -> None:
    halt = 'cat > /dev/null; echo \'{"continue": false, "stopReason": "the build is red"}\''
    use_hooks(kernel, home, shell_rule("halt", "PostToolUse", halt))
    script.add(reply(tool_calls=[("read_file", {"path": "notes.txt"}, "h1")]))
    before = len(script.received)
    cell = kernel.ok("%%agent\nRead the notes.")
    assert len(script.received) == before + 1  # no request after the tool
    assert "Stopped by a hook: the build is red" in cell.text


def test_failing_hooks_fail_open(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, project: Path
) -> None:
    rules = (
        shell_rule("slow", "PreToolUse", "sleep 30", "    timeout: 1s\n")
        + shell_rule("crash", "PreToolUse", "cat > /dev/null; echo boom >&2; exit 1")
        + shell_rule("garbled", "PreToolUse", "cat > /dev/null; echo '{not json'")
        + shell_rule("missing", "PostToolUse", "/no/such/hook-script")
    )
    use_hooks(kernel, home, rules)
    script.add(
        reply(tool_calls=[("write_file", {"path": "ok.txt", "content": "written"}, "f1")]),
        reply(text="Written despite the hooks."),
    )
    cell = kernel.ok("%%agent\nWrite ok.txt.", timeout=60)
    assert (project / "ok.txt").read_text() == "written"
    assert cell.markdown[-1] == "Written despite the hooks."
    text = cell.text
    assert "Hook slow (PreToolUse) failed: timed out after 1s; it was ignored." in text
    assert "Hook crash (PreToolUse) failed: exit 1: boom; it was ignored." in text
    assert "Hook garbled (PreToolUse) failed: printed invalid JSON" in text
    assert "Hook missing (PostToolUse) failed: exit 127" in text
    table = kernel.ok("%agent /hooks").markdown[0]
    row = next(line for line in table.splitlines() if line.startswith("| `crash`"))
    assert "| 1 | 1 |" in row and "failed: exit 1: boom" in row


# --- action types ------------------------------------------------------------------------------


class _Recorder(BaseHTTPRequestHandler):
    answers: ClassVar[list[tuple[int, bytes]]] = []
    received: ClassVar[list[tuple[str, dict[str, str], bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).received.append((self.path, dict(self.headers), body))
        code, answer = type(self).answers.pop(0) if type(self).answers else (200, b"")
        self.send_response(code)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def http_hook() -> Iterator[type[_Recorder]]:
    handler = type("Recorder", (_Recorder,), {"answers": [], "received": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{httpd.server_port}"  # type: ignore[attr-defined]
    try:
        yield handler
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_http_hooks_post_the_payload_and_can_block(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, http_hook: Any
) -> None:
    url = http_hook.url
    http_hook.answers += [
        (200, b""),  # the audit hook: a 2xx with no body passes
        (200, json.dumps({"decision": "block", "reason": "the audit service says no"}).encode()),
    ]
    audit = {"type": "http", "url": f"{url}/audit", "headers": {"X-Team": "core"}}
    gate = {"type": "http", "url": f"{url}/gate", "body": '{"tool": {{json .tool_name}}}'}
    rules = "".join(
        f"  - {json.dumps({'name': name, 'event': 'PreToolUse', 'action': action})}\n"
        for name, action in (("audit", audit), ("gate", gate))
    )
    use_hooks(kernel, home, rules)
    script.add(
        reply(tool_calls=[("write_file", {"path": "h.txt", "content": "x"}, "x1")]),
        reply(text="Blocked over HTTP."),
    )
    kernel.ok("%%agent\nWrite h.txt.")
    (p1, h1, b1), (p2, _, b2) = http_hook.received
    assert p1 == "/audit" and h1["X-Team"] == "core" and h1["Content-Type"] == "application/json"
    payload = json.loads(b1)
    assert payload["event"] == "PreToolUse" and payload["tool_input"]["path"] == "h.txt"
    assert p2 == "/gate" and json.loads(b2) == {"tool": "write_file"}
    result = results_of(script.received[-1].body)["x1"]
    assert result["content"] == "[hook gate] the audit service says no"


def test_a_subagent_hook_reviews_a_call(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, project: Path
) -> None:
    rules = (
        "  - name: review\n    event: PreToolUse\n"
        "    if: {all_of: [{field: tool_name, match: {type: exact, value: write_file}}]}\n"
        "    action: {type: subagent, agent_name: reviewer, prompt: 'Should this call run?'}\n"
    )
    use_hooks(kernel, home, rules)
    verdict = json.dumps({"decision": "block", "reason": "the reviewer wants tests first"})
    script.add(
        reply(tool_calls=[("write_file", {"path": "r.txt", "content": "x"}, "s1")]),
        reply(text=verdict),  # the reviewer subagent's answer
        reply(text="The reviewer stopped it."),
    )
    kernel.ok("%%agent\nWrite r.txt.")
    asked = script.received[-2].body
    assert "You review tool calls." in json.dumps(asked["system"])
    assert "Should this call run?" in last_user_text(asked)
    assert '"tool_name": "write_file"' in last_user_text(asked)
    result = results_of(script.received[-1].body)["s1"]
    assert result["content"] == "[hook review] the reviewer wants tests first"
    assert not (project / "r.txt").exists()


def test_async_hooks_run_detached_and_only_once_resets(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer
) -> None:
    # read-write: the Stop hooks of later turns never wait for a reader
    slow = 'sleep 2; exec 3<> "$MEWCODE_PROJECT_DIR/hook-out/async.json"; cat >&3; exit 2'
    rules = shell_rule("later", "Stop", slow, "    async: true\n") + shell_rule(
        "first-message", "PreUserMessage", LOG, "    only_once: true\n"
    )
    use_hooks(kernel, home, rules)
    script.add(reply(text="One."), reply(text="Two."), reply(text="Three."), reply(text="Four."))
    with Fifo(out / "async.json") as async_out:
        cell = kernel.ok("%%agent\nSay one.")
        session_id = cell.provenance[-1]["session_id"]
        assert "⚓ hook later · Stop · started" in cell.stdout
        assert not async_out.written()  # the cell did not wait for it
        kernel.ok("%%agent\nSay two.")
        # until the first hook's shell exits (a later turn's may follow it in)
        written = async_out.read_to_end(timeout=20).decode()
    payload, _ = json.JSONDecoder().raw_decode(written)
    assert payload["event"] == "Stop"
    assert len(logged(out)) == 1  # only once in this session
    kernel.ok("%agent /clear")
    kernel.ok("%%agent\nSay three.")
    assert len(logged(out)) == 2  # and once again after /clear
    kernel.ok(f"%%agent --resume {session_id}\nSay four.")
    assert len(logged(out)) == 3  # and after /resume


def test_subagents_share_the_parents_hooks(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer
) -> None:
    use_hooks(kernel, home, shell_rule("log", "PreToolUse", LOG))
    explore = {"description": "look", "prompt": "Find the notes.", "subagent_type": "Explore"}
    script.add(
        reply(tool_calls=[("Agent", explore, "a1")]),
        reply(tool_calls=[("glob", {"pattern": "*.txt"}, "g1")]),  # the subagent
        reply(text="notes.txt"),  # the subagent's answer
        reply(text="The notes are in notes.txt."),
    )
    kernel.ok("%%agent\nWhere are the notes?")
    calls = [(p["tool_name"], p["tool_use_id"]) for p in logged(out)]
    assert calls == [("Agent", "a1"), ("glob", "g1")]
    assert len({p["session_id"] for p in logged(out)}) == 1


# --- Claude Code's format --------------------------------------------------------------------


def test_claude_code_settings_hooks_run_unchanged(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, project: Path
) -> None:
    (home / ".mewcode" / "hooks.yaml").unlink(missing_ok=True)
    # async hooks of earlier tests may still run: their sandbox keeps an empty
    # read-only .claude in place (the stand-in for a protected path) meanwhile
    shutil.copytree(
        FIXTURES / "chief_of_staff_agent" / ".claude", project / ".claude", dirs_exist_ok=True
    )
    try:
        kernel.ok("%agent /clear")
        script.add(
            reply(
                tool_calls=[
                    ("write_file", {"path": "reports/q3.md", "content": "Revenue grew."}, "k1"),
                    (
                        "bash",
                        {"command": "python scripts/forecast.py", "description": "Forecast"},
                        "k2",
                    ),
                ]
            ),
            reply(text="Report written."),
        )
        kernel.ok("%%agent\nWrite the Q3 report and run the forecast.")
        history = json.loads((project / "audit" / "report_history.json").read_text())
        [entry] = history["reports"]
        assert entry["file"] == "q3.md" and entry["tool"] == "Write"
        assert entry["action"] == "created" and entry["word_count"] == 2
        assert entry["path"] == str(project / "reports" / "q3.md")
        log = json.loads((project / "audit" / "script_usage_log.json").read_text())
        [run] = log["script_executions"]
        assert run["script"] == "forecast.py" and run["description"] == "Forecast"
        table = kernel.ok("%agent /hooks").markdown[0]
        assert ".claude/settings.local.json" in table and "| PostToolUse | Write |" in table
    finally:
        shutil.rmtree(project / ".claude")
        shutil.rmtree(project / "audit", ignore_errors=True)


# --- attacks ---------------------------------------------------------------------------------


def test_the_payload_never_reaches_the_command_line(
    kernel: Kernel, home: Path, out: Path, script: ScriptedServer, project: Path
) -> None:
    save = 'cat > "$MEWCODE_PROJECT_DIR/hook-out/prompt.json"; echo "$MEWCODE_SESSION_ID" > "$MEWCODE_PROJECT_DIR/hook-out/sid"; env > "$MEWCODE_PROJECT_DIR/hook-out/env"'
    use_hooks(kernel, home, shell_rule("keep", "UserPromptSubmit", save))
    prompt = "Say $(touch PWNED1) `touch PWNED2` '; touch PWNED3; ' \"; touch PWNED4\""
    script.add(reply(text="Said."))
    cell = kernel.ok(f"%%agent\n{prompt}")
    assert json.loads((out / "prompt.json").read_text())["prompt"] == prompt
    assert not list(project.glob("PWNED*")) and not list(out.glob("PWNED*"))
    env = (out / "env").read_text()
    assert SECRET not in env and "ANTHROPIC_API_KEY" not in env
    assert f"MEWCODE_PROJECT_DIR={project}" in env and f"CLAUDE_PROJECT_DIR={project}" in env
    assert (out / "sid").read_text().strip() == cell.provenance[-1]["session_id"]


def test_rejected_rules_name_file_rule_and_reason(kernel: Kernel, home: Path, out: Path) -> None:
    rules = (
        "  - name: ''\n    event: Stop\n    action: {type: prompt, text: x}\n"
        "  - name: typo\n    event: PostToolUsed\n    action: {type: prompt, text: x}\n"
        "  - name: both\n    event: Stop\n    if: {all_of: [], any_of: []}\n"
        "    action: {type: prompt, text: x}\n"
        "  - name: notinner\n    event: Stop\n"
        "    if: {any_of: [{field: reason, match: {type: not}}]}\n"
        "    action: {type: prompt, text: x}\n"
        "  - name: when\n    event: Stop\n    timeout: soon\n    action: {type: prompt, text: x}\n"
        "  - name: bg\n    event: PreToolUse\n    async: true\n    action: {type: prompt, text: x}\n"
        "  - name: nocmd\n    event: Stop\n    action: {type: shell}\n"
        "  - name: fine\n    event: Stop\n    action: {type: prompt, text: x}\n"
        "  - name: fine\n    event: Stop\n    action: {type: prompt, text: y}\n"
    )
    (home / ".mewcode" / "hooks.yaml").write_text("hooks:\n" + rules)
    text = kernel.ok("%agent /clear").text + kernel.ok("%agent /hooks").text
    for expected in (
        "hook #1: a hook needs a non-empty 'name'",
        "hook 'typo': unknown event 'PostToolUsed'",
        "hook 'both': 'if' needs exactly one of all_of and any_of",
        "hook 'notinner': condition 1: a 'not' match needs 'inner'",
        "hook 'when': timeout 'soon' is not a duration",
        "hook 'bg': 'async' cannot be used on PreToolUse",
        "hook 'nocmd': a shell action needs a non-empty 'command'",
        "hook 'fine': name conflict with a previously loaded hook",
    ):
        assert f"~/.mewcode/hooks.yaml: {expected}" in text, expected
    assert "| `fine` | Stop |" in text


# --- trust -------------------------------------------------------------------------------------


def test_project_hooks_wait_for_trust_and_for_the_content_trusted(
    tmp_path: Path, server: ScriptedServer, jupyter_path: Path
) -> None:
    root, home, outside = tmp_path / "project", tmp_path / "home", tmp_path / "outside"
    for d in (root / ".mewcode", root / ".claude", home / ".mewcode", outside):
        d.mkdir(parents=True)
    # the provider is the user's (a project's own server would wait for trust too)
    (home / ".mewcode" / "config.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    mark = 'cat > /dev/null; touch "$MEWCODE_PROJECT_DIR/ran-{}"'
    hooks = root / ".mewcode" / "hooks.yaml"
    hooks.write_text("hooks:\n" + shell_rule("mark", "UserPromptSubmit", mark.format("yaml")))
    claude = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": mark.format("local")}]}]}}  # fmt: skip
    (root / ".claude" / "settings.local.json").write_text(json.dumps(claude))
    env = kernel_env(home, MEWCODE_TRUST_PROJECT="")
    server.add(reply(text="a"), reply(text="b"), reply(text="c"), reply(text="d"))
    with running_kernel(root, env) as k:
        first = k.ok("%%agent\nHello.")
        assert not (root / "ran-yaml").exists() and not (root / "ran-local").exists()
        assert "not trusted yet" in first.text
        assert (
            "not used: .mewcode/hooks.yaml: the project is not trusted yet"
            in k.ok("%agent /hooks").text
        )
        k.ok("%agent /trust yes")
        k.ok("%%agent\nHello again.")
        assert (root / "ran-yaml").exists() and (root / "ran-local").exists()
        # changed after the approval: not used until trusted again
        (root / "ran-yaml").unlink()
        hooks.write_text("hooks:\n" + shell_rule("mark", "UserPromptSubmit", mark.format("new")))
        k.ok("%agent /clear")
        k.ok("%%agent\nAnd again.")
        assert not (root / "ran-new").exists() and not (root / "ran-yaml").exists()
        assert "changed since" in k.ok("%agent /hooks").text
        # a symlink out of the project is never used, trusted or not
        evil = outside / "hooks.yaml"
        evil.write_text("hooks:\n" + shell_rule("evil", "UserPromptSubmit", mark.format("evil")))
        hooks.unlink()
        hooks.symlink_to(evil)
        k.ok("%agent /trust yes")
        k.ok("%agent /clear")
        k.ok("%%agent\nOnce more.")
        assert not (root / "ran-evil").exists()
        assert "a symlink out of the project; never used" in k.ok("%agent /hooks").text
    assert server.remaining == 0, server.remaining


def test_async_hooks_are_cancelled_at_shutdown(
    tmp_path: Path, server: ScriptedServer, jupyter_path: Path
) -> None:
    root, home = tmp_path / "project", tmp_path / "home"
    (home / ".mewcode").mkdir(parents=True)
    root.mkdir()
    (root / ".mewcode.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    # the hook holds the pipe open while it lives: its end is the end of file
    linger = (
        'exec 3> "$MEWCODE_PROJECT_DIR/started"; echo started >&3; sleep 5; '
        'touch "$MEWCODE_PROJECT_DIR/lingered"'
    )
    ended = 'cat > "$MEWCODE_PROJECT_DIR/ended.json"'
    (home / ".mewcode" / "hooks.yaml").write_text(
        "hooks:\n"
        + shell_rule("linger", "Stop", linger, "    async: true\n    timeout: 10m\n")
        + shell_rule("ended", "SessionEnd", ended)
    )
    server.add(reply(text="Done."))
    with Fifo(root / "started") as started:
        k = Kernel(root, kernel_env(home))
        try:
            k.ok("%%agent\nFinish.")
            assert started.read_some(timeout=20) == b"started\n"
        finally:
            k.kc.stop_channels()
            k.km.shutdown_kernel(now=False)  # a shutdown request: the kernel closes its sessions
        # the hook's end; an uncancelled one ends after its sleep, having written "lingered"
        assert started.read_to_end(timeout=20) == b""
    assert not (root / "lingered").exists()
    assert json.loads((root / "ended.json").read_text())["reason"] == "exit"
    assert server.remaining == 0
