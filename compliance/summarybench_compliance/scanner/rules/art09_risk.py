"""Article 9, risk management: foreseeable risks of the agent are bounded in code.

Each check reads behaviour from the syntax tree (see the ``art09_*`` helper modules):

* autonomy (``art09_autonomy``): iteration/turn/round/recursion limits whose configured
  value, followed through config dicts, dataclass defaults, environment defaults and
  JSON/YAML text, is None, endless or >= ``UNBOUNDED_AT``; ``is_termination_msg`` that
  is always False; AutoGen AgentChat teams with neither ``termination_condition`` nor
  ``max_turns``, or whose only termination is a phrase a message may never say;
  Semantic Kernel group chats whose manager has no ``max_rounds`` and no
  ``should_terminate`` that counts rounds or time;
  workflows with ``timeout=None``; loops that call a model with no counter, deadline or
  size comparison (a comparison of the model's own answer with a setting is none; a
  person typing each turn, a loop draining a finite supply or sleeping between polls, and
  a wall-clock deadline around the run are bounds); a handler that raises at a counter or
  clock bound stops a run whose limit is None;
* magnitude (``art09_magnitude``): money-moving tools whose amount is not compared with
  an upper bound before the first call that can move the money (directly, through a
  derived local, in a helper it is handed to, in the wrapper of a module decorator
  around the tool, or by a validated ``Field(le=...)``);
* advice (``art09_advice``): a model told to advise on health, money or legal matters
  with no guardrail that runs: a moderation call in live code, a non-empty registered
  guardrail (a guardrail-decorated function no agent is given is none), or a refusal
  branch (a fixed answer, directly or through a referral helper; also a check that lets
  safe answers through early and replaces the rest) beside the model call, in a
  registered hook or in a check the model's answer is handed to.
"""

from __future__ import annotations

from ..base import ArticleResult
from ..facts import CodeFacts
from ..impact import side_effects
from ..values import module_values
from ..vocabulary import UNBOUNDED_AT
from .art09_advice import unguarded_advice
from .art09_autonomy import (
    run_stoppers,
    unbounded_limits,
    unbounded_loops,
    unstoppable_orchestrations,
    unstoppable_teams,
)
from .art09_magnitude import uncapped_money_tools


class RiskManagementRule:
    """Agent autonomy and impact must be bounded by explicit limits and guardrails."""

    article = 9
    title = "Risk management"
    checks = (
        "limits: an iteration/turn/round/recursion limit configured as None, endless "
        f"(inf, sys.maxsize) or >= {UNBOUNDED_AT}, in a call keyword, a config dict, a "
        "config class default or JSON/YAML text (values followed through names, dict "
        "keys, .get, os.getenv/environ defaults and int()/float()); a Workflow with "
        "timeout=None",
        "termination: is_termination_msg that always returns False; a RoundRobinGroupChat/"
        "SelectorGroupChat/Swarm with no termination_condition and no max_turns, or whose "
        "termination is only phrase conditions (TextMentionTermination and the like, "
        "followed through locals and | / &) with no max_turns and no wall-clock deadline "
        "(wait_for/asyncio.timeout/fail_after with a limit) around the run; a "
        "GroupChatOrchestration whose manager has no max_rounds (call, class default or "
        "later assignment) and whose should_terminate override has no ordering comparison "
        "(a framework *GroupChatManager without max_rounds never ends on its own)",
        "loops: a while loop (or a for over itertools.count or range(N >= "
        f"{UNBOUNDED_AT})) that calls a model or agent and has no ordering comparison "
        "(counter, deadline, size) in its test or body; a bound compared with a limit "
        "configured as None (also through 'x or None') does not count, nor one comparing "
        "only values read from the model's answers with fixed settings (score >= TARGET); "
        "loops where a person types each turn (input()), that drain a finite supply (pop "
        "without append, count down), sleep between polls (not only in an except handler) "
        "or run under a wall-clock deadline are bounded",
        "stoppers: a handler class the module instantiates, or a function it hands over, "
        "that raises when a counter or clock passes its bound stops the run, so a limit "
        "configured as None or a phrase-only team is then bounded",
        "magnitude: a tool that moves money (named for it, a callee with a money verb, "
        "or a BaseTool class named for it) whose amount (parameter, derived local, or "
        "args.amount field) is not compared with an upper bound before the first call "
        "that can move the money, in the tool, a module helper it is passed to or the "
        "wrapper of a module decorator around the tool, and not "
        "declared with Field(le=...); 'amount <= 0' and a branch that only logs are not caps",
        "advice: system prompts, instructions, goals, backstories, task descriptions or "
        "system messages that advise on health, money or legal matters (not in a sentence "
        "that forbids it), with no moderation call in code that runs, no non-empty "
        "guardrail=/input_guardrails=/output_guardrails=, and no refusal branch (a check "
        "that returns, sets or raises a fixed answer, directly or through a referral helper "
        "whose every return is one, or a message dict whose text is one; or a check that "
        "returns early and a fixed answer after it) beside the model call, in a hook "
        "handed to the framework or in a module function the model's answer is passed to; "
        "a function decorated as a guardrail that nothing attaches does not run",
        "severity: CRITICAL for unguarded advice and uncapped money movement; MEDIUM for "
        "unbounded autonomy, HIGH when the agent can also move money or destroy data",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        values = module_values(facts)
        advice = unguarded_advice(facts, values)
        money = uncapped_money_tools(facts, values)
        # A callback that stops the run at a counter or clock bounds what a limit
        # configured as None or a phrase-only team leaves open.
        stopped = bool(run_stoppers(facts, values))
        loops = [*([] if stopped else [*unbounded_limits(facts, values),
                                       *unstoppable_teams(facts, values),
                                       *unstoppable_orchestrations(facts, values)]),
                 *unbounded_loops(facts, values)]
        if advice or money:
            return ArticleResult.violation(self.article, "CRITICAL", *advice, *money, *loops)
        if loops:
            grave = any(effect.grave for effect in side_effects(facts))
            return ArticleResult.violation(self.article, "HIGH" if grave else "MEDIUM",
                                           *loops)
        return ArticleResult.ok(self.article, "no unbounded autonomy, uncapped money "
                                              "movement or unguarded advice found")
