# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Skills from notebook cells in a real ``mewcode`` kernel, with the model
scripted over the Anthropic wire format and GitHub faked on 127.0.0.1:
the catalog in the system prompt, ``load_skill`` carried across turns and
dropped by ``/clear``, ``$ARGUMENTS``, ``/<skill> args`` running a turn, a
Claude Code skill used unchanged from ``.claude/skills``, ``/skills``, a fork
skill refused without the subagent runner, and ``install_skill`` making a
skill usable in the same session."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._fake_github import FakeGitHub, fake_github
from tests._kernel import (
    Kernel,
    anthropic_openai_config,
    jupyter_path,  # noqa: F401
    kernel_env,
    running_kernel,
    script,  # noqa: F401
    server,  # noqa: F401
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "skills"
COMMS = FIXTURES / "anthropics__skills" / "skills" / "internal-comms"


@pytest.fixture(scope="module")
def gh() -> Iterator[FakeGitHub]:
    with fake_github() as fake:
        yield fake


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    root = tmp_path_factory.mktemp("skills-project")
    (root / ".mewcode.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    skills = root / ".claude" / "skills"
    shutil.copytree(COMMS, skills / "internal-comms")  # a real Claude Code skill, unchanged
    for name, front, body in [
        ("changelog", "description: Write a changelog entry.", "Write the changelog entry for $ARGUMENTS."),
        ("tidy", "description: Tidy the imports.\nallowed-tools: Read, Edit", "Sort the imports."),
        ("audit", "description: Audit in a subagent.\nmode: fork\nallowed-tools: Read", "Audit."),
    ]:  # fmt: skip
        (skills / name).mkdir()
        (skills / name / "SKILL.md").write_text(f"---\nname: {name}\n{front}\n---\n{body}\n")
    return root


@pytest.fixture(scope="module")
def kernel(
    tmp_path_factory: pytest.TempPathFactory, project: Path, jupyter_path: Path, gh: FakeGitHub
) -> Iterator[Kernel]:
    home = tmp_path_factory.mktemp("home")
    env = kernel_env(home, MEWCODE_HEADLESS_APPROVAL="allow", **gh.env())
    with running_kernel(project, env) as k:
        k.home = home  # type: ignore[attr-defined]
        yield k


def body(script: ScriptedServer, n: int = -1) -> dict[str, Any]:
    return script.received[n].body


def system(script: ScriptedServer, n: int = -1) -> str:
    return "\n".join(b["text"] for b in body(script, n)["system"])


def turn_texts(script: ScriptedServer, n: int = -1) -> list[str]:
    """The text blocks of the user message that started the turn of request ``n``."""
    users = [m for m in body(script, n)["messages"] if m["role"] == "user"]
    for message in reversed(users):
        content = message["content"]
        blocks = [content] if isinstance(content, str) else content
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if any(t.startswith("<environment>") for t in texts):
            return texts
    raise AssertionError("no turn message")


def tool_result(script: ScriptedServer, n: int = -1) -> str:
    last = body(script, n)["messages"][-1]["content"]
    results = [b for b in last if b.get("type") == "tool_result"]
    content = results[0]["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_the_catalog_is_in_the_system_prompt(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="Hi."))
    kernel.ok("%%agent --new\nHello.")
    prompt = system(script)
    description = (COMMS / "SKILL.md").read_text().split("description: ", 1)[1].split("\n")[0]
    assert f"- **internal-comms**: {description}" in prompt
    assert "- **changelog**: Write a changelog entry." in prompt
    names = [t["name"] for t in body(script)["tools"]]
    assert "load_skill" in names and "install_skill" not in names  # not turned on, not asked


def test_load_skill_is_carried_across_turns_and_cleared(
    kernel: Kernel, script: ScriptedServer
) -> None:
    script.add(
        reply(tool_calls=[("load_skill", {"name": "changelog", "args": "release 3.1"})]),
        reply(text="Drafted."),
        reply(text="Still on it."),
        reply(text="Fresh start."),
    )
    kernel.ok("%%agent --new\nDraft the changelog for release 3.1.")
    assert "Write the changelog entry for release 3.1." in tool_result(script)
    kernel.ok("%agent Anything missing?")
    carried = turn_texts(script)
    active = [t for t in carried if t.startswith("<active-skills>")]
    assert active and "## Skill: changelog" in active[0]
    assert "Write the changelog entry for release 3.1." in active[0]
    assert carried[-1] == "Anything missing?"
    kernel.ok("%agent /clear")
    kernel.ok("%agent And now?")
    assert not [t for t in turn_texts(script) if t.startswith("<active-skills>")]


def test_a_slash_skill_runs_a_turn_with_its_arguments(
    kernel: Kernel, script: ScriptedServer
) -> None:
    script.add(reply(text="Entry for **v9** written."))
    cell = kernel.ok("%%agent --new --out answer\n/changelog v9")
    assert "▶ skill `changelog` from `.claude/skills/changelog`" in cell.stdout
    assert "Entry for **v9** written." in cell.markdown
    prompt = turn_texts(script)[-1]
    assert prompt.startswith("Skill directory: .claude/skills/changelog")
    assert prompt.endswith("Write the changelog entry for v9.")
    assert kernel.ok("print(answer)").stdout.strip() == "Entry for **v9** written."


def test_a_claude_code_skill_is_used_unchanged(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(
        reply(tool_calls=[("read_file", {"path": ".claude/skills/internal-comms/examples/3p-updates.md"})]),
        reply(text="Here is the update."),
    )  # fmt: skip
    kernel.ok("%%agent --new\n/internal-comms a 3P update about the launch")
    prompt = turn_texts(script, -2)[-1]
    original = (COMMS / "SKILL.md").read_text().split("---\n", 2)[2].strip()
    assert original in prompt
    assert prompt.endswith("## User Request\n\na 3P update about the launch")
    first_line = (COMMS / "examples" / "3p-updates.md").read_text().splitlines()[0]
    assert tool_result(script).startswith(f"     1\t{first_line}")  # its own files are readable


def test_skills_lists_source_and_mode(kernel: Kernel) -> None:
    cell = kernel.ok("%agent --out listed /skills")
    table = cell.markdown[0]
    assert "| `/internal-comms` | project (`.claude/skills/internal-comms`) | inline |" in table
    assert "| `/audit` | project (`.claude/skills/audit`) | fork (context none) |" in table
    assert kernel.ok("print(sorted(r['name'] for r in listed))").stdout.strip() == (
        "['audit', 'changelog', 'internal-comms', 'tidy']"
    )


def test_a_fork_skill_runs_as_a_subagent_offered_only_its_tools(
    kernel: Kernel, script: ScriptedServer
) -> None:
    # /audit from a cell: the skill's subagent is offered only what allowed-tools names
    script.add(reply(text="Audit of the payments module: 1 finding."))
    cell = kernel.ok("%agent /audit the payments module")
    assert "Audit of the payments module: 1 finding." in cell.text
    child = script.received[-1].body
    # Read names notebook_read too (as Claude Code's Read reads notebooks)
    assert sorted(t["name"] for t in child["tools"]) == [
        "glob", "grep", "load_skill", "notebook_read", "read_file"
    ]  # fmt: skip
    assert "Audit." in json.dumps(child["messages"][-1])
    # the model's load_skill of a fork skill: the subagent's answer is the tool result
    script.add(
        reply(tool_calls=[("load_skill", {"name": "audit", "args": "the ledger"})]),
        reply(tool_calls=[("write_file", {"path": "x.txt", "content": "no"})]),
        reply(text="Ledger audit: clean."),
        reply(text="The audit found the ledger clean."),
    )
    cell = kernel.ok("%%agent\nAudit the ledger.")
    assert cell.markdown[-1] == "The audit found the ledger clean."
    bodies = [r.body for r in script.received[-4:]]
    assert "write_file" not in [t["name"] for t in bodies[1]["tools"]]
    refused = bodies[2]["messages"][-1]["content"][0]
    assert refused["is_error"] and "Unknown tool 'write_file'" in json.dumps(refused)
    result = bodies[3]["messages"][-1]["content"][0]
    assert result["content"] == "Ledger audit: clean." and not result.get("is_error")


def test_install_skill_makes_a_skill_usable_in_the_same_session(
    kernel: Kernel, script: ScriptedServer, gh: FakeGitHub
) -> None:
    gh.add_tree(
        "acme/skills", "main", "skills/haiku",
        {"SKILL.md": "---\nname: haiku\ndescription: Answer in a haiku.\n---\nAnswer about $ARGUMENTS in a haiku.\n",
         "notes/form.md": "5-7-5"},
    )  # fmt: skip
    url = "https://github.com/acme/skills/tree/main/skills/haiku"
    script.add(reply(tool_calls=[("install_skill", {"url": url})]), reply(text="Installed."))
    cell = kernel.ok(f"%%agent --new\nInstall the skill at {url}")
    assert "✓ allowed install_skill" in cell.text and "MEWCODE_HEADLESS_APPROVAL=allow" in cell.text
    assert "Skill 'haiku' installed: 2 file(s)" in tool_result(script)
    installed = Path(kernel.home) / ".mewcode" / "skills" / "haiku"  # type: ignore[attr-defined]
    record = json.loads((installed / ".mewcode-install.json").read_text())
    assert record["url"] == url and (installed / "notes" / "form.md").read_text() == "5-7-5"
    listing = kernel.ok("%agent /skills").markdown[0]
    assert "| `/haiku` | user (`~/.mewcode/skills/haiku`) | inline | Answer in a haiku." in listing
    assert f"{url} (sha256 `{record['sha256'][:12]}`)" in listing
    script.add(reply(text="Autumn moonlight."))
    kernel.ok("%agent /haiku the moon")
    assert turn_texts(script)[-1].endswith("Answer about the moon in a haiku.")
    assert "- **haiku**: Answer in a haiku." in system(script)
