"""The import graph, drawn from the code: no cycles, no upward edges.

Every import counts: module level, inside a function (a lazy import is
still a dependency) and under ``if TYPE_CHECKING:`` (a type names a
dependency as much as a call does). The core's
packages sit in layers; a module may import its own layer or lower ones.
The core never imports the notebook front end or the kernel, tools never
import permission, and no module outside ``core/permission`` asks what
concrete gate it holds. The two front ends (``magics``, the notebook's;
``mewcode_acp``, the ACP server's) sit on the core side by side: neither
imports the other, and nothing in the core imports either.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mewcode_kernel", "magics", "mewcode_acp")
FRONT_ENDS = ("magics", "mewcode_acp")
CORE = "mewcode_kernel.core"

# Lowest first. Each entry: the core's top-level modules and packages in that layer.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "errors",
            "messages",
            "usage",
            "events",
            "pricing",
            "lifecycle",
            "redaction",
            "child_env",
            "frontmatter",
            "userdirs",
            "project_paths",
            "ownership",
            "locations",
            "key_file",
        }
    ),
    frozenset(
        {"config", "fs", "prompt", "conversation", "sandbox", "trust", "notebook", "plugins"}
    ),
    frozenset({"providers"}),
    frozenset({"tools"}),
    frozenset({"permission", "mcp"}),
    frozenset(
        {
            "context",
            "session",
            "skills",
            "tasks",
            "hooks",
            "checkpoints",
            "telemetry",
            "doctor",
            "toolsearch",
        }
    ),
    frozenset({"agent"}),
    frozenset({"subagents"}),
    frozenset({"agent_context", "agent_safety", "session_log", "session_hooks"}),
    frozenset({"session_agent"}),
    frozenset({"session_parts"}),
    frozenset({"agent_session", "commands"}),
    frozenset({"session_wiring"}),
)
RANK = {name: n for n, layer in enumerate(LAYERS) for name in layer}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            found[_module_name(path)] = path
    return found


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool) -> None:
        self.package = module if is_package else module.rpartition(".")[0]
        self.found: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, node.module] if node.module else base)
        else:
            target = node.module or ""
        self.found.add(target)
        for alias in node.names:  # ``from . import x`` may name a submodule
            self.found.add(f"{target}.{alias.name}")


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        visitor = _Imports(name, path.name == "__init__.py")
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[name] = {t for t in visitor.found if t in modules and t != name}
    return graph


GRAPH = _graph()


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph``, or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _top(module: str) -> str | None:
    """The core's top-level module or package holding ``module``."""
    if not module.startswith(CORE + "."):
        return None
    return module[len(CORE) + 1 :].split(".")[0]


def test_the_graph_was_read() -> None:
    assert len(GRAPH) > 100
    assert "mewcode_kernel.core.permission.engine" in GRAPH["mewcode_kernel.core.permission.gate"]


def test_no_module_cycles() -> None:
    # a package's __init__ re-exporting its own modules is not a cycle of design
    edges = {
        m: {t for t in targets if not (m.startswith(t + ".") and GRAPH.get(t) is not None)}
        for m, targets in GRAPH.items()
    }
    assert _cycle(edges) is None, " -> ".join(_cycle(edges) or [])


def test_no_package_cycles_in_the_core() -> None:
    packages: dict[str, set[str]] = defaultdict(set)
    for module, targets in GRAPH.items():
        top = _top(module)
        if top is None:
            continue
        packages[top] |= {t for t in map(_top, targets) if t is not None and t != top}
    assert _cycle(packages) is None, " -> ".join(_cycle(packages) or [])


def test_every_core_package_has_a_layer() -> None:
    tops = {t for t in map(_top, GRAPH) if t is not None}
    assert tops <= set(RANK), f"give these a layer: {sorted(tops - set(RANK))}"


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith(CORE + ".")))
def test_no_upward_edge(module: str) -> None:
    top = _top(module)
    assert top is not None
    for target in GRAPH[module]:
        assert not target.startswith("magics"), f"{module} imports the front end ({target})"
        if not target.startswith(CORE):
            assert target.startswith("mewcode_kernel.core") or target == "mewcode_kernel", (
                f"{module} imports {target}, outside the core"
            )
            continue
        other = _top(target)
        if other is None or other == top:
            continue
        assert RANK[other] <= RANK[top], (
            f"{module} (layer {RANK[top]}) imports {target} ({RANK[other]})"
        )


def test_tools_never_import_permission() -> None:
    tools = [m for m in GRAPH if _top(m) == "tools"]
    bad = {m: t for m in tools for t in GRAPH[m] if _top(t) == "permission"}
    assert not bad


def test_nobody_outside_permission_asks_which_gate_it_holds() -> None:
    offenders = []
    for name, path in _modules().items():
        if name.startswith(f"{CORE}.permission"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
                if len(node.args) == 2 and "Gate" in ast.unparse(node.args[1]):
                    offenders.append(f"{name}: {ast.unparse(node)}")
    assert not offenders


def test_the_front_ends_sit_side_by_side_on_the_core() -> None:
    assert "mewcode_acp.server" in GRAPH, "the ACP front end was not read"
    bad = []
    for module, targets in GRAPH.items():
        for target in targets:
            mine = next((f for f in FRONT_ENDS if module.split(".")[0] == f), None)
            theirs = next((f for f in FRONT_ENDS if target.split(".")[0] == f), None)
            if theirs is not None and mine != theirs and module.startswith(CORE):
                bad.append(f"{module} -> {target}")
            elif theirs is not None and mine is not None and mine != theirs:
                bad.append(f"{module} -> {target}")
    assert not bad, bad


def test_the_acp_front_end_imports_no_notebook_machinery() -> None:
    """It runs without a kernel: no IPython, ipykernel or widgets, at any depth of its own modules."""
    notebook = ("IPython", "ipykernel", "ipywidgets", "anywidget", "magics")
    offenders = []
    for name, path in _modules().items():
        if not name.startswith("mewcode_acp"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{name}: {n}" for n in names if n.split(".")[0] in notebook]
    assert not offenders, offenders
