"""``SkillsToolset``: the skill tools, and the one place skills are run.

* ``load_skill(name, args?)`` (read-only, a system tool: no allowlist
  removes it) re-reads the skill from disk and activates it: an inline
  skill's rendered instructions are returned and carried at the start of
  every later user turn (``active_skills`` of the running agent); a fork
  skill runs through the ``SkillForkRunner`` and its answer is returned.
* ``install_skill(url, scope?)`` downloads a skill into the user's (or the
  project's) skills folder; a write, so it asks like an edit. The catalog is
  read again at once, so the skill can be loaded in the same session.

``load_skill`` and ``/name`` commands both go through ``run``, so a skill
runs the same way whoever starts it.

Each tool is offered only when it can be used, so a request carries no
definitions the model cannot use: ``load_skill`` while the catalog lists a
skill the model may load, ``install_skill`` once the person turned it on
(``skills: {install_tool: true}``) or asked for a skill to be installed
(``asks_to_install``); once offered, it stays for the session. ``load_skill``
joins within the turn that installed the first skill.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from ..errors import SkillError, ToolError
from ..tools.base import Tool, tool
from ..tools.context import RunContext
from .catalog import SkillCatalog
from .fork import FORK_UNAVAILABLE, ForkRequest, SkillForkRunner
from .install import Installed, install
from .render import catalog_section, render_body, resolve_tools
from .skill import Skill
from .sources import InstallSettings

__all__ = ["SkillRun", "SkillsToolset"]

Scope = Literal["user", "project"]

# "install the X skill", "add a skill from ...", or a skill source's address
_VERB = r"\b(?:install(?:s|ed|ing)?|add(?:s|ed|ing)?|download(?:s|ed|ing)?|fetch(?:es|ed|ing)?"
_ASKS_TO_INSTALL = re.compile(
    rf"{_VERB}|get(?:s|ting)?)\b.{{0,80}}?\bskills?\b"
    rf"|\bskills?\b.{{0,80}}?{_VERB})\b"
    r"|\bskills\.sh/|/SKILL\.md\b",
    re.IGNORECASE | re.DOTALL,
)


def asks_to_install(prompt: str) -> bool:
    """Whether a person's prompt asks for a skill to be installed."""
    return _ASKS_TO_INSTALL.search(prompt) is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class SkillRun:
    """What running a skill gave: the skill as read for this run, ``text``
    (an inline skill's rendered instructions, now active, or a fork skill's
    answer) and a ``note`` when the catalog's copy had to be used."""

    skill: Skill
    text: str
    note: str | None = None


