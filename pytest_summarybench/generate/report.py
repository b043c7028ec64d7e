"""What a generation phase did, per model: the counts the plugin prints and tests check."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModelStats:
    """One model's share of a generation phase."""

    model_id: str
    generated: int = 0
    """Summaries produced and linked to the run in this phase (cached or called)."""
    reused: int = 0
    """Units already linked to a summary for this run before the phase started."""
    cached: int = 0
    """Of ``generated``, how many came from the response cache without a call."""
    calls: int = 0
    """Successful provider calls made (and paid for) in this phase."""
    errors: int = 0
    """Units whose generation failed; linked with the error and retried on the next run."""
    skipped: int = 0
    """Units not started because the cost cap was reached."""
    fallbacks: int = 0
    """``builtin/docstring`` units without a docstring, summarized by the signature
    template instead."""
    cost: float | None = 0.0
    """USD spent on this phase's calls; None when a call's price is unknown."""
    unknown_cost_calls: int = 0
    """Calls whose price is unknown (unmapped model, or priced 0.0 by the table)."""
    error_samples: list[str] = field(default_factory=list)
    """Up to three distinct error messages, for the terminal summary."""

    def add_cost(self, cost: float | None) -> None:
        if cost is None:
            self.unknown_cost_calls += 1
            self.cost = None
        elif self.cost is not None:
            self.cost += cost

    def add_error(self, message: str) -> None:
        self.errors += 1
        if message not in self.error_samples and len(self.error_samples) < 3:
            self.error_samples.append(message)


@dataclass
class GenerationReport:
    """The outcome of ``run_generation``."""

    models: dict[str, ModelStats]
    """Per model id, sorted like ``RunContext.models``."""
    max_cost_usd: float | None = None
    """The cost cap in force, if any."""
    cap_reached: bool = False
    """True when the cap stopped new calls; the skipped units are left for a later run."""
    spent_usd: float = 0.0
    """Known cost of the calls made in this phase, all models."""
    elapsed_s: float = 0.0

    @property
    def generated(self) -> int:
        return sum(s.generated for s in self.models.values())

    @property
    def reused(self) -> int:
        return sum(s.reused for s in self.models.values())

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.models.values())

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.models.values())

    @property
    def skipped(self) -> int:
        return sum(s.skipped for s in self.models.values())

    def lines(self) -> list[str]:
        """A short human summary for the terminal, one line per model plus notes."""
        out = [f"summarybench generation: {self.generated} generated, {self.reused} reused, "
               f"{self.calls} calls, {self.errors} errors in {self.elapsed_s:.1f}s"]
        for s in self.models.values():
            cost = "unknown" if s.cost is None else f"${s.cost:.4f}"
            line = (f"  {s.model_id}: {s.generated} generated ({s.cached} from cache), "
                    f"{s.reused} reused, {s.calls} calls, {s.errors} errors, cost {cost}")
            if s.fallbacks:
                line += f", {s.fallbacks} without docstring (signature fallback)"
            if s.skipped:
                line += f", {s.skipped} skipped by the cost cap"
            out.append(line)
            out.extend(f"    error: {e}" for e in s.error_samples)
        if self.cap_reached:
            out.append(f"  cost cap ${self.max_cost_usd:.2f} reached after ${self.spent_usd:.4f}: "
                       f"{self.skipped} summaries not started; raise evaluation.maxCostUsd "
                       "and run again to complete them (completed calls are not repeated)")
        return out
