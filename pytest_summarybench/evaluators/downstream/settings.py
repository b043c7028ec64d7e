"""The downstream family's section of summarybench.yaml, ``evaluation.downstream``: which
tasks, the task model, where tasks come from, and the sandbox's limits
(docs/configuration.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass

from ...sandbox.limits import ConfiguredLimits
from ...schemas._base import SBModel
from ...schemas.config import check_endpoint
from ...settings import FamilySection

if TYPE_CHECKING:
    from ...settings import Settings

#: ``evaluation.downstream.sandbox``: the sandbox's own ``ConfiguredLimits`` (fields,
#: defaults and bounds declared there once), read with the settings' rules (camelCase keys,
#: unknown keys refused). A pydantic dataclass subclass of it, so it is one; type checkers
#: see the class it is made from.
if TYPE_CHECKING:
    SandboxSection = ConfiguredLimits
else:
    SandboxSection = pydantic_dataclass(ConfiguredLimits, config=SBModel.model_config,
                                        frozen=True)


class DownstreamSettings(FamilySection):
    """Downstream tasks (docs/methods.md#downstream-family); see
    ``pytest_summarybench/evaluators/downstream``."""

    tasks: list[Literal["completion", "bug_localisation", "function_selection"]] = [
        "completion", "bug_localisation", "function_selection"]
    completion_model: str | None = None
    """The task model of all three tasks: ``PROVIDER/MODEL``, the id or model name of a
    model in ``models.judge`` or ``models.test`` (its endpoint, limits and prices apply), or
    a bare model name of a known family (``claude-3-5-sonnet-20241022``)."""
    api_endpoint: str | None = None
    """Base URL for a ``PROVIDER/MODEL`` task model (e.g. provider ``local``)."""
    family: str | None = None
    """The task model's family for the family rule (no task about a summary by a model of
    its own family), when the one read from its name or provider is wrong; it overrides the
    ``family:`` of a configured model named as the task model."""
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

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, v: str | None) -> str | None:
        return check_endpoint(v)

    def configuration(self, settings: Settings) -> dict[str, Any]:
        # The family only when set, so that configurations without it keep their id.
        return {"enabled": self.enabled, "tasks": list(self.tasks),
                "completionModel": self.completion_model,
                **({"family": self.family} if self.family else {})}