class SkillsToolset:
    """The skill tools over ``catalog``. ``fork_runner`` runs fork skills
    (``None``: they are refused with a clear message); ``install_settings``
    (default: from the environment when an install runs) says where skills
    are downloaded from, with which time limit and quotas."""

    name = "skills"
    # a skill installed by the model can be loaded in the same turn
    joins_within_turn = True

    def __init__(
        self,
        catalog: SkillCatalog,
        *,
        fork_runner: SkillForkRunner | None = None,
        install_settings: InstallSettings | None = None,
        offer_install: bool = False,
    ) -> None:
        self.catalog = catalog
        self.fork_runner = fork_runner
        self.install_settings = install_settings
        self.offer_install = offer_install
        #: the two tools, whether offered now or not
        self.load_skill, self.install_skill = self._load_tool(), self._install_tool()
        self._reported: set[str] = set()
        self._offered: tuple[bool, bool] = (False, False)
        self._version = 0
        self._rendered: set[str] = set()  # skills' instructions, which are no person's words

    def note_prompt(self, prompt: str) -> None:
        """A person's prompt: one asking for a skill to be installed turns
        ``install_skill`` on for the rest of the session. A skill's own
        instructions (``/<skill>`` runs them as the turn's prompt) never do."""
        if not self.offer_install and prompt not in self._rendered and asks_to_install(prompt):
            self.offer_install = True

    def _offer(self) -> tuple[bool, bool]:
        loadable = any(s.model_invocable for s in self.catalog.skills())
        offered = (loadable or self._offered[0], self.offer_install)
        if offered != self._offered:
            self._offered, self._version = offered, self._version + 1
        return offered

    @property
    def version(self) -> int:
        self._offer()
        return self._version

    def tools(self) -> Sequence[Tool]:
        load, install = self._offer()
        return [t for t, on in ((self.load_skill, load), (self.install_skill, install)) if on]

    async def __aenter__(self) -> SkillsToolset:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None

    # --- what the session shows -------------------------------------------------------

    def prompt_section(self) -> str:
        """The catalog for the system prompt (skills the model may load)."""
        return catalog_section(self.catalog.skills())

    def problems(self, tools: Iterable[Tool]) -> list[str]:
        """Skill files that were skipped, and skills naming tools that ``tools``
        lack; each reported once per toolset."""
        tools = list(tools)
        found = list(self.catalog.problems)
        for skill in self.catalog.skills():
            _, unknown = resolve_tools(skill.allowed_tools, tools)
            if unknown:
                found.append(
                    f"skill {skill.name!r} ({skill.display_dir}) names tools that do not exist "
                    f"here: {', '.join(unknown)}"
                )
        new = [p for p in found if p not in self._reported]
        self._reported.update(new)
        return new

    # --- running skills --------------------------------------------------------------

    async def run(
        self,
        name: str,
        args: str,
        *,
        by: Literal["model", "user"],
        active: MutableMapping[str, str],
        tools: Iterable[Tool],
        ctx: RunContext | None = None,
    ) -> SkillRun:
        """Run skill ``name`` as ``by`` asked (``load_skill``, or ``/name``):
        read it again, check it may be run that way, then activate an inline
        skill in ``active`` or run a fork skill. Raises ``SkillError``."""
        skill, note = self.catalog.load(name)
        if by == "model" and not skill.model_invocable:
            raise SkillError(
                f"skill {skill.name!r} can only be run by the user (/{skill.name}); "
                "its SKILL.md sets disable-model-invocation"
            )
        if by == "user" and not skill.user_invocable:
            raise SkillError(
                f"skill {skill.name!r} is meant for the agent only (its SKILL.md sets "
                "user-invocable: false); ask for the task and the agent may load it"
            )
        if skill.mode == "fork":
            return SkillRun(skill=skill, text=await self.run_fork(skill, args, ctx), note=note)
        return SkillRun(skill=skill, text=self.activate(active, skill, args, tools), note=note)

    def activate(
        self, active: MutableMapping[str, str], skill: Skill, args: str, tools: Iterable[Tool]
    ) -> str:
        """Render inline ``skill`` with ``args`` and make it active (replacing
        an earlier activation in place); the rendered instructions."""
        body = render_body(skill, args, tools=tools)
        active[skill.name] = body
        self._rendered.add(body)
        return body

    async def run_fork(self, skill: Skill, args: str, ctx: RunContext | None) -> str:
        """Run fork ``skill`` as a subagent; its final answer. Raises
        ``SkillError`` when there is no runner."""
        if self.fork_runner is None:
            raise SkillError(FORK_UNAVAILABLE.format(name=skill.name))
        tools = ctx.services.tools if ctx is not None and ctx.services is not None else ()
        request = ForkRequest(
            skill=skill,
            prompt=render_body(skill, args, tools=tools),
            args=args.strip(),
            allowed_tools=skill.allowed_tools,
            fork_context=skill.fork_context,
            model=skill.model,
        )
        return await self.fork_runner.run_fork(request, ctx)

    def skills_dir(self, scope: Scope) -> Path:
        """Where ``install_skill`` puts a skill: ``~/.mewcode/skills`` or the
        project's ``.mewcode/skills`` (refused if that leads out of the project)."""
        if scope == "user":
            return self.catalog.state / "skills"
        root = self.catalog.root
        target = root / ".mewcode" / "skills"
        real_root = os.path.realpath(root)
        real = os.path.realpath(target)
        if os.path.commonpath([real_root, real]) != real_root:
            raise SkillError(f"{target} leads outside the project ({real}); refusing to install")
        return target

    async def install(self, url: str, scope: Scope = "user") -> Installed:
        """Install the skill at ``url`` and read the catalog again."""
        settings = self.install_settings or InstallSettings.from_env()
        installed = await install(
            url, self.skills_dir(scope), settings, folders=self.catalog.folders
        )
        await asyncio.to_thread(self.catalog.reload)
        return installed

    # --- the tools ---------------------------------------------------------------------

    def _load_tool(self) -> Tool:
        toolset = self

        @tool(
            name="load_skill",
            read_only=True,
            kind="read",
            family="skill",
            rule_names=frozenset({"Skill"}),
            subject_arg="name",
            display_key="name",
            background_ok=True,
            system=True,
            default_allow=True,
        )
        async def load_skill(
            ctx: RunContext,
            name: Annotated[
                str, Field(description="The skill's name, as the skills list gives it.")
            ],
            args: Annotated[
                str, Field(description="What the skill should work on (may be empty).")
            ] = "",
        ) -> str:
            """Load a skill listed under "Skills" in the system prompt and follow its instructions.

            An inline skill's instructions are returned and stay active for the rest of the
            conversation; a fork skill runs as a subagent and its answer is returned.
            """
            services = ctx.require_services()
            try:
                done = await toolset.run(
                    name, args, by="model", active=services.active_skills,
                    tools=services.tools, ctx=ctx,
                )  # fmt: skip
            except SkillError as exc:
                raise ToolError(str(exc)) from None
            if done.skill.mode == "fork":
                return done.text
            head = f"Skill {done.skill.name!r} is now active; follow its instructions."
            if done.note:
                head += f" (Note: {done.note}.)"
            return f"{head}\n\n{done.text}"

        return load_skill

    def _install_tool(self) -> Tool:
        toolset = self

        @tool(
            name="install_skill",
            read_only=False,
            kind="edit",
            subject_arg="url",
            display_key="url",
            background_ok=True,
        )
        async def install_skill(
            ctx: RunContext,
            url: Annotated[
                str,
                Field(
                    description="github.com/<owner>/<repo>/tree/<ref>/<path>, a raw "
                    "SKILL.md URL, or skills.sh/<owner>/<repo>/<skill>."
                ),
            ],
            scope: Annotated[
                Scope,
                Field(
                    description="user (default: ~/.mewcode/skills) or project (.mewcode/skills)."
                ),
            ] = "user",
        ) -> str:
            """Download a skill (a folder holding SKILL.md) from GitHub or skills.sh and install it.

            The skill can be loaded with load_skill right after.
            """
            ctx.progress(status=f"downloading {url}")
            try:
                done = await toolset.install(url, scope)
            except SkillError as exc:
                raise ToolError(f"{exc} (nothing was installed or changed)") from None
            return toolset.installed_message(done)

        return install_skill

    def installed_message(self, done: Installed) -> str:
        """What the model and the person are told after an install."""
        verb = "replaced" if done.replaced else "installed"
        text = (
            f"Skill {done.name!r} {verb}: {done.files} file(s) in {done.directory} "
            f"(sha256 {done.sha256[:12]}). Load it with load_skill(name={done.name!r}) or type "
            f"/{done.name}."
        )
        current = self.catalog.get(done.name)
        if current is not None and current.directory != done.directory:
            text += (
                f" Note: {current.display_dir} also holds a skill called {done.name!r} and takes "
                "precedence."
            )
        return text
