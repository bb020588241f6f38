"""How a ``RunPython(...)`` specifier matches one Python statement's text
(``prefix:*`` ends at a name boundary, not at a space as for commands)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .matcher import Matcher, MatcherError, Not, compile_matcher

__all__ = ["python_matcher"]


def _continues_name(char: str) -> bool:
    """Whether ``char`` can continue a Python name: any letter or digit Python
    accepts (``printé`` is one name, not ``print`` then ``é``)."""
    return ("a" + char).isidentifier()


@dataclass(frozen=True, slots=True)
class _PythonPrefix:
    """``prefix:*`` for code: the prefix, then the end or a non-name character."""

    prefix: str

    @property
    def pattern(self) -> str:
        return self.prefix + ":*"

    def matches(self, value: str) -> bool:
        if not value.startswith(self.prefix):
            return False
        rest = value[len(self.prefix) :]
        return not rest or not _continues_name(rest[0])


@cache
def python_matcher(spec: str) -> Matcher:
    """A ``RunPython(...)`` specifier as a matcher over one statement's text.
    Raises ``MatcherError`` for one that cannot be compiled."""
    if spec.startswith("!"):
        return Not(python_matcher(spec[1:]))
    if spec.startswith(("=", "~")):
        return compile_matcher(spec, style="text")
    if spec.endswith(":*") and "*" not in spec[:-2]:
        prefix = spec[:-2].rstrip()
        if not prefix:
            raise MatcherError("empty prefix before :*")
        return _PythonPrefix(prefix)
    return compile_matcher(spec, style="text")
