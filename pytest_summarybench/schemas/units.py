"""The code unit schema of docs/methods.md#code-units-and-sampling: what extraction produces."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from ._base import SBModel

_DISTINCTION = re.compile(r"(\([^()]*\))?(@L\d+(#\d+)?)?\Z")


def base_name(part: str) -> str:
    """One part of a qualified name without what tells same-named units of a file apart:
    ``write(JsonWriter,T)`` -> ``write``, ``get@L12`` -> ``get`` (docs/extraction.md)."""
    if not part.endswith((")", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")):
        return part
    return _DISTINCTION.sub("", part, count=1) or part


UnitType = Literal["function", "class", "method", "file", "module"]
Visibility = Literal["public", "private", "protected"]


class Parameter(SBModel):
    """One formal parameter of a function or method."""

    name: str
    """The parameter's name as written (``self`` and receivers excluded)."""
    type: str | None = None
    """The declared type annotation, verbatim, if any."""
    description: str | None = None
    """A description from the unit's doc comment, when one names the parameter."""
    optional: bool = False
    """True when the parameter has a default or is declared optional."""
    default_value: str | None = None
    """The default value's source text, if any."""


class UnitMetadata(SBModel):
    """AST-derived metadata of a unit."""

    start_line: int
    """First line of the unit, 1-based, inclusive."""
    end_line: int
    """Last line of the unit, 1-based, inclusive."""
    signature: str | None = None
    """The declaration line(s) up to the body, whitespace-normalized."""
    parameters: list[Parameter] | None = None
    """Formal parameters, for functions and methods."""
    return_type: str | None = None
    """The declared return type, verbatim, if any."""
    visibility: Visibility | None = None
    """Visibility from modifiers or naming conventions."""
    decorators: list[str] | None = None
    """Decorators or annotations, verbatim without the leading ``@``."""
    dependencies: list[str] = Field(default_factory=list)
    """Imported names (modules or symbols) that the unit uses."""
    exports: list[str] | None = None
    """What a file or module exports."""
    complexity: int | None = None
    """Cyclomatic complexity (1 + decision points)."""


class UnitRelationships(SBModel):
    """Links between units, resolved within the codebase."""

    parent_id: str | None = None
    """The containing class or file."""
    child_ids: list[str] = Field(default_factory=list)
    """Methods of a class, top-level units of a file."""
    calls_ids: list[str] = Field(default_factory=list)
    """Units this unit calls, resolved by name and scope."""
    called_by_ids: list[str] = Field(default_factory=list)
    """Units that call this unit."""
    unresolved_calls: list[str] = Field(default_factory=list)
    """Called names that could not be resolved to a unit in the codebase (kept, not dropped)."""


class CodeUnit(SBModel):
    """A function, class, method or file extracted from the codebase."""

    id: str
    """Stable identifier: a hash of the path and content."""
    path: str
    """File path relative to the codebase root, with forward slashes."""
    name: str
    """Qualified name within the file (``Class.method``), or the file name for files."""
    type: UnitType
    """What kind of unit this is."""
    language: str
    """Language key: python, typescript, javascript, go, java, rust, csharp, ruby, php, kotlin."""
    content: str
    """The code as models see it (the doc comment stripped when configured)."""
    docstring: str | None = None
    """The unit's own docstring or leading doc comment, recorded separately."""
    metadata: UnitMetadata
    """AST-derived metadata."""
    relationships: UnitRelationships = Field(default_factory=UnitRelationships)
    """Parent, children and call graph."""

    @property
    def short_name(self) -> str:
        """The last component of the qualified name, as code calls it (without the
        parameter types or line that tell same-named units of a file apart)."""
        return base_name(self.name.rsplit(".", 1)[-1])
