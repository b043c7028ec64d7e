"""Extraction configuration (docs/methods.md#code-units-and-sampling)."""

from __future__ import annotations

from pydantic import Field, field_validator

from ..schemas._base import SBModel

LANGUAGES: tuple[str, ...] = (
    "typescript", "javascript", "python", "go", "java", "rust", "csharp", "ruby", "php", "kotlin",
)

DEFAULT_EXCLUDES: tuple[str, ...] = (
    "**/node_modules/**", "**/vendor/**", "**/.venv/**", "**/venv/**", "**/.git/**",
    "**/dist/**", "**/build/**", "**/__pycache__/**", "**/site-packages/**", "**/.tox/**",
    "**/*.min.js", "**/*.min.css", "**/*.bundle.js", "**/*_pb2.py", "**/*.pb.go",
    "**/*.generated.*", "**/*.g.cs", "**/*.designer.cs",
)


class ExtractionFilters(SBModel):
    """Which units and files are worth extracting."""

    min_lines: int = Field(default=3, ge=1)
    """Skip units shorter than this (trivial code)."""
    max_lines: int = Field(default=500, ge=1)
    """Skip units longer than this; files over it are still scanned for smaller units."""
    skip_generated: bool = True
    """Skip files that declare themselves generated (``@generated``, ``DO NOT EDIT``)."""
    skip_tests: bool = True
    """Skip test files and folders by the usual naming conventions."""
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    """Skip files larger than this outright (data dumps, bundled or generated code)."""


class ExtractionTypes(SBModel):
    """Which unit types to extract."""

    functions: bool = True
    classes: bool = True
    methods: bool = True
    files: bool = True


class ExtractionConfig(SBModel):
    """Which files and units to extract from a codebase."""

    root_path: str
    """The codebase root; unit paths are relative to it."""
    languages: list[str] = Field(default_factory=lambda: list(LANGUAGES))
    """Languages to extract (keys of ``LANGUAGES``)."""
    include_patterns: list[str] = Field(default_factory=list)
    """Glob patterns relative to the root; empty means every file of a known language."""
    exclude_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    """Glob patterns relative to the root that are never extracted."""
    extraction: ExtractionTypes = Field(default_factory=ExtractionTypes)
    filters: ExtractionFilters = Field(default_factory=ExtractionFilters)
    strip_docstrings: bool = False
    """Remove the unit's own docstring or doc comment from the content models see."""
    follow_symlinks: bool = True
    """Follow symlinked folders and files whose target is inside the root (each real folder
    is visited once)."""
    follow_external_symlinks: bool = False
    """Also follow links whose target resolves outside the root. Off by default: a link in
    a codebase (to a home directory, to a key file) must not bring files from elsewhere on
    the machine into units that are sent to models; such links are skipped and reported."""
    workers: int = Field(default=0, ge=0)
    """Processes extracting files: 1 = this process alone; N = this process and N - 1
    worker processes; 0 (auto) = one per usable CPU (up to 8) when there is 1 MB of
    source or more and workers can be forked (no other threads running), else this
    process alone. Results do not depend on it (docs/performance.md: what it gains)."""

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, v: list[str]) -> list[str]:
        return known_languages(v)


def known_languages(languages: list[str]) -> list[str]:
    """``languages`` when each is one we extract, else a ``ValueError`` naming the others
    (control characters escaped) and the accepted ones. Checked wherever a list of
    languages is taken: the options, ``codebase.languages`` of the configuration."""
    unknown = [lang for lang in languages if lang not in LANGUAGES]
    if unknown:
        raise ValueError(f"unknown language(s) {unknown}; accepted: {', '.join(LANGUAGES)}")
    return languages
