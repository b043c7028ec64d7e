"""Resolved settings: ``summarybench.yaml`` (docs/configuration.md#summarybenchyaml) overlaid by
command-line options and ini keys.

The YAML keys are the spec's; ``Settings`` validates them with pydantic (unknown keys are
errors, so a typo never passes silently) and converts to the spec's ``BenchmarkConfig``
and ``ExtractionConfig``. The evaluator families' parts (``evaluation.<family>``,
``weights``, ``scoring``) come from the families' declarations, which whoever loads the
settings passes in (``load_settings(..., families=...)``): the settings know no family
and import no evaluator.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, ValidationError, create_model, field_validator

from .core.errors import InputError
from .core.family import Family, FamilyError, check_families
from .extract.config import (
    DEFAULT_EXCLUDES,
    LANGUAGES,
    ExtractionConfig,
    ExtractionFilters,
    ExtractionTypes,
    known_languages,
)
from .llm.router import Deployment
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


class SettingsError(InputError, ValueError):
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

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, v: list[str]) -> list[str]:
        # Here, not only when extracting: a run failed at collection with a traceback
        # while doctor said the file was fine.
        return known_languages(v)


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
    model name under ``model`` (docs/configuration.md#summarybenchyaml) and optional
    ``deployments``."""

    model_name: str = Field(alias="model")
    deployments: list[Deployment] = Field(default_factory=list)
    """Several endpoints or keys serving this model, spread over by litellm's Router, each
    with its own ``requestsPerMinute`` / ``tokensPerMinute`` and ``apiKeyEnv`` (the name
    of the variable holding its key; keys are never written in the file)."""

    @field_validator("api_key_env")
    @classmethod
    def _key_variable(cls, name: str | None) -> str | None:
        import re

        if name is None:
            return None
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"apiKeyEnv {name!r} is not an environment variable name "
                             "(letters, digits and underscores, e.g. MY_GATEWAY_KEY); it "
                             "names the variable that holds the key, never the key")
        from .llm.redaction import register_secret_env

        # Its value is masked in everything this process writes, whatever its name.
        register_secret_env(name)
        return name

    def to_model_config(self) -> ModelConfig:
        data = self.model_dump(exclude={"deployments"})
        if self.deployments:
            from .llm.router import RoutedModelConfig

            return RoutedModelConfig(deployments=self.deployments, **data)
        return ModelConfig(**data)


class ModelsSection(SBModel):
    test: list[ModelEntry] = Field(default_factory=list)
    judge: list[ModelEntry] = Field(default_factory=list)


class FamilySection(SBModel):
    """The section ``evaluation.<family>`` of an evaluator family: ``enabled``, and whatever
    the family's own subclass adds (declared as the family's ``settings``, in its package:
    ``evaluators/judge/settings.py``...)."""

    enabled: bool = True
    """Run the family at all."""

    def configuration(self, settings: Settings) -> dict[str, Any]:
        """This section as results.json records it (``configuration.evaluations.<family>``,
        and the store's run): by default every key as written in the file."""
        return self.model_dump(mode="json", by_alias=True)


class PluginSection(FamilySection):
    """A section the command line cannot check: of a family a plugin may declare, which the
    pytest session checks against the family's own section (``cli._common.cli_families``)."""

    model_config = ConfigDict(**{**FamilySection.model_config, "extra": "allow"})


class EvaluationSection(SBModel):
    """``evaluation``: sampling and parallelism, then one ``FamilySection`` per evaluator
    family, under the family's name (added by ``settings_model`` from the declarations)."""

    sample_size: int = Field(default=100, ge=1)
    sampling: SamplingStrategy = "stratified"
    seed: int = 0
    parallel: int = Field(default=4, ge=1)
    max_cost_usd: float | None = Field(default=None, ge=0)

    if TYPE_CHECKING:
        # The families' sections are fields of a model made at load time.
        def __getattr__(self, name: str) -> Any: ...


