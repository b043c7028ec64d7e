"""Command-line options and ini keys turned into settings overrides.

Syntax is checked in ``pytest_configure`` (cheap, no pydantic); the full settings are
validated when the benchmark is first used. Every error names the flag or key, the value
and what is accepted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..core.family import FamilyError, check_families, parse_families
from ..core.printable import shown_path
from ..core.vocabulary import PROVIDERS, VALIDATE

if TYPE_CHECKING:
    from ..core.family import Family

CONFIG_FILE = "summarybench.yaml"


def _check_model(flag: str, spec: str) -> None:
    from ..core.printable import shown_path

    if shown_path(spec).startswith("$'"):
        # A byte that is not UTF-8 (a lone surrogate) or a control character: no
        # provider names a model so, and pydantic's traceback was what printed it.
        raise pytest.UsageError(
            f"{flag} {shown_path(spec)}: a model name holds no control characters and "
            "no bytes that are not UTF-8")
    provider, sep, name = spec.partition("/")
    if not sep or not name or provider not in PROVIDERS:
        raise pytest.UsageError(
            f"{flag} {spec!r}: expected PROVIDER/MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (e.g. openai/gpt-4o, builtin/docstring)")


def session_families(config: pytest.Config) -> tuple[Family, ...]:
    """The session's evaluator families: the built-in ones, then those the plugins and
    ``conftest.py`` files declare (``pytest_summarybench_families``)."""
    from ..evaluators.registry import BUILTIN_FAMILIES

    declared = [f for found in config.hook.pytest_summarybench_families(config=config)
                for f in found or ()]
    try:
        return check_families([*BUILTIN_FAMILIES, *declared])
    except FamilyError as exc:
        raise pytest.UsageError(f"pytest_summarybench_families: {exc}") from None


def chosen_families(flag: str, text: str, families: Sequence[Family], *,
                    allow_all: bool = True) -> list[str]:
    """The families an option names (``--sb-eval``, ``--sb-only``), or a usage error
    naming the option, the value and the session's families."""
    names = [f.name for f in families]
    try:
        return parse_families(text, names, allow_all=allow_all)
    except ValueError:
        also = " or 'all'" if allow_all else ""
        raise pytest.UsageError(
            f"{flag} {text!r}: expected a comma-separated list of {', '.join(names)}{also} "
            "(the evaluator families of this session: the built-in ones and those a "
            "plugin declares)") from None


def select_only(config: pytest.Config, families: Sequence[Family]) -> None:
    """``--sb-only``: select the items of the families it names, as ``-m "a or b"`` does
    (``summarybench evaluate --only`` passes it): the configured run, partially."""
    text = config.getoption("sb_only", None)
    if text is None:
        return
    expression = " or ".join(chosen_families("--sb-only", text, families, allow_all=False))
    current = getattr(config.option, "markexpr", "")
    # An xdist worker gets the controller's options, this expression included.
    if current and current != expression:
        raise pytest.UsageError(f"--sb-only {text!r} and -m {current!r} both select items: "
                                "give one of them")
    config.option.markexpr = expression


def marker_line(name: str) -> str:
    """The ``markers`` ini line registering a family's marker (or the ladder's)."""
    if name == VALIDATE:
        return f"{VALIDATE}: summarybench validity ladder items"
    return f"{name}: summarybench {name} evaluator items"


def validate_options(config: pytest.Config, families: Sequence[Family]) -> None:
    """Reject malformed option and ini values before anything runs."""
    for flag, dest in (("--sb-model", "sb_model"), ("--sb-judge", "sb_judge")):
        for spec in config.getoption(dest) or []:
            _check_model(flag, spec)
    for spec in config.getini("summarybench_models"):
        _check_model("ini summarybench_models", spec)
    if validating(config) and not_validating(config):
        raise pytest.UsageError("--sb-validate and --sb-no-validate were both given: pass "
                                "--sb-validate to add the validity ladder, --sb-no-validate "
                                "to leave it out")
    if config.getoption("sb_eval") is not None:
        chosen_families("--sb-eval", config.getoption("sb_eval"), families)
    for key in ("summarybench_sample_size", "summarybench_seed"):
        value = config.getini(key)
        if value:
            try:
                number = int(value)
            except ValueError:
                raise pytest.UsageError(
                    f"ini {key} = {value!r}: expected an integer") from None
            if key == "summarybench_sample_size" and number <= 0:
                raise pytest.UsageError(f"ini {key} = {value!r}: expected a positive integer")
    path = config_path(config)
    if path is not None and not os.path.lexists(path):
        raise pytest.UsageError(f"--sb-config {shown_path(path)}: no such file")


