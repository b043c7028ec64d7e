"""Article 9, risk management: foreseeable risks of the agent are bounded in code.

Each check reads behaviour from the syntax tree (see the ``art09_*`` helper modules):

* autonomy (``art09_autonomy``): iteration/turn/round/recursion limits whose configured
  value, followed through config dicts, dataclass defaults, environment defaults and
  JSON/YAML text, is None or >= ``UNBOUNDED_AT``; ``is_termination_msg`` that is always
  False; AutoGen AgentChat teams with neither ``termination_condition`` nor
  ``max_turns``; ``while`` loops that call a model with no counter, deadline or size
  comparison in their test or body;
* magnitude (``art09_magnitude``): money-moving tools whose amount is never compared with
  an upper bound on the tool's path (directly, through a derived local, or in a helper
  it is handed to);
* advice (``art09_advice``): a model told to advise on health, money or legal matters
  with no moderation call, registered guardrail or refusal branch next to the model call.
"""

from __future__ import annotations

from ..base import ArticleResult
from ..facts import CodeFacts
from ..impact import side_effects
from ..vocabulary import UNBOUNDED_AT
from .art09_advice import unguarded_advice
from .art09_autonomy import unbounded_limits, unbounded_loops, unstoppable_teams
from .art09_magnitude import uncapped_money_tools
from .art09_values import module_values


class RiskManagementRule:
    """Agent autonomy and impact must be bounded by explicit limits and guardrails."""

    article = 9
    title = "Risk management"
    checks = (
        "limits: an iteration/turn/round/recursion limit configured as None or >= "
        f"{UNBOUNDED_AT}, in a call keyword, a config dict, a config class default or "
        "JSON/YAML text (values followed through names, dict keys, .get and env defaults)",
        "termination: is_termination_msg that always returns False; a RoundRobinGroupChat/"
        "SelectorGroupChat/Swarm with no termination_condition and no max_turns",
        "loops: a while loop (or a for over itertools.count) that calls a model or agent "
        "and has no ordering comparison (counter, deadline, size) in its test or body; a "
        "bound compared with a limit configured as None does not count",
        "magnitude: a tool that moves money whose amount parameter (or a local derived "
        "from it) is never compared with an upper bound or clamped, in the tool or in a "
        "module helper it is passed to; 'amount <= 0' is not a cap",
        "advice: system prompts, instructions, goals or task descriptions that advise on "
        "health, money or legal matters, with no moderation call, registered guardrail "
        "(guardrail=, input/output_guardrails=) or refusal branch beside the model call",
        "severity: CRITICAL for unguarded advice and uncapped money movement; MEDIUM for "
        "unbounded autonomy, HIGH when the agent can also move money or destroy data",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        values = module_values(facts)
        advice = unguarded_advice(facts, values)
        money = uncapped_money_tools(facts, values)
        loops = [*unbounded_limits(facts, values), *unstoppable_teams(facts, values),
                 *unbounded_loops(facts, values)]
        if advice or money:
            return ArticleResult.violation(self.article, "CRITICAL", *advice, *money, *loops)
        if loops:
            grave = any(effect.grave for effect in side_effects(facts))
            return ArticleResult.violation(self.article, "HIGH" if grave else "MEDIUM",
                                           *loops)
        return ArticleResult.ok(self.article, "no unbounded autonomy, uncapped money "
                                              "movement or unguarded advice found")
