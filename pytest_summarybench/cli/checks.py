"""Warnings the editing commands (``add-model``, ``add-judge``, ``config``) print about
the configuration they leave behind, at once rather than mid-run: judges that share a
family with models under test, and hosted model names litellm does not list. Warnings,
not errors: the file is valid, and both can be right (a new model, a deliberate judge).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..schemas import ModelConfig
    from ..settings import Settings


def say(text: str, *, error: bool = False) -> None:
    """One line of a command's echo (``added openai/gpt-4o ...``): it quotes names given
    on the command line or read from the configuration, so its control characters and
    line breaks are written as escapes, as every other command prints names."""
    from ..core.printable import shown_name

    print(shown_name(text), file=sys.stderr if error else sys.stdout)


def warn(command: str, text: str) -> None:
    say(f"summarybench {command}: warning: {text}", error=True)


def family_warnings(settings: Settings, only: ModelConfig | None = None) -> list[str]:
    """One warning per judge that shares a family with a model under test; with ``only``,
    those that concern that model (as the judge, or as a model it will not judge)."""
    from ..roles.advice import conflict_warning, family_conflicts

    models = settings.test_models()
    extra = settings.evaluation.judge.family_patterns
    judges = settings.judge_models()
    found = family_conflicts(models, judges, extra)
    if only is not None:
        found = [c for c in found if only.id in (c.judge.id, *c.models)]
    return [conflict_warning(c, models, extra, judges) for c in found]


def name_warnings(models: Iterable[ModelConfig]) -> list[str]:
    """A warning per hosted model whose name litellm does not list ("did you mean")."""
    from ..llm.catalogue import unlisted_warning

    found = (unlisted_warning(m) for m in models)
    return [text for text in found if text]


def config_warnings(settings: Settings) -> list[str]:
    """Every warning about a whole configuration file: hosted names litellm does not list,
    judges of a tested model's family, and a task model that would skip some or all of the
    downstream items (``roles.task.task_warnings``)."""
    from ..roles.task import task_warnings

    listed = [*settings.models.test, *settings.models.judge]
    return [*name_warnings(m.to_model_config() for m in listed), *family_warnings(settings),
            *task_warnings(settings)]