def config_path(config: pytest.Config) -> Path | None:
    """The summarybench.yaml in use: --sb-config, the ini key, or one in the rootdir."""
    given = config.getoption("sb_config") or config.getini("summarybench_config")
    if given:
        p = Path(given)
        return p if p.is_absolute() else Path(config.invocation_params.dir) / p
    default = config.rootpath / CONFIG_FILE
    # Anything there (a FIFO, a folder too) is the configuration: reading it says what
    # is wrong with it, where a FIFO used to be taken for none and the default run began.
    return default if os.path.lexists(default) else None


def engaged(config: pytest.Config) -> bool:
    """Whether the user asked for summarybench explicitly (an option or a config file)."""
    opts = ("sb_config", "sb_codebase", "sb_model", "sb_judge", "sb_eval", "sb_only",
            "sb_sample_size", "sb_sampling", "sb_seed", "sb_output", "sb_store", "sb_parallel",
            "sb_max_cost")
    return (any(config.getoption(o) is not None for o in opts)
            or bool(config.getoption("sb_dry_run")) or bool(config.getoption("sb_generate_only"))
            or validating(config)
            or config_path(config) is not None)


def validating(config: pytest.Config) -> bool:
    """Whether ``--sb-validate`` asked for the instrument-validity ladder; the session adds
    its models to the settings (``validity.wiring.with_ladder``) on top of the overrides
    below, so the ladder joins whichever models the YAML file or ``--sb-model`` chose."""
    return bool(config.getoption("sb_validate", False))


def not_validating(config: pytest.Config) -> bool:
    """Whether ``--sb-no-validate`` left out the ladder a run would get by default."""
    return bool(config.getoption("sb_no_validate", False))


def overrides(config: pytest.Config, families: Sequence[Family]) -> dict[str, Any]:
    """Dotted settings keys -> values from ini keys, then command-line options (which win)."""
    out: dict[str, Any] = {}
    here = Path(config.invocation_params.dir)

    def absolute(text: str, base: Path) -> str:
        p = Path(text)
        return str(p if p.is_absolute() else base / p)

    ini_base = config.inipath.parent if config.inipath else config.rootpath
    if config.getini("summarybench_codebase"):
        out["codebase.root"] = absolute(config.getini("summarybench_codebase"), ini_base)
    if config.getini("summarybench_output"):
        out["output.directory"] = absolute(config.getini("summarybench_output"), ini_base)
    if config.getini("summarybench_models"):
        out["models.test"] = [_model_entry(s) for s in config.getini("summarybench_models")]
    if config.getini("summarybench_sample_size"):
        out["evaluation.sampleSize"] = int(config.getini("summarybench_sample_size"))
    if config.getini("summarybench_seed"):
        out["evaluation.seed"] = int(config.getini("summarybench_seed"))

    opt = config.getoption
    if opt("sb_codebase"):
        out["codebase.root"] = absolute(opt("sb_codebase"), here)
    if opt("sb_output"):
        out["output.directory"] = absolute(opt("sb_output"), here)
    if opt("sb_store"):
        out["output.store"] = absolute(opt("sb_store"), here)
    if opt("sb_model"):
        out["models.test"] = [_model_entry(s) for s in opt("sb_model")]
    if opt("sb_judge"):
        out["models.judge"] = [_model_entry(s) for s in opt("sb_judge")]
    if opt("sb_eval") is not None:
        chosen = chosen_families("--sb-eval", opt("sb_eval"), families)
        for family in families:
            out[f"evaluation.{family.name}.enabled"] = family.name in chosen
    if opt("sb_sample_size") is not None:
        out["evaluation.sampleSize"] = opt("sb_sample_size")
    if opt("sb_sampling") is not None:
        out["evaluation.sampling"] = opt("sb_sampling")
    if opt("sb_seed") is not None:
        out["evaluation.seed"] = opt("sb_seed")
    if opt("sb_parallel") is not None:
        out["evaluation.parallel"] = opt("sb_parallel")
    if opt("sb_max_cost") is not None:
        out["evaluation.maxCostUsd"] = opt("sb_max_cost")
    return out


def _model_entry(spec: str) -> dict[str, str]:
    provider, _, name = spec.partition("/")
    return {"provider": provider, "model": name}
