"""Resolved settings: ``summarybench.yaml`` (spec section 11.2) overlaid by command-line
options and ini keys.

The YAML keys are the spec's; ``Settings`` validates them with pydantic (unknown keys are
errors, so a typo never passes silently) and converts to the spec's ``BenchmarkConfig``
and ``ExtractionConfig``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass

from .core.vocabulary import FAMILIES
from .extract.config import (
    DEFAULT_EXCLUDES,
    LANGUAGES,
    ExtractionConfig,
    ExtractionFilters,
    ExtractionTypes,
)
from .llm.router import Deployment
from .llm.structured import StructuredMode
from .sandbox.limits import ConfiguredLimits
from .schemas import BenchmarkConfig, EvalWeights, ModelConfig, ScoringConfig
from .schemas._base import SBModel
from .schemas.config import SamplingStrategy

#: The models of the default run: offline baselines that need no key and no network.
DEFAULT_MODELS: tuple[str, ...] = (
    "builtin/docstring", "builtin/signature", "builtin/lead", "builtin/identifiers",
    "builtin/shuffled",
)
DEFAULT_OUTPUT = "summarybench-results"

ReportFormat = Literal["markdown", "json", "html"]


class SettingsError(ValueError):
    """A configuration value is invalid; the message names the key, value and accepted form."""


class CodebaseSection(SBModel):
    root: str | None = None
    """The code to benchmark, relative to the configuration file; unset: the sample
    codebase bundled with the package (``sample.bundled_codebase``)."""
    name: str | None = None
    repository: str | None = None
    commit: str | None = None
    languages: list[str] = Field(default_factory=lambda: list(LANGUAGES))
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    follow_external_symlinks: bool = False
    """Follow symlinks whose target is outside ``root`` (off: they are skipped and listed,
    so that a link to a home directory or a key file never reaches a model)."""


class ExtractionSection(SBModel):
    # pydantic copies mutable defaults per instance.
    types: list[Literal["function", "class", "method", "file"]] = [
        "function", "class", "method", "file"]
    min_lines: int = Field(default=3, ge=1)
    max_lines: int = Field(default=500, ge=1)
    skip_generated: bool = True
    skip_tests: bool = True
    strip_docstrings: bool = True
    # Excluded from dumps, hence from ``fingerprint``: results never depend on it.
    workers: int = Field(default=0, ge=0, exclude=True)
    """Extraction processes: 0 (auto) forks one per usable CPU for 1 MB of source or more,
    1 keeps everything in this process, N uses N processes."""


class ModelEntry(ModelConfig):
    """A model as written in the YAML file: ``ModelConfig``'s fields, with the provider's
    model name under ``model`` (spec 11.2) and optional ``deployments``."""

    model_name: str = Field(alias="model")
    deployments: list[Deployment] = Field(default_factory=list)
    """Several endpoints or keys serving this model, spread over by litellm's Router, each
    with its own ``requestsPerMinute`` / ``tokensPerMinute`` and ``apiKeyEnv`` (the name
    of the variable holding its key; keys are never written in the file)."""

    def to_model_config(self) -> ModelConfig:
        data = self.model_dump(exclude={"deployments"})
        if self.deployments:
            from .llm.router import RoutedModelConfig

            return RoutedModelConfig(deployments=self.deployments, **data)
        return ModelConfig(**data)


class ModelsSection(SBModel):
    test: list[ModelEntry] = Field(default_factory=list)
    judge: list[ModelEntry] = Field(default_factory=list)


class JudgeSection(SBModel):
    """LLM-as-judge settings (spec section 5): which evaluations, how many judges, and how
    strictly judge answers are read."""

    enabled: bool = True
    """Run the judge family at all."""
    pointwise: bool = True
    """Score each summary on the spec 5.1 rubric."""
    pairwise: bool = True
    """Run the spec 5.4 tournament: every pair of models, both orders."""
    min_judges: int = Field(default=2, ge=1)
    """Spec 5.3 rule 2: judges each model (and each pair) should be judged by."""
    max_judges: int = Field(default=3, ge=1, validate_default=True)
    """Spec 5.3 rule 3: at most this many judges per model or pair, diverse families first."""
    allow_fewer: bool = True
    """With fewer eligible judges than ``minJudges``, judge with those there are (and say so
    in the report); when false, a model or pair short of judges is not judged."""
    family_patterns: dict[str, list[str]] = Field(default_factory=dict)
    """Extra family -> regular expressions matched against model names, checked before the
    built-in table (e.g. ``{acme: ["^acme-"]}``)."""
    structured_output: StructuredMode = "auto"
    """Ask for JSON output: ``auto`` uses a JSON schema where the provider supports one and
    JSON mode where it has that, ``off`` relies on the prompt alone."""
    parse_retries: int = Field(default=1, ge=0, le=5)
    """How often a judge is asked again after an answer that is not valid JSON."""
    bootstrap_samples: int = Field(default=1000, ge=50, le=100_000)
    """Resamples of units for the confidence intervals of strengths and averages."""

    @field_validator("family_patterns")
    @classmethod
    def _patterns_compile(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        import re

        for family, patterns in v.items():
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"familyPatterns.{family}: {pattern!r} is not a valid "
                                     f"regular expression ({exc})") from None
        return v

    @field_validator("max_judges")
    @classmethod
    def _at_least_min(cls, v: int, info: Any) -> int:
        # ``info`` is pydantic's ValidationInfo; min_judges is validated first.
        low = info.data.get("min_judges")
        if low is not None and v < low:
            raise ValueError(f"maxJudges ({v}) must be at least minJudges ({low})")
        return v


class ContrastiveSection(SBModel):
    enabled: bool = True
    distractors: int = Field(default=9, ge=1)
    methods: list[Literal["embedding", "lexical", "llm"]] = ["embedding"]
    embedding_model: str = "builtin/minilm"


class RetrievalSection(SBModel):
    enabled: bool = True
    queries_per_unit: int = Field(default=5, ge=1)
    k_values: list[int] = Field(default_factory=lambda: [1, 3, 5, 10])
    embedding_model: str = "builtin/minilm"
    queries_file: str | None = None

    @field_validator("k_values")
    @classmethod
    def _k_positive(cls, v: list[int]) -> list[int]:
        if not v or any(k <= 0 for k in v):
            raise ValueError(f"kValues must be a non-empty list of positive integers, got {v}")
        return v


#: ``evaluation.downstream.sandbox``: the sandbox's own ``ConfiguredLimits`` (fields,
#: defaults and bounds declared there once), read with the settings' rules (camelCase keys,
#: unknown keys refused). A pydantic dataclass subclass of it, so it is one; type checkers
#: see the class it is made from.
if TYPE_CHECKING:
    SandboxSection = ConfiguredLimits
else:
    SandboxSection = pydantic_dataclass(ConfiguredLimits, config=SBModel.model_config,
                                        frozen=True)


class DownstreamSection(SBModel):
    """Downstream tasks (spec section 8); see ``pytest_summarybench/evaluators/downstream``."""

    enabled: bool = True
    tasks: list[Literal["completion", "bug_localisation", "function_selection"]] = [
        "completion", "bug_localisation", "function_selection"]
    completion_model: str | None = None
    """The task model of all three tasks: ``PROVIDER/MODEL``, the id or model name of a
    model in ``models.judge`` or ``models.test`` (its endpoint, limits and prices apply), or
    a bare model name of a known family (``claude-3-5-sonnet-20241022``)."""
    api_endpoint: str | None = None
    """Base URL for a ``PROVIDER/MODEL`` task model (e.g. provider ``local``)."""
    max_tokens: int = Field(default=1024, ge=64)
    """Output token limit of task-model calls (room for a whole function)."""
    tasks_file: str | None = None
    """A directory of ``completion.jsonl``, ``bug_localisation.jsonl`` and
    ``function_selection.jsonl``, or one JSONL file whose lines carry ``type``; default:
    ``tasks/<codebase dir name>/`` beside the codebase (see fixtures/tasks/README.md)."""
    build_tasks: bool = True
    """Build completion and function-selection tasks from the codebase's documented
    functions for a type no task file covers."""
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    """Limits of the sandbox completion tests run in (``pytest_summarybench/sandbox``):
    the fields of ``sandbox.ConfiguredLimits``, in camelCase."""


class EvaluationSection(SBModel):
    sample_size: int = Field(default=100, ge=1)
    sampling: SamplingStrategy = "stratified"
    seed: int = 0
    parallel: int = Field(default=4, ge=1)
    max_cost_usd: float | None = Field(default=None, ge=0)
    judge: JudgeSection = Field(default_factory=JudgeSection)
    contrastive: ContrastiveSection = Field(default_factory=ContrastiveSection)
    retrieval: RetrievalSection = Field(default_factory=RetrievalSection)
    downstream: DownstreamSection = Field(default_factory=DownstreamSection)


class OutputSection(SBModel):
    directory: str = DEFAULT_OUTPUT
    formats: list[ReportFormat] = ["markdown", "json", "html"]
    store: str | None = None
    """The SQLite store; default ``<directory>/store.sqlite``."""


class GateSection(SBModel):
    """CI gate: thresholds that fail the pytest session, naming the model and the metric."""

    min_overall: float | dict[str, float] | None = None
    """Minimum overall score, for every model (a number) or per model id (a mapping)."""
    min_family: dict[str, float] = Field(
        default_factory=dict)
    """Minimum family score for every model whose family ran, e.g. ``{retrieval: 0.4}``."""
    baseline: str | None = None
    """A baseline run: the path of its results.json, or its run id in the store (as
    ``summarybench runs`` lists them, or a unique prefix; a ``benchmarkId`` also works)."""
    max_regression: float = Field(default=0.0, ge=0)
    """Largest drop of a model's overall score against the baseline that is tolerated
    even when significant (paired t-test on shared units, Holm-corrected)."""


class Settings(SBModel):
    """Everything a run needs to know, as loaded from ``summarybench.yaml`` and options."""

    name: str = "summarybench"
    codebase: CodebaseSection = Field(default_factory=CodebaseSection)
    extraction: ExtractionSection = Field(default_factory=ExtractionSection)
    models: ModelsSection = Field(default_factory=ModelsSection)
    evaluation: EvaluationSection = Field(default_factory=EvaluationSection)
    weights: EvalWeights = Field(default_factory=EvalWeights)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    output: OutputSection = Field(default_factory=OutputSection)
    # Excluded from dumps, hence from ``fingerprint``: a gate judges a run, it does not
    # define one, so changing a threshold must not start a new run.
    gate: GateSection = Field(default_factory=GateSection, exclude=True)
    base_dir: str = "."
    """Directory that relative paths are resolved against (the YAML file's directory)."""

    @field_validator("name")
    @classmethod
    def _non_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("name must not be empty")
        return v

    # -- derived views ------------------------------------------------------------------
    def resolve(self, path: str) -> Path:
        p = Path(path)
        return p if p.is_absolute() else (Path(self.base_dir) / p)

    @property
    def codebase_root(self) -> Path:
        if self.codebase.root is None:
            from .core.sample import bundled_codebase

            return bundled_codebase()
        return self.resolve(self.codebase.root)

    @property
    def output_dir(self) -> Path:
        return self.resolve(self.output.directory)

    @property
    def store_path(self) -> Path:
        if self.output.store:
            return self.resolve(self.output.store)
        return self.output_dir / "store.sqlite"

    def test_models(self) -> list[ModelConfig]:
        """Models under test, sorted by id; the offline baselines when none is configured."""
        if self.models.test:
            models = [m.to_model_config() for m in self.models.test]
        else:
            models = [ModelConfig.parse(spec) for spec in DEFAULT_MODELS]
        ids = [m.id for m in models]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise SettingsError(f"models.test lists {dupes} more than once; give each an id")
        return sorted(models, key=lambda m: m.id)

    def judge_models(self) -> list[ModelConfig]:
        return sorted((m.to_model_config() for m in self.models.judge), key=lambda m: m.id)

    def enabled_families(self) -> list[str]:
        # Each family has the section of its name under ``evaluation``.
        return [f for f in FAMILIES if getattr(self.evaluation, f).enabled]

    def extraction_config(self) -> ExtractionConfig:
        ex = self.extraction
        return ExtractionConfig(
            root_path=str(self.codebase_root),
            languages=self.codebase.languages,
            include_patterns=self.codebase.include,
            exclude_patterns=self.codebase.exclude,
            extraction=ExtractionTypes(
                functions="function" in ex.types, classes="class" in ex.types,
                methods="method" in ex.types, files="file" in ex.types),
            filters=ExtractionFilters(min_lines=ex.min_lines, max_lines=ex.max_lines,
                                      skip_generated=ex.skip_generated,
                                      skip_tests=ex.skip_tests),
            strip_docstrings=ex.strip_docstrings,
            follow_external_symlinks=self.codebase.follow_external_symlinks,
            workers=ex.workers,
        )

    def benchmark_config(self) -> BenchmarkConfig:
        """This configuration as spec 2.4 records it (``configuration`` in results.json,
        ``config`` of the store's run): the same values, under the spec's names."""
        ev = self.evaluation
        methods = sorted(set(ev.contrastive.methods))
        # One method by its name; several (spec 2.4 knows "both") joined with "+".
        method = ("both" if methods == ["embedding", "llm"] else "+".join(methods)
                  if methods else "embedding")
        return BenchmarkConfig(
            sample_size=ev.sample_size,
            sampling_strategy=ev.sampling,
            seed=ev.seed,
            evaluations={
                "judge": {"enabled": ev.judge.enabled,
                          "judgeModels": [m.id for m in self.judge_models()],
                          "usePairwise": ev.judge.pairwise},
                "contrastive": {"enabled": ev.contrastive.enabled,
                                "distractorCount": ev.contrastive.distractors,
                                "method": method,
                                "embeddingModel": ev.contrastive.embedding_model},
                "retrieval": {"enabled": ev.retrieval.enabled,
                              "queriesPerUnit": ev.retrieval.queries_per_unit,
                              "kValues": sorted(set(ev.retrieval.k_values)),
                              "embeddingModel": ev.retrieval.embedding_model},
                "downstream": {"enabled": ev.downstream.enabled,
                               "tasks": list(ev.downstream.tasks),
                               "completionModel": ev.downstream.completion_model},
            },
            weights=self.weights,
            scoring=self.scoring,
        )

    def fingerprint(self, *parts: str) -> str:
        """A short stable hash of what determines the run's units and results."""
        payload = self.model_dump_json(exclude={"output", "base_dir"}) + "|".join(parts)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def load_settings(path: str | Path | None, overrides: dict[str, Any] | None = None,
                  *, base_dir: str | Path = ".") -> Settings:
    """Load ``summarybench.yaml`` (or defaults when ``path`` is None) and apply overrides.

    ``overrides`` maps dotted keys (``evaluation.sampleSize``) to values; they win over the
    file. Raises ``SettingsError`` naming the offending key and value.
    """
    from .core.input_files import InputFileError, load_yaml
    from .core.printable import shown_path

    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise SettingsError(f"cannot read config file {shown_path(p)}: "
                                f"{exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise SettingsError(f"config file {shown_path(p)} is not UTF-8 text "
                                f"({exc.reason} at byte {exc.start})") from None
        try:
            loaded = load_yaml(text, str(p))
        except InputFileError as exc:
            raise SettingsError(f"config file {exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise SettingsError(f"config file {shown_path(p)} must hold a mapping at the top "
                                f"level, found {type(loaded).__name__}")
        data = loaded or {}
        base_dir = p.parent
    for dotted, value in (overrides or {}).items():
        _set_dotted(data, dotted, value)
    data.setdefault("baseDir", str(base_dir))
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise SettingsError(_describe(exc, path)) from None


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[keys[-1]] = value


#: Validation errors quoted in one message; the rest are counted.
_MAX_ERRORS = 10


def _did_you_mean(loc: tuple[int | str, ...]) -> str:
    """`` (did you mean PATH?)`` naming the known key nearest to an unknown one, by its
    whole dotted path; empty when none is near or the path leads nowhere known."""
    import difflib

    fields = _fields_at(loc[:-1])
    key = loc[-1] if loc else None
    if not fields or not isinstance(key, str):
        return ""
    # Either spelling is matched (populate_by_name accepts snake_case); the suggestion is
    # the spec's camelCase.
    spelled = {n: alias for alias, name in fields for n in (alias, name)
               if alias not in _HIDDEN_KEYS}
    close = difflib.get_close_matches(key, list(spelled), n=1, cutoff=0.6)
    if not close:
        return ""
    path = ".".join(str(p) for p in (*loc[:-1], spelled[close[0]]))
    return f" (did you mean {path}?)"


#: Keys not meant to be written in the file (set by the loader), never suggested.
_HIDDEN_KEYS = frozenset({"baseDir", "base_dir"})


def _fields_at(path: tuple[int | str, ...]) -> list[tuple[str, str]] | None:
    """(alias, attribute name) of every field of the section at ``path`` under Settings
    (list indices are stepped over); None when ``path`` leads to no known section."""
    from typing import get_args

    from pydantic import BaseModel
    from pydantic.alias_generators import to_camel

    def fields_of(cls: Any) -> dict[str, Any] | None:
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            return dict(cls.model_fields)
        found = getattr(cls, "__pydantic_fields__", None)
        return dict(found) if isinstance(found, dict) else None

    def section_in(annotation: Any) -> Any:
        """The section class an annotation holds (``X``, ``list[X]``, ``X | None``)."""
        if fields_of(annotation) is not None:
            return annotation
        for arg in get_args(annotation):
            found = section_in(arg)
            if found is not None:
                return found
        return None

    cls: Any = Settings
    for part in path:
        if isinstance(part, int):
            continue
        here = fields_of(cls) or {}
        match = next((f for n, f in here.items() if part in (n, f.alias)), None)
        cls = section_in(match.annotation) if match is not None else None
        if cls is None:
            return None
    fields = fields_of(cls)
    if fields is None:
        return None
    return [(f.alias or to_camel(n), n) for n, f in fields.items()]


def _describe(exc: ValidationError, path: str | Path | None) -> str:
    from .core.input_files import clip, clip_text
    from .core.printable import shown_name, shown_path

    where = f" in {shown_path(path)}" if path else ""
    lines = []
    # include_input=False would lose the value; each one is clipped instead (a value can
    # be anything the YAML file held, of any size).
    errors = exc.errors(include_url=False)
    for err in errors[:_MAX_ERRORS]:
        # A key of the user's file: escaped, as any name printed (a key may hold ESC).
        key = shown_name(".".join(str(p) for p in err["loc"]))
        msg = err["msg"]
        if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            msg = "unknown key" + _did_you_mean(err["loc"])
        lines.append(f"{clip_text(key, 120)} = {clip(err.get('input'))}{where}: "
                     f"{clip_text(msg, 300)}")
    if len(errors) > _MAX_ERRORS:
        lines.append(f"and {len(errors) - _MAX_ERRORS} more")
    return "invalid summarybench configuration: " + "; ".join(lines)
