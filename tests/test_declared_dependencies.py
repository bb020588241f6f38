"""Every third-party package the code imports is declared in pyproject.toml.

The packages (``mewcode_kernel/``, ``magics/``, ``mewcode_acp/``) and
``examples/`` may import only what ``[project].dependencies`` declares (a
module made for an optional extra, ``EXTRA_MODULES``, also what it declares); the tests (``tests/``,
``notebooks/``) and ``benchmarks/`` also what the ``test`` and ``browser``
extras declare. Every import counts: at module level or inside a function,
under ``TYPE_CHECKING`` or a ``try``, and the string-named ones
(``importlib.import_module("x")``, ``pytest.importorskip("x")``,
``importlib.util.find_spec("x")``, ``__import__("x")``). An import name is
matched to its distribution through the installed metadata (``yaml`` is
PyYAML), else by name; the standard library, the repository's own packages
and a script's sibling modules are not third-party.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OWN = frozenset({"mewcode_kernel", "magics", "mewcode_acp", "tests", "notebooks"})
# copied real-world inputs and installed npm packages: not our code
NOT_OURS = frozenset({"fixtures", "node_modules", "__pycache__"})
# the calls that import (or look for) the module named by their first argument
STRING_IMPORTS = frozenset({"import_module", "importorskip", "find_spec", "__import__"})

RUNTIME = ("mewcode_kernel", "magics", "mewcode_acp", "examples")
# modules an optional extra is for, which may import what that extra declares
EXTRA_MODULES = {"mewcode_acp/persona.py": "jupyter-ai"}
TESTING = ("tests", "notebooks", "benchmarks")
# a folder of the packages that may also import what an optional extra declares
# (it is imported only when that feature is on: tests/test_telemetry_off.py)
OPTIONAL = {"mewcode_kernel/core/telemetry": "otel"}


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)", spec)
    assert match, f"not a requirement: {spec!r}"
    return normalize(match[1])


def declared(pyproject: Mapping[str, object], *extras: str) -> frozenset[str]:
    project = pyproject["project"]
    assert isinstance(project, dict)
    specs = list(project.get("dependencies", []))
    todo, seen = list(extras), set()
    while todo:  # an extra may name another of this project's (mewcode[jupyter-ai])
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for spec in project["optional-dependencies"][extra]:
            if requirement_name(spec) == normalize(project["name"]) and "[" in spec:
                todo += [e.strip() for e in spec.split("[", 1)[1].split("]")[0].split(",")]
            else:
                specs.append(spec)
    return frozenset(requirement_name(s) for s in specs)


def _importers(tree: ast.AST) -> frozenset[str]:
    """The names that call an importer in this file: its own name, or the
    alias it was imported under (``from importlib import import_module as load``)."""
    aliases = {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name in STRING_IMPORTS and alias.asname
    }
    return STRING_IMPORTS | aliases


def _string_import(node: ast.Call, importers: frozenset[str]) -> str | None:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in importers or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def imported(path: Path) -> Iterator[tuple[str, int]]:
    """``(top-level module name, line)`` of each absolute import in ``path``."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    importers = _importers(tree)
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and (target := _string_import(node, importers)):
            if not target.startswith("."):
                names = [target]
        for name in names:
            yield name.split(".")[0], node.lineno


def sources(root: Path, folders: Iterable[str]) -> Iterator[Path]:
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            if not NOT_OURS & set(path.relative_to(root).parts):
                yield path


def _local(name: str, path: Path) -> bool:
    """The standard library, the repository's packages, or a module next to
    ``path`` (a script importing its siblings)."""
    if name in sys.stdlib_module_names or name in OWN or name == "__future__":
        return True
    here = path.parent
    return (here / f"{name}.py").is_file() or (here / name / "__init__.py").is_file()


def undeclared(
    root: Path,
    folders: Iterable[str],
    allowed: frozenset[str],
    distributions: Mapping[str, list[str]],
) -> dict[str, list[str]]:
    """``{module: ["file:line", ...]}`` for each third-party import of
    ``folders`` whose distribution ``allowed`` does not name."""
    missing: dict[str, list[str]] = {}
    for path in sources(root, folders):
        for name, line in imported(path):
            if _local(name, path):
                continue
            # by the name alone only when nothing installed provides it: a declared
            # "yaml" is not PyYAML, which is what ``import yaml`` loads
            known = distributions.get(name)
            candidates = {normalize(d) for d in known} if known else {normalize(name)}
            if not candidates & allowed:
                where = f"{path.relative_to(root)}:{line}"
                missing.setdefault(name, []).append(where)
    return missing


@pytest.fixture(scope="module")
def pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()


def test_the_packages_and_examples_import_only_declared_dependencies(
    pyproject: dict[str, object], distributions: Mapping[str, list[str]]
) -> None:
    missing = undeclared(ROOT, RUNTIME, declared(pyproject), distributions)
    for where in list(missing.values()):
        where[:] = [w for w in where if w.split(":")[0] not in EXTRA_MODULES]
    missing = {name: where for name, where in missing.items() if where}
    for folder, extra in OPTIONAL.items():
        still = undeclared(ROOT, [folder], declared(pyproject, extra), distributions)
        for name in list(missing):
            kept = [w for w in missing[name] if not w.startswith(f"{folder}/") or name in still]
            if kept:
                missing[name] = kept
            else:
                del missing[name]
    assert not missing, f"declare in [project].dependencies: {missing}"


