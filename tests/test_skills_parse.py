"""``SKILL.md`` parsing: the frontmatter split, each key, the fallbacks with
warnings, and errors that name the file, the line and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from mewcode_kernel.core.errors import SkillError
from mewcode_kernel.core.skills import parse_skill, split_allowed_tools, split_frontmatter

P = Path("/skills/x/SKILL.md")


def skill(front: str, body: str = "Do it.") -> str:
    return f"---\n{front}\n---\n{body}"


def rejected(text: str) -> SkillError:
    with pytest.raises(SkillError) as info:
        parse_skill(text, path=P)
    assert info.value.path == str(P)
    return info.value


# --- the frontmatter split -----------------------------------------------------------


def test_frontmatter_and_body_are_split_at_column_one_fences() -> None:
    front, body, line = split_frontmatter("---\nname: a\n---\n# Title\nText\n")
    assert front == "name: a" and body == "# Title\nText\n" and line == 4


def test_no_frontmatter_means_all_body() -> None:
    assert split_frontmatter("# Just text\n---\nmore") == (None, "# Just text\n---\nmore", 1)


def test_an_indented_fence_opens_nothing() -> None:
    front, body, _ = split_frontmatter(" ---\nname: a\n---\n")
    assert front is None and body.startswith(" ---")


def test_a_fence_at_the_very_end_leaves_an_empty_body() -> None:
    assert split_frontmatter("---\nname: a\n---")[:2] == ("name: a", "")


def test_bom_and_windows_line_ends_are_accepted() -> None:
    s = parse_skill("\ufeff---\r\nname: Win\r\ndescription: d\r\n---\r\nBody\r\n", path=P)
    assert (s.name, s.description, s.body) == ("win", "d", "Body")


def test_a_fence_inside_a_block_scalar_is_not_a_fence() -> None:
    # a block scalar's lines are indented, so an indented '---' stays inside the value
    s = parse_skill(skill("name: a\ndescription: |\n  first\n  ---\n  second"), path=P)
    assert s.description == "first --- second" and s.body == "Do it."


def test_unclosed_frontmatter_is_rejected_with_its_line() -> None:
    err = rejected("---\nname: a\ndescription: never closed\n")
    assert err.line == 1 and "never closed" in err.reason
    assert str(err).startswith(f"{P}:1: ")


def test_a_file_without_frontmatter_is_rejected_for_want_of_a_name() -> None:
    err = rejected("# A skill\n\nNo frontmatter at all.\n")
    assert "no frontmatter" in err.reason and err.line == 1


# --- name ------------------------------------------------------------------------------


def test_name_is_lower_cased() -> None:
    assert parse_skill(skill("name: Deploy-Prod"), path=P).name == "deploy-prod"


@pytest.mark.parametrize(
    ("front", "reason", "line"),
    [
        ("description: d", "has no 'name'", 2),
        ("description: d\nname:", "'name' is empty", 3),
        ("name: two words", "contains a space", 2),
        ("description: d\nname: a/b", "'/'", 3),
        ("name: a\\b", "'/' or '\\'", 2),
        ("name: .hidden", "starts with '.'", 2),
        ("name: ['a']", "must be text", 2),
        ('name: "a\\tb"', "contains a space", 2),
        ('name: "a\\x01b"', "control character", 2),
    ],
)
def test_bad_names_are_rejected_with_the_line(front: str, reason: str, line: int) -> None:
    err = rejected(skill(front))
    assert reason in err.reason and err.line == line


def test_yaml_errors_name_the_file_line() -> None:
    err = rejected("---\nname: a\ndescription: [unclosed\nmodel: x\n---\nbody")
    assert "not valid YAML" in err.reason and err.line is not None and err.line >= 3


def test_frontmatter_that_is_not_a_mapping_is_rejected() -> None:
    assert "mapping" in rejected(skill("- a\n- b")).reason


# --- the other keys --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("front", "tools"),
    [
        ("allowed-tools: Read, Grep, Glob, Bash", ("Read", "Grep", "Glob", "Bash")),
        ("allowed-tools: Bash Read Grep Glob", ("Bash", "Read", "Grep", "Glob")),
        ("allowed_tools: [read_file, 'Bash(ls *)']", ("read_file", "Bash(ls *)")),
        ("allowed-tools: Bash(git add:*), Bash(git commit:*) Read", ("Bash(git add:*)", "Bash(git commit:*)", "Read")),
        ("allowed-tools:\n  - Read\n  - Write", ("Read", "Write")),
        ("allowed-tools: ''", ()),
        ("", ()),
    ],
)  # fmt: skip
def test_allowed_tools_in_every_spelling(front: str, tools: tuple[str, ...]) -> None:
    assert parse_skill(skill("name: a\n" + front), path=P).allowed_tools == tools


def test_both_spellings_are_merged() -> None:
    s = parse_skill(skill("name: a\nallowed_tools: [Read]\nallowed-tools: Read, Bash"), path=P)
    assert s.allowed_tools == ("Read", "Bash")


def test_a_mapping_for_allowed_tools_is_ignored_with_a_warning() -> None:
    s = parse_skill(skill("name: a\nallowed-tools: {Read: yes}"), path=P)
    assert s.allowed_tools == () and "allowed-tools must be a list" in s.warnings[0]


def test_split_allowed_tools_keeps_parentheses_together() -> None:
    assert split_allowed_tools("Bash(npm run test:*, x), Read") == [
        "Bash(npm run test:*, x)",
        "Read",
    ]


def test_mode_fork_context_and_model() -> None:
    s = parse_skill(
        skill("name: a\nmode: fork\nfork_context: recent\nmodel: claude-haiku-4-5"), path=P
    )
    assert (s.mode, s.fork_context, s.model, s.warnings) == (
        "fork",
        "recent",
        "claude-haiku-4-5",
        (),
    )


def test_claude_codes_context_fork_means_fork_mode() -> None:
    assert parse_skill(skill("name: a\ncontext: fork"), path=P).mode == "fork"


def test_model_inherit_means_the_parents_model() -> None:
    assert parse_skill(skill("name: a\nmodel: inherit"), path=P).model is None


@pytest.mark.parametrize(
    ("front", "field", "value", "warning"),
    [
        ("mode: background", "mode", "inline", "mode 'background' is not inline or fork"),
        ("mode: 3", "mode", "inline", "mode '3'"),
        ("fork_context: everything", "fork_context", "none", "fork_context 'everything'"),
        ("disable-model-invocation: maybe", "model_invocable", True, "disable-model-invocation must be true or false"),
    ],
)  # fmt: skip
def test_invalid_values_fall_back_with_a_warning(
    front: str, field: str, value: object, warning: str
) -> None:
    s = parse_skill(skill("name: a\n" + front), path=P)
    assert getattr(s, field) == value
    assert any(warning in w for w in s.warnings), s.warnings


def test_invocation_flags_and_argument_hint() -> None:
    s = parse_skill(
        skill(
            "name: a\ndisable-model-invocation: true\nuser-invocable: false\nargument-hint: [f, g]"
        ),
        path=P,
    )
    assert (s.model_invocable, s.user_invocable, s.argument_hint) == (False, False, "f g")


def test_unknown_keys_are_tolerated() -> None:
    s = parse_skill(
        skill("name: a\nlicense: MIT\nversion: 1.0.0\nmetadata: {x: 1}\ntools: Read\neffort: low"),
        path=P,
    )
    assert s.name == "a" and s.warnings == () and s.allowed_tools == ()


def test_folded_description_is_one_line() -> None:
    s = parse_skill(skill("name: a\ndescription: >\n  Use when\n  things break.\n"), path=P)
    assert s.description == "Use when things break."