class OutputSection(SBModel):
    directory: str = DEFAULT_OUTPUT
    formats: list[ReportFormat] = ["markdown", "json", "html"]
    store: str | None = None
    """The SQLite store; default ``<directory>/store.sqlite``."""
    store_wait_s: float = Field(default=60.0, gt=0, le=86400)
    """How long a session waits, per store operation, while another process holds the
    store's lock, before it stops with one line (a line names the store and who has it
    open after 2 s)."""


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
    """Everything a run needs to know, as loaded from ``summarybench.yaml`` and options.

    ``load_settings`` validates with the model ``settings_model`` makes for the run's
    evaluator families, a subclass of this one: a section under ``evaluation``, a weight
    under ``weights`` and component weights under ``scoring`` for each family."""

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
    _families: tuple[Family, ...] = PrivateAttr(default=())

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

    @property
    def families(self) -> tuple[Family, ...]:
        """The evaluator families these settings were loaded for, in report order."""
        return self._families

    def section(self, family: str) -> FamilySection:
        """The settings section ``evaluation.<family>``."""
        found = getattr(self.evaluation, family, None)
        if not isinstance(found, FamilySection):
            raise SettingsError(f"evaluation.{family}: no evaluator family {family!r} is "
                                "declared in this run")
        return found

    def enabled_families(self) -> list[str]:
        """The families whose section has ``enabled``, in report order."""
        return [f.name for f in self._families if self.section(f.name).enabled]

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
        """This configuration as docs/reports.md#the-results-file records it
        (``configuration`` in results.json, ``config`` of the store's run): the same values,
        under the spec's names, each
        family's section as its ``configuration`` writes it."""
        ev = self.evaluation
        return BenchmarkConfig(
            sample_size=ev.sample_size,
            sampling_strategy=ev.sampling,
            seed=ev.seed,
            evaluations={f.name: self.section(f.name).configuration(self)
                         for f in self._families},
            # Plain keys, as a stored run's are read back: the record of a run does not
            # depend on which families the reading process declares.
            weights=EvalWeights.model_validate(self.weights.model_dump(by_alias=True)),
            scoring=ScoringConfig.model_validate(self.scoring.model_dump(by_alias=True)),
        )

    def fingerprint(self, *parts: str) -> str:
        """A short stable hash of what determines the run's units and results."""
        # Where a model's key is read from does not change what it answers.
        keyless = {"__all__": {"api_key_env"}}
        payload = self.model_dump_json(exclude={"output": True, "base_dir": True, "models": {
            "test": keyless, "judge": keyless}}) + "|".join(parts)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class _StrictScoring(ScoringConfig):
    # The file's ``scoring`` knows its families' keys; a stored run's reads any.
    model_config = ConfigDict(**{**ScoringConfig.model_config, "extra": "forbid"})


@lru_cache(maxsize=16)
def settings_model(families: tuple[Family, ...]) -> type[Settings]:
    """The ``Settings`` model of a run with ``families``: for each family, its section
    ``evaluation.<name>`` (the family's ``settings`` class), its weight ``weights.<name>``
    and, when it declares component weights, ``scoring.<name>Weights``, each with the
    family's defaults. Raises ``SettingsError`` for a family name that a section cannot
    take."""
    taken = {*EvaluationSection.model_fields, *dir(SBModel)}
    for family in families:
        if family.name in taken:
            raise SettingsError(f"the evaluator family {family.name!r} cannot have a section "
                                f"evaluation.{family.name} (the name is taken); choose "
                                "another name")
    sections: dict[str, Any] = {}
    weights: dict[str, Any] = {}
    scoring: dict[str, Any] = {}
    for family in families:
        try:
            section = family.section() or FamilySection
        except (ImportError, AttributeError, FamilyError) as exc:
            raise SettingsError(f"the settings section of the evaluator family "
                                f"{family.name!r} cannot be loaded: {exc}") from None
        if not (isinstance(section, type) and issubclass(section, FamilySection)):
            raise SettingsError(f"the settings section of the evaluator family "
                                f"{family.name!r} is not a subclass of "
                                "pytest_summarybench.settings.FamilySection")
        sections[family.name] = (section, Field(default_factory=section, alias=family.name))
        weights[family.name] = (float, Field(default=family.weight, ge=0, alias=family.name))
        if family.weights:
            keys_fields: dict[str, Any] = {key: (float, Field(default=value, ge=0))
                                           for key, value in family.weights.items()}
            keys = create_model(f"{family.name}_weights", __base__=SBModel, **keys_fields)
            scoring[f"{family.name}_weights"] = (keys, Field(default_factory=keys,
                                                            alias=family.scoring_key))
    evaluation = create_model("EvaluationSection", __base__=EvaluationSection, **sections)
    eval_weights = create_model("EvalWeights", __base__=EvalWeights, **weights)
    scoring_config = create_model("ScoringConfig", __base__=_StrictScoring, **scoring)
    return create_model(  # type: ignore[no-any-return]
        "Settings", __base__=Settings,
        evaluation=(evaluation, Field(default_factory=evaluation)),
        weights=(eval_weights, Field(default_factory=eval_weights)),
        scoring=(scoring_config, Field(default_factory=scoring_config)))


