"""The rule scanner: each article's rule set on small snippets (firing and not firing),
the primary-finding choice, and its figures on both datasets as a regression guard."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from summarybench_compliance.dataset import DATA_DIR, load_examples
from summarybench_compliance.scanner import (
    TIE_BREAK,
    ArticleResult,
    ScanError,
    Scanner,
    ScanResult,
    scan_code,
)

README = Path(__file__).resolve().parents[1] / "README.md"

DOC = '"""Order assistant for the support team: answers order questions."""\n'
LOG = "import logging\nlogger = logging.getLogger('x')\n"


def _scan(body: str) -> ScanResult:
    return scan_code(DOC + LOG + textwrap.dedent(body))


def _verdict(body: str, article: int) -> ArticleResult:
    return _scan(body).result(article)


APPROVAL_FREE_REFUND = """
    from langchain_core.tools import tool

    @tool
    def issue_refund(order_id: str, amount: float) -> str:
        '''Refund an order.'''
        if amount > 100:
            return "too much"
        logger.info("refund %s", order_id)
        return billing.refund(order_id, amount)
"""


def test_art14_fires_on_unapproved_money_movement() -> None:
    verdict = _verdict(APPROVAL_FREE_REFUND, 14)
    assert not verdict.passed and verdict.severity == "CRITICAL"
    assert any("issue_refund" in e and "line" in e for e in verdict.evidence)


@pytest.mark.parametrize("approval", ids=["callback", "always", "interrupt", "input"],
                         argvalues=[
    "from langchain_community.callbacks import HumanApprovalCallbackHandler\n"
    "t = StructuredTool.from_function(issue_refund, callbacks=[HumanApprovalCallbackHandler()])",
    "proxy = UserProxyAgent('p', human_input_mode='ALWAYS')",
    "graph = builder.compile(interrupt_before=['tools'])",
    # An approval helper that nothing calls is not oversight (the old word list accepted
    # `def ok(): return input('go?') == 'y'`); the wrapper must gate the tool call.
    "def gated(fn):\n"
    "    def run(*args):\n"
    "        if input('go?') != 'y':\n"
    "            return 'declined'\n"
    "        return fn(*args)\n"
    "    return run\n"
    "tools = [gated(issue_refund)]",
])
def test_art14_accepts_approval_steps(approval: str) -> None:
    code = DOC + LOG + textwrap.dedent(APPROVAL_FREE_REFUND) + approval + "\n"
    assert scan_code(code).result(14).passed


def test_art14_review_task_must_precede_the_acting_agent() -> None:
    crew = """
        from crewai import Agent, Task
        from crewai.tools import tool

        @tool("Send")
        def send_offer(customer_ref: str) -> str:
            '''Send an offer email.'''
            return esp.send_offer(customer_ref)

        writer = Agent(role="w", goal="g", backstory="b", tools=[send_offer])
        {tasks}
    """
    same_agent = "t = Task(description='d', expected_output='o', agent=writer, human_input=True)"
    reviewed = ("drafter = Agent(role='d', goal='g', backstory='b')\n"
                "        t = Task(description='d', expected_output='o', agent=drafter, "
                "human_input=True)")
    own = _verdict(crew.format(tasks=same_agent), 14)
    assert not own.passed and own.severity == "HIGH"
    assert _verdict(crew.format(tasks=reviewed), 14).passed


def test_art14_read_only_tools_need_no_approval() -> None:
    body = """
        @tool
        def order_status(order_id: str) -> str:
            '''Status of an order.'''
            return db.execute("SELECT status FROM orders WHERE id = ?", (order_id,))
    """
    assert _verdict(body, 14).passed


@pytest.mark.parametrize(("snippet", "severity"), [
    ("AgentExecutor(agent=a, tools=t, max_iterations=None)", "MEDIUM"),
    ("GroupChat(agents=a, messages=[], max_round=500)", "MEDIUM"),
    ("UserProxyAgent('u', is_termination_msg=lambda m: False)", "MEDIUM"),
    ("while True:\n    crew.kickoff(inputs={})", "MEDIUM"),
    ("prompt = 'Tell the patient which medication and dose to take.'", "CRITICAL"),
])
def test_art9_fires(snippet: str, severity: str) -> None:
    verdict = _verdict(snippet + "\n", 9)
    assert not verdict.passed and verdict.severity == severity


@pytest.mark.parametrize("snippet", [
    "AgentExecutor(agent=a, tools=t, max_iterations=8, max_execution_time=120)",
    "rounds = 0\nwhile True:\n    rounds += 1\n"
    "    if crew.kickoff(inputs={}).raw == 'done' or rounds >= 5:\n        break",
    "prompt = 'Never diagnose or recommend medication.'\nflagged = moderation.create(x)",
    "prompt = 'List low stock items and the investigator on duty.'",
])
def test_art9_quiet(snippet: str) -> None:
    assert _verdict(snippet + "\n", 9).passed


def test_art9_unlimited_payment_amount() -> None:
    body = """
        def pay_invoice(invoice_id: str, amount: float) -> str:
            '''Pay an invoice.'''
            return sepa.transfer(invoice_id, amount)

        register_function(pay_invoice, caller=a, executor=b)
        proxy = UserProxyAgent('p', human_input_mode='ALWAYS')
    """
    verdict = _verdict(body, 9)
    # Money moves with no cap: CRITICAL under the rubric (irreversible harm to money).
    assert not verdict.passed and verdict.severity == "CRITICAL"
    assert _verdict(body, 14).passed


# The fields must reach a sink (a model call, a log): a field merely formatted into a
# local is no longer a finding (it was under the old presence-only word list).
@pytest.mark.parametrize(("snippet", "severity"), [
    ("text = f'{r.national_insurance_no} {r.diagnosis}'\nllm.invoke(text)", "CRITICAL"),
    ("msg = f'{c.email} {c.phone}'\nlog.info(msg)", "HIGH"),
    ("msg = f'{a[\"full_name\"]} {b.name}'\nlog.info(msg)", "MEDIUM"),
])
def test_art10_fires_on_unminimised_personal_data(snippet: str, severity: str) -> None:
    verdict = _verdict(snippet + "\n", 10)
    assert not verdict.passed and verdict.severity == severity


# Minimisation must be applied to the value on its way to the sink; an import of
# hashlib or presidio alone no longer counts (it was accepted by the old word list).
@pytest.mark.parametrize("guard", [
    "hashlib.sha256(c.email.encode()).hexdigest()", "redact_pii(c.email)",
    "anonymizer.anonymize(text=c.email, analyzer_results=found).text"])
def test_art10_accepts_minimisation(guard: str) -> None:
    assert not _verdict("log.info(c.email)\n", 10).passed
    assert _verdict(f"log.info({guard})\n", 10).passed


def test_art10_ignores_builtins_and_tool_names() -> None:
    assert _verdict("pairs = zip(a, b)\nTool(name='lookup', func=f, description='Look.')\n",
                    10).passed


def test_art11_needs_a_module_docstring() -> None:
    bare = scan_code(LOG + "def go(x):\n    logger.info(x)\n").result(11)
    assert not bare.passed and bare.severity == "LOW"
    assert "no docstring" in bare.evidence[0]
    assert _verdict("def go(x):\n    '''Go.'''\n", 11).passed


def test_art11_placeholders_with_a_short_docstring_fail() -> None:
    code = ('"""Claims bot for customers of the insurer."""\n' + LOG +
            "a = Agent(role='S', goal='Sell', backstory='-')\n"
            "b = Agent(role='T', goal='Route', backstory='')\n"
            "def run(x):\n    return x\n")
    verdict = scan_code(code).result(11)
    assert not verdict.passed and verdict.severity == "MEDIUM"


def test_art12_needs_a_persistent_record() -> None:
    code = DOC + "from crewai import Crew\ncrew = Crew(agents=[], tasks=[], verbose=True)\n" \
        "print('started')\n"
    verdict = scan_code(code).result(12)
    assert not verdict.passed and verdict.severity == "LOW"
    assert any("print()" in e for e in verdict.evidence)
    # A log line written once before the crew starts is not a record of what it did
    # (the independent set's hard negatives); one written after the run is.
    started_only = DOC + LOG + "from crewai import Crew\nlogger.info('started')\n" \
        "crew = Crew(agents=[], tasks=[])\ncrew.kickoff()\n"
    assert not scan_code(started_only).result(12).passed
    logged = DOC + LOG + "from crewai import Crew\ncrew = Crew(agents=[], tasks=[])\n" \
        "out = crew.kickoff()\nlogger.info('finished %s', out.raw)\n"
    assert scan_code(logged).result(12).passed
    callbacks = DOC + "from crewai import Crew\nCrew(agents=[], tasks=[], " \
        "step_callback=record)\n"
    assert scan_code(callbacks).result(12).passed
    assert scan_code(DOC + "x = 1\n").result(12).passed


@pytest.mark.parametrize(("snippet", "severity"), [
    ("answer = eval(reply.content)", "CRITICAL"),
    ("UserProxyAgent('u', code_execution_config={'work_dir': 'w', 'use_docker': False})",
     "CRITICAL"),
    ("Agent(role='r', allow_code_execution=True, code_execution_mode='unsafe')", "CRITICAL"),
    # A built command run by a shell executes on the host: CRITICAL by the rubric (it
    # was HIGH under the old rules).
    ("subprocess.run(f'git {cmd}', shell=True)", "CRITICAL"),
    ("db.execute(f\"SELECT * FROM t WHERE id = '{x}'\")", "HIGH"),
    ("try:\n    r = requests.get(url)\nexcept Exception:\n    r = None", "MEDIUM"),
])
def test_art15_fires(snippet: str, severity: str) -> None:
    verdict = _verdict("import subprocess\nimport requests\n" + snippet + "\n", 15)
    assert not verdict.passed and verdict.severity == severity


@pytest.mark.parametrize("snippet", [
    "value = ast.literal_eval(text)",
    "db.execute('SELECT * FROM t WHERE id = %s', (x,))",
    "subprocess.run(['git', 'gc'], check=True)",
    "r = requests.get(url, timeout=5)",
])
def test_art15_quiet(snippet: str) -> None:
    assert _verdict(snippet + "\n", 15).passed


def test_primary_is_most_severe_then_tie_break() -> None:
    assert scan_code(DOC + LOG + "x = 1\n").primary is None
    both = ScanResult((ArticleResult.violation(12, "HIGH", "a"),
                       ArticleResult.violation(15, "HIGH", "b"),
                       ArticleResult.violation(11, "LOW", "c")))
    assert both.primary is not None and both.primary.article == 15
    assert TIE_BREAK.index(15) < TIE_BREAK.index(12)
    worse = ScanResult((ArticleResult.violation(11, "CRITICAL", "a"),
                        ArticleResult.violation(15, "HIGH", "b")))
    assert worse.primary is not None and worse.primary.article == 11


def test_invalid_python_and_bad_severity_are_errors() -> None:
    with pytest.raises(ScanError, match="cannot parse the code"):
        scan_code("def broken(:\n")
    with pytest.raises(ValueError, match="severity 'SEVERE'"):
        ArticleResult.violation(9, "SEVERE")


def test_every_rule_documents_its_checks() -> None:
    rules = Scanner().rules
    assert [r.article for r in rules] == [9, 10, 11, 12, 14, 15]
    assert all(r.title and r.checks for r in rules)
    readme = README.read_text(encoding="utf-8")
    for rule in rules:
        module = type(rule).__module__.rsplit(".", 1)[-1]
        assert f"**Art. {rule.article} (`{module}.py`)**" in readme


def _accuracy(name: str) -> float:
    examples = load_examples(DATA_DIR / name)
    scanner = Scanner()
    right = 0
    for example in examples:
        primary = scanner.scan(example.code).primary
        right += (primary.article if primary else None) == (
            None if example.compliant else example.article)
    return right / len(examples)


def test_reported_figures_do_not_regress() -> None:
    # The figures the README reports: 54/54 on our own (frozen) examples, 11/20 on the
    # held-out set written after the rules. A change that lowers either must say so.
    assert _accuracy("eval_data.jsonl") == 1.0
    assert _accuracy("heldout_data.jsonl") >= 0.55
