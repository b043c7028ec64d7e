"""The ten supported languages: file extensions and their extractor specs.

Specs are imported on first use so that reading the extension table costs nothing.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._base import LanguageSpec

# Language key -> (module, class) of its spec.
_SPECS: dict[str, tuple[str, str]] = {
    "python": ("python", "PythonSpec"),
    "javascript": ("javascript", "JavaScriptSpec"),
    "typescript": ("typescript", "TypeScriptSpec"),
    "go": ("go", "GoSpec"),
    "java": ("java", "JavaSpec"),
    "rust": ("rust", "RustSpec"),
    "csharp": ("csharp", "CSharpSpec"),
    "ruby": ("ruby", "RubySpec"),
    "php": ("php", "PhpSpec"),
    "kotlin": ("kotlin", "KotlinSpec"),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".cs": "csharp",
    ".rb": "ruby", ".rake": "ruby",
    ".php": "php",
    ".kt": "kotlin", ".kts": "kotlin",
}


def language_for(path: str) -> str | None:
    """The language key for a file name, by extension (None when unsupported)."""
    dot = path.rfind(".")
    return EXTENSIONS.get(path[dot:].lower()) if dot >= 0 else None


@cache
def get_spec(key: str) -> LanguageSpec:
    """The (process-wide, shared) spec of a language key."""
    try:
        module, cls = _SPECS[key]
    except KeyError:
        raise ValueError(
            f"no extractor for language {key!r}; accepted: {', '.join(sorted(_SPECS))}"
        ) from None
    spec_cls = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
    return spec_cls()  # type: ignore[no-any-return]