def read_config(path: Path) -> str:
    """The text of the configuration file ``path``: a regular file (or a link to one) of
    at most ``MAX_YAML_BYTES`` bytes of UTF-8, read with that bound; else a
    ``SettingsError`` naming the path and what it is. A FIFO, a link to ``/dev/zero`` or
    a folder there was taken for no configuration, and the default benchmark ran."""
    from .core.input_files import MAX_YAML_BYTES
    from .core.printable import shown_path
    from .core.regular import UnreadableFile, read_regular

    try:
        data = read_regular(path, MAX_YAML_BYTES)
    except UnreadableFile as exc:
        raise SettingsError(f"cannot read config file {shown_path(path)}: {exc} (a "
                            f"configuration is a file of at most {MAX_YAML_BYTES} "
                            "bytes)") from None
    except OSError as exc:
        raise SettingsError(f"cannot read config file {shown_path(path)}: "
                            f"{exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"config file {shown_path(path)} is not UTF-8 text "
                            f"({exc.reason} at byte {exc.start})") from None


def load_settings(path: str | Path | None, overrides: dict[str, Any] | None = None,
                  *, families: Iterable[Family], base_dir: str | Path = ".") -> Settings:
    """Load ``summarybench.yaml`` (or defaults when ``path`` is None) and apply overrides.

    ``families`` are the run's evaluator families (the built-in ones,
    ``evaluators.registry.BUILTIN_FAMILIES``, and any a plugin declares): each has its
    section, weight and component weights in the file. ``overrides`` maps dotted keys
    (``evaluation.sampleSize``) to values; they win over the file. Raises
    ``SettingsError`` naming the offending key and value.
    """
    try:
        declared = check_families(families)
    except FamilyError as exc:
        raise SettingsError(str(exc)) from None
    model = settings_model(declared)
    from .core.input_files import InputFileError, load_yaml
    from .core.printable import shown_path

    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        text = read_config(p)
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
        settings = model.model_validate(data)
    except ValidationError as exc:
        raise SettingsError(_describe(exc, path, model)) from None
    settings._families = declared
    return settings


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


def _did_you_mean(loc: tuple[int | str, ...], model: type[Settings]) -> str:
    """`` (did you mean PATH?)`` naming the known key nearest to an unknown one, by its
    whole dotted path; empty when none is near or the path leads nowhere known."""
    import difflib

    fields = _fields_at(loc[:-1], model)
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


def _fields_at(path: tuple[int | str, ...],
              model: type[Settings]) -> list[tuple[str, str]] | None:
    """(alias, attribute name) of every field of the section at ``path`` under ``model``
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

    cls: Any = model
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


def _describe(exc: ValidationError, path: str | Path | None, model: type[Settings]) -> str:
    from .core.input_files import clip, clip_text
    from .core.printable import shown_name, shown_path
    from .llm.redaction import redact

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
            msg = "unknown key" + _did_you_mean(err["loc"], model)
        value = err.get("input")
        # A value may hold a secret (a password in an endpoint's URL): masked as anywhere.
        value = redact(value) if isinstance(value, str) else value
        lines.append(f"{clip_text(key, 120)} = {clip(value)}{where}: "
                     f"{clip_text(msg, 300)}")
    if len(errors) > _MAX_ERRORS:
        lines.append(f"and {len(errors) - _MAX_ERRORS} more")
    return "invalid summarybench configuration: " + "; ".join(lines)
