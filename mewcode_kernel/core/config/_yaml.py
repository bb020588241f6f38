"""Reading YAML while keeping node positions, so errors can name a line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

__all__ = ["YamlDoc", "read_yaml"]


@dataclass(frozen=True, kw_only=True, slots=True)
class YamlDoc:
    """One parsed file: the plain data plus the node tree it was built from."""

    path: Path
    data: Any
    node: yaml.Node | None
    warnings: list[ConfigError] = field(default_factory=list)

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """The 1-based line of the deepest node found along ``loc``.

        For a mapping entry the line of its key is used (that is where a reader
        looks); when ``loc`` names something absent (a missing field) the line
        of the nearest existing parent is returned.
        """
        node = self.node
        if node is None:
            return None
        line = node.start_mark.line + 1
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                found = None
                for key, value in node.value:  # the last duplicate wins, as in the data
                    if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                        found = (key, value)
                if found is None:
                    break
                line = found[0].start_mark.line + 1
                node = found[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if not 0 <= part < len(node.value):
                    break
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                break
        return line


def read_yaml(path: Path) -> YamlDoc:
    """Parse ``path`` (safe loader). Raises ``ConfigError`` with the line of a
    syntax error; an empty file gives ``data=None``."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the file ({exc.strerror})", path=str(path)) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        if mark is not None:
            problem = f"{problem} (column {mark.column + 1})"
        if exc.context and exc.problem:
            start = exc.context_mark
            where = ""
            if start is not None and (mark is None or start.line != mark.line):
                where = f" started on line {start.line + 1}"
            problem = f"{problem}, {exc.context}{where}"
        line = mark.line + 1 if mark is not None else None
        raise ConfigError(f"invalid YAML: {problem}", path=str(path), line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", path=str(path)) from None
    finally:
        loader.dispose()
    return YamlDoc(path=path, data=data, node=node, warnings=_duplicate_keys(path, node))


def _duplicate_keys(path: Path, root: yaml.Node | None) -> list[ConfigError]:
    """PyYAML silently keeps the last of two equal keys; say so, it is usually a slip."""
    out: list[ConfigError] = []
    stack = [root] if root is not None else []
    visited: set[int] = set()  # aliases share nodes and may even recurse
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen:
                        out.append(
                            ConfigError(
                                f"duplicate key {key.value!r}; the last one is used",
                                path=str(path),
                                line=key.start_mark.line + 1,
                            )
                        )
                    seen.add(key.value)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    out.sort(key=lambda e: e.line or 0)
    return out