def test_only_the_optional_folders_import_their_extras(
    pyproject: dict[str, object], distributions: Mapping[str, list[str]]
) -> None:
    for folder, extra in OPTIONAL.items():
        extras_only = declared(pyproject, extra) - declared(pyproject)
        assert extras_only, f"the {extra} extra declares nothing of its own"
        elsewhere = undeclared(ROOT, RUNTIME, declared(pyproject), distributions)
        outside = {
            name: [
                w
                for w in wheres
                if not w.startswith(f"{folder}/") and w.split(":")[0] not in EXTRA_MODULES
            ]
            for name, wheres in elsewhere.items()
        }
        assert not {k: v for k, v in outside.items() if v}, outside


def test_a_module_of_an_extra_imports_only_what_the_extra_declares(
    pyproject: dict[str, object], distributions: Mapping[str, list[str]]
) -> None:
    for module, extra in EXTRA_MODULES.items():
        assert (ROOT / module).is_file(), module
        allowed = declared(pyproject, extra)
        found = undeclared(ROOT, RUNTIME, allowed, distributions)
        mine = {n: w for n, w in found.items() if any(x.split(":")[0] == module for x in w)}
        assert not mine, f"declare in the {extra} extra: {mine}"


def test_the_tests_import_only_what_the_test_extras_declare(
    pyproject: dict[str, object], distributions: Mapping[str, list[str]]
) -> None:
    allowed = declared(pyproject, "test", "browser", "collaboration")
    missing = undeclared(ROOT, TESTING, allowed, distributions)
    assert not missing, f"declare in the test (or browser, or collaboration) extra: {missing}"


def test_the_scan_reads_every_folder() -> None:
    for folder in (*RUNTIME, *TESTING):
        assert any(sources(ROOT, [folder])), folder


# --- the scan cannot be got around -------------------------------------------------------

SPELLINGS = [
    "import somepkg\n",
    "import somepkg.sub as alias\n",
    "import os, somepkg\n",
    "from somepkg import thing\n",
    "from somepkg.sub.deeper import thing\n",
    "def later():\n    import somepkg\n",
    "class C:\n    def m(self):\n        from somepkg import x\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import somepkg\n",
    "try:\n    import somepkg\nexcept ImportError:\n    somepkg = None\n",
    "import importlib\nimportlib.import_module('somepkg.sub')\n",
    "from importlib import import_module\nimport_module('somepkg')\n",
    "import pytest\npytest.importorskip('somepkg')\n",
    "import importlib.util\nimportlib.util.find_spec('somepkg')\n",
    "__import__('somepkg')\n",
    "import builtins\nbuiltins.__import__('somepkg')\n",
    "from importlib import import_module as load\nload('somepkg')\n",
    "from pytest import importorskip as need\nneed('somepkg')\n",
    "import importlib as il\nil.import_module('somepkg')\n",
    "async def f():\n    import somepkg\n",
    "x = [__import__('somepkg') for _ in ()]\n",
]


@pytest.mark.parametrize("code", SPELLINGS)
def test_every_spelling_of_an_undeclared_import_is_found(tmp_path: Path, code: str) -> None:
    (tmp_path / "magics" / "deep").mkdir(parents=True)
    (tmp_path / "magics" / "deep" / "mod.py").write_text(code)
    found = undeclared(tmp_path, ["magics"], frozenset({"pytest"}), {})
    assert list(found) == ["somepkg"], found
    assert found["somepkg"][0].startswith("magics/deep/mod.py:")


def test_a_declared_distribution_is_matched_by_its_import_name(tmp_path: Path) -> None:
    (tmp_path / "magics").mkdir()
    (tmp_path / "magics" / "m.py").write_text("import yaml\nimport zmq\nimport Foo_Bar\n")
    dists = {"yaml": ["PyYAML"], "zmq": ["pyzmq"]}
    allowed = declared(
        {"project": {"dependencies": ["PyYAML>=6", "pyzmq ; python_version>'3'", "foo.bar[x]"]}}
    )
    assert undeclared(tmp_path, ["magics"], allowed, dists) == {}
    assert "yaml" in undeclared(tmp_path, ["magics"], declared({"project": {}}), dists)
    # a distribution named like the import is not the one that provides it
    bare = declared({"project": {"dependencies": ["yaml", "zmq", "foo-bar"]}})
    assert sorted(undeclared(tmp_path, ["magics"], bare, dists)) == ["yaml", "zmq"]


def test_standard_library_own_packages_siblings_and_relative_imports_are_not_third_party(
    tmp_path: Path,
) -> None:
    pkg = tmp_path / "magics"
    pkg.mkdir()
    (pkg / "sibling.py").write_text("")
    (pkg / "m.py").write_text(
        "from __future__ import annotations\nimport os, json, asyncio\n"
        "import mewcode_kernel.core\nfrom tests._kernel import Kernel\n"
        "from . import x\nfrom .y import z\nimport sibling\n"
        "importlib.import_module('.rel', __package__)\n"
    )
    assert undeclared(tmp_path, ["magics"], frozenset(), {}) == {}


def test_copied_fixtures_and_node_modules_are_not_scanned(tmp_path: Path) -> None:
    for skipped in ("fixtures", "node_modules"):
        (tmp_path / "tests" / skipped).mkdir(parents=True)
        (tmp_path / "tests" / skipped / "x.py").write_text("import somepkg\n")
    (tmp_path / "tests" / "t.py").write_text("import otherpkg\n")
    assert list(undeclared(tmp_path, ["tests"], frozenset(), {})) == ["otherpkg"]
