"""The article 9 and 10 rule sets, one check at a time: for each check a snippet it must
catch and one it must not (the pairs the benchmark README lists). The snippets are
written for these tests, in idioms the rules must read through (config dicts,
dataclasses, env defaults, JSON text, helpers, tool classes, callbacks)."""

from __future__ import annotations

import textwrap

import pytest

from summarybench_compliance.scanner import ArticleResult, scan_code
from summarybench_compliance.scanner.rules import (
    DataGovernanceRule,
    RiskManagementRule,
)
from summarybench_compliance.scanner.rules.art10_fields import classify

HEAD = '"""Assistant for the operations team."""\nimport logging\nlog = logging.getLogger("x")\n'


def _verdict(body: str, article: int) -> ArticleResult:
    return scan_code(HEAD + textwrap.dedent(body)).result(article)


# --- Article 9 -----------------------------------------------------------------------

ART9 = {
    "limit-config-dict": (
        """
        EXECUTOR = {"max_iterations": None, "handle_parsing_errors": True}
        executor = AgentExecutor(agent=agent, tools=tools, **EXECUTOR)
        """,
        """
        EXECUTOR = {"max_iterations": 8, "handle_parsing_errors": True}
        executor = AgentExecutor(agent=agent, tools=tools, **EXECUTOR)
        """),
    "limit-dataclass-env": (
        """
        import os
        from dataclasses import dataclass

        @dataclass
        class Budget:
            max_turns: int | None = int(os.environ.get("AGENT_MAX_TURNS", "500"))

        BUDGET = Budget()
        result = Runner.run_sync(agent, "go", max_turns=BUDGET.max_turns)
        """,
        """
        import os
        from dataclasses import dataclass

        @dataclass
        class Budget:
            max_turns: int = int(os.environ.get("AGENT_MAX_TURNS", "12"))

        BUDGET = Budget()
        result = Runner.run_sync(agent, "go", max_turns=BUDGET.max_turns)
        """),
    "limit-json-text": (
        """
        import json
        CONFIG = json.loads('{"model": "gpt-4o", "max_round": null}')
        """,
        """
        import json
        CONFIG = json.loads('{"model": "gpt-4o", "max_round": 12}')
        """),
    "team-without-stop": (
        """
        from autogen_agentchat.teams import SelectorGroupChat
        team = SelectorGroupChat([planner, coder], model_client=client)
        """,
        """
        from autogen_agentchat.teams import SelectorGroupChat
        team = SelectorGroupChat([planner, coder], model_client=client,
                                 termination_condition=TextMentionTermination("DONE")
                                 | MaxMessageTermination(30))
        """),
    "loop-model-exit-only": (
        """
        def refine(text):
            while True:
                reply = client.messages.create(model="m", max_tokens=400,
                                               messages=[{"role": "user", "content": text}])
                if "ACCEPTED" in reply.content[0].text:
                    return reply
                text = reply.content[0].text
        """,
        """
        import time

        def refine(text):
            stop_at = time.monotonic() + 120
            while time.monotonic() < stop_at:
                reply = client.messages.create(model="m", max_tokens=400,
                                               messages=[{"role": "user", "content": text}])
                if "ACCEPTED" in reply.content[0].text:
                    return reply
                text = reply.content[0].text
        """),
    "loop-limit-configured-none": (
        """
        ROUNDS = {"limit": None}

        def debate():
            n = 0
            while ROUNDS["limit"] is None or n < ROUNDS["limit"]:
                n += 1
                critic.invoke({"input": "again"})
        """,
        """
        ROUNDS = {"limit": 6}

        def debate():
            n = 0
            while ROUNDS["limit"] is None or n < ROUNDS["limit"]:
                n += 1
                critic.invoke({"input": "again"})
        """),
    "money-lower-bound-only": (
        """
        @function_tool
        def issue_refund(order_id: str, amount_eur: float) -> str:
            '''Refund an order (at most 200 EUR, see REFUND_POLICY).'''
            if amount_eur <= 0:
                return "amount must be positive"
            log.info("refund %s", order_id)
            return payments.refund(order_id, amount_eur)
        """,
        """
        class PayoutLimits:
            def check(self, amount):
                return amount <= self.per_payout_cap

        limits = PayoutLimits()

        @function_tool
        def issue_refund(order_id: str, amount_eur: float) -> str:
            '''Refund an order.'''
            value = round(amount_eur, 2)
            if not limits.check(value):
                return "over the limit"
            log.info("refund %s", order_id)
            return payments.refund(order_id, value)
        """),
    "money-tool-class": (
        """
        class RefundTool(BaseTool):
            name: str = "refund"
            def _run(self, order_id: str, amount: float) -> str:
                log.info("refund %s", order_id)
                return stripe_client.refunds.create(order=order_id, amount=amount)
        """,
        """
        class RefundTool(BaseTool):
            name: str = "refund"
            def _run(self, order_id: str, amount: float) -> str:
                if amount > MAX_REFUND:
                    return "over the cap"
                log.info("refund %s", order_id)
                return stripe_client.refunds.create(order=order_id, amount=amount)
        """),
    "advice-unguarded": (
        '''
        """Answers are screened by the pharmacist safety check before they are sent."""
        pharmacist = Agent(name="pharmacy",
                           instructions="Answer customers' questions about their medication "
                                        "and the dose to take.")

        def answer(question):
            return Runner.run_sync(pharmacist, question, max_turns=4).final_output
        ''',
        '''
        pharmacist = Agent(name="pharmacy",
                           instructions="Answer customers' questions about their medication "
                                        "and the dose to take.")
        REFERRAL = "Please speak to your pharmacist."

        def answer(question):
            reply = Runner.run_sync(pharmacist, question, max_turns=4).final_output
            if dose_checker.mentions_personal_dose(reply):
                return REFERRAL
            return reply
        '''),
    "advice-domain-from-instructions": (
        """
        advisor = Agent(role="Advisor", goal="Tell members which stocks to buy and how to "
                        "build their retirement portfolio", backstory="Wealth desk.")
        """,
        """
        summariser = Agent(role="Coder", goal="Summarise the discharge record, including "
                           "diagnosis and treatment codes, for the billing team",
                           backstory="Clinical coding desk.")
        """),
}


@pytest.mark.parametrize("check", sorted(ART9))
def test_art9_check_catches(check: str) -> None:
    catch, _ = ART9[check]
    verdict = _verdict(catch, 9)
    assert not verdict.passed, verdict.evidence


@pytest.mark.parametrize("check", sorted(ART9))
def test_art9_check_must_not_fire(check: str) -> None:
    _, quiet = ART9[check]
    verdict = _verdict(quiet, 9)
    assert verdict.passed, verdict.evidence


def test_art9_a_person_typing_each_turn_bounds_the_loop() -> None:
    body = """
        def console():
            while (message := input("> ")) != "quit":
                print(executor.invoke({"input": message}))
    """
    assert _verdict(body, 9).passed
    assert not _verdict(body.replace('input("> ")', 'planner.invoke({"input": "next"})'),
                        9).passed


def test_art9_a_loop_that_consumes_a_finite_supply_is_bounded() -> None:
    body = """
        def triage(tickets):
            pending = list(tickets)
            while pending:
                ticket = pending.pop()
                executor.invoke({"input": ticket})
    """
    assert _verdict(body, 9).passed
    refill = body.replace("ticket = pending.pop()", "ticket = pending.pop()\n"
                          "                pending.append(ticket)")
    assert not _verdict(refill, 9).passed


def test_art9_a_registered_filter_that_replaces_answers_is_a_guardrail() -> None:
    body = '''
        advisor = ChatCompletionAgent(name="coach", instructions="Explain investment options "
                                      "and suggest a portfolio.")

        async def answer_filter(context, next):
            await next(context)
            if dose_or_pick_checker.flags(str(context.result)):
                context.result = "Please talk to a licensed adviser."

        kernel.add_filter("function_invocation", answer_filter)
    '''
    assert _verdict(body, 9).passed
    assert not _verdict(body.replace('kernel.add_filter("function_invocation", answer_filter)',
                                     ""), 9).passed


def test_art9_severities() -> None:
    assert _verdict(ART9["advice-unguarded"][0], 9).severity == "CRITICAL"
    assert _verdict(ART9["money-lower-bound-only"][0], 9).severity == "CRITICAL"
    assert _verdict(ART9["team-without-stop"][0], 9).severity == "MEDIUM"


# --- Article 10 ----------------------------------------------------------------------

ART10 = {
    "field-to-prompt": (
        """
        def triage(ticket):
            who = ticket["requester"]
            prompt = f"From {who.get('email')} ({who.get('phone')}): {ticket['body']}"
            return chain.invoke({"input": prompt})
        """,
        """
        def triage(ticket):
            who = ticket["requester"]
            prompt = f"From {mask_email(who.get('email'))}: {ticket['body']}"
            notify_client.send(to=who.get("email"), body="We got your ticket.")
            return chain.invoke({"input": prompt})
        """),
    "field-to-log": (
        """
        def on_step(record):
            log.info("step for patient %s (%s)", record.nhs_number, record.diagnosis)
        """,
        """
        import hashlib

        def on_step(record):
            log.info("step for patient %s",
                     hashlib.sha256(record.nhs_number.encode()).hexdigest()[:12])
        """),
    "record-class-serialised": (
        """
        import json
        from dataclasses import asdict, dataclass

        @dataclass
        class Applicant:
            ref: str
            email: str
            date_of_birth: str

        def score(applicant: Applicant):
            return llm.invoke(json.dumps(asdict(applicant)))
        """,
        """
        import json
        from dataclasses import asdict, dataclass

        @dataclass
        class Applicant:
            ref: str
            skills: str
            years_experience: int

        def score(applicant: Applicant):
            return llm.invoke(json.dumps(asdict(applicant)))
        """),
    "projection-field-list": (
        """
        import json
        EXPORT = json.loads('{"fields": ["claim_id", "claimant_email", "loss_type"]}')

        def export(rows, fh):
            for row in rows:
                fh.write(json.dumps({f: row[f] for f in EXPORT["fields"]}))
        """,
        """
        import json
        EXPORT = json.loads('{"fields": ["claim_id", "loss_type", "reserve_band"]}')

        def export(rows, fh):
            for row in rows:
                fh.write(json.dumps({f: row[f] for f in EXPORT["fields"]}))
        """),
    "prompt-template": (
        """
        task = Task(description="Review applicant {full_name}, SSN {ssn}: {cv}",
                    expected_output="A score", agent=reviewer)
        """,
        """
        task = Task(description="Review application {application_ref}: {cv}",
                    expected_output="A score", agent=reviewer)
        """),
    "retrieval-index": (
        """
        def build(patients):
            return [Document(text=f"{p.family_name}, passport {p.passport_no}: {p.notes}")
                    for p in patients]
        """,
        """
        def build(patients):
            return [Document(text=p.notes, metadata={"ref": pseudonymise(p.id)})
                    for p in patients]
        """),
    "raw-person-record": (
        """
        import httpx

        @tool
        def get_member_profile(member_id: str) -> dict:
            '''The member's profile.'''
            return httpx.get(f"{CRM}/members/{member_id}", timeout=5).json()
        """,
        """
        import httpx

        @tool
        def get_order_status(order_id: str) -> dict:
            '''The order's status.'''
            return httpx.get(f"{SHOP}/orders/{order_id}", timeout=5).json()
        """),
    "raw-record-to-trace": (
        """
        import json

        async def traced(client, account, fh):
            profile = (await client.get(f"/customers/{account}")).json()
            fh.write(json.dumps({"customer": profile}))
        """,
        """
        import json

        async def traced(client, account, fh):
            shipment = (await client.get(f"/shipments/{account}")).json()
            fh.write(json.dumps({"shipment": shipment}))
        """),
    "unapplied-helper": (
        """
        def redact_contact(record):
            return {k: v for k, v in record.items() if k not in ("email", "phone")}

        def load(record_id):
            row = db.fetch(record_id)
            return row
        """,
        """
        def redact_contact(record):
            return {k: v for k, v in record.items() if k not in ("email", "phone")}

        def load(record_id):
            row = db.fetch(record_id)
            return redact_contact(row)
        """),
    "one-field-of-a-person-record": (
        """
        def brief(customer_id):
            customer = crm.get_customer(customer_id)
            return llm.invoke(f"Plan {customer['plan']}, contact {customer['phone']}")
        """,
        """
        def brief(customer_id):
            customer = crm.get_customer(customer_id)
            safe = {k: v for k, v in customer.items() if k in ("plan", "tenure")}
            log.info("brief for plan %s", customer["plan"])
            return llm.invoke(f"Customer context: {safe}")
        """),
    "settings-are-not-records": (
        """
        def remind(customer):
            log.info("reminder to %s", customer["email"])
        """,
        """
        import os
        SETTINGS = {"sender_email": "ops@example.org"}

        def remind(customer_id):
            log.info("reminder from %s (%s) for %s", SETTINGS["sender_email"],
                     os.environ["SUPPORT_PHONE"], customer_id)
        """),
}


@pytest.mark.parametrize("check", sorted(ART10))
def test_art10_check_catches(check: str) -> None:
    catch, _ = ART10[check]
    verdict = _verdict(catch, 10)
    assert not verdict.passed, verdict.evidence


@pytest.mark.parametrize("check", sorted(ART10))
def test_art10_check_must_not_fire(check: str) -> None:
    _, quiet = ART10[check]
    verdict = _verdict(quiet, 10)
    assert verdict.passed, verdict.evidence


def test_art10_severities() -> None:
    assert _verdict(ART10["field-to-log"][0], 10).severity == "CRITICAL"
    assert _verdict(ART10["field-to-prompt"][0], 10).severity == "HIGH"
    assert _verdict(ART10["raw-record-to-trace"][0], 10).severity == "HIGH"


def test_a_name_or_an_address_alone_is_too_weak() -> None:
    body = """
        def clinics(results):
            return log.info("; ".join(c["name"] + " " + c["address"] for c in results))
    """
    assert _verdict(body, 10).passed
    assert not _verdict(body.replace('c["address"]', 'c["phone"]'), 10).passed


@pytest.mark.parametrize("rule", [RiskManagementRule(), DataGovernanceRule()])
def test_every_check_is_documented(rule: RiskManagementRule | DataGovernanceRule) -> None:
    module = __import__(type(rule).__module__, fromlist=["_"])
    assert rule.checks and module.__doc__
    assert any(line.startswith("severity") for line in rule.checks)


def test_art9_money_named_tool_with_a_validated_cap() -> None:
    body = """
        import httpx

        @tool
        def process_refund(order_id: str, amount_eur: float) -> str:
            '''Refund an order through the payments API.'''
            log.info("refund %s", order_id)
            return httpx.post(f"{API}/refunds", json={"order": order_id,
                                                      "amount": amount_eur}, timeout=5).text
    """
    assert not _verdict(body, 9).passed
    capped = body.replace("amount_eur: float)",
                          "amount_eur: Annotated[float, Field(gt=0, le=200)])")
    assert _verdict(capped, 9).passed


def test_art9_advice_read_from_a_system_message_call() -> None:
    body = """
        history = ChatHistory()
        history.add_system_message("Suggest which pension fund and mortgage suit the caller.")
    """
    assert not _verdict(body, 9).passed
    assert _verdict(body.replace("pension fund and mortgage", "parcel service"), 9).passed


def test_art10_yaml_field_list_projection() -> None:
    body = '''
        import json, yaml
        CONFIG = yaml.safe_load("""
        export_fields:
          - ticket_id
          - customer_email
          - topic
        """)

        def export(rows, fh):
            for row in rows:
                fh.write(json.dumps({f: row[f] for f in CONFIG["export_fields"]}))
    '''
    assert not _verdict(body, 10).passed
    assert _verdict(body.replace("customer_email", "priority"), 10).passed


def test_art9_a_guardrail_that_never_runs_is_not_one() -> None:
    body = """
        coach = Agent(name="coach", instructions="Suggest investments for the member.",
                      output_guardrails=[])

        def _flagged(text):
            return client.moderations.create(model="omni-moderation-latest", input=text)

        def answer(question):
            return Runner.run_sync(coach, question, max_turns=3).final_output
    """
    assert not _verdict(body, 9).passed
    used = body.replace("return Runner.run_sync(coach, question, max_turns=3).final_output",
                        "if _flagged(question).results[0].flagged:\n"
                        "                return 'I cannot help with that.'\n"
                        "            return Runner.run_sync(coach, question).final_output")
    assert _verdict(used, 9).passed


def test_art10_a_neutral_tool_reading_a_person_endpoint() -> None:
    body = """
        import httpx

        @tool
        def lookup(ref: str) -> dict:
            '''Look up a reference for the customer's question.'''
            return httpx.get(f"{CRM}/patients/{ref}", timeout=5).json()
    """
    assert not _verdict(body, 10).passed
    assert _verdict(body.replace("/patients/", "/parcels/"), 10).passed


def test_art10_keyed_hash_is_minimisation() -> None:
    body = """
        import hashlib, hmac

        def on_end(rec):
            log.info("case %s", hmac.new(KEY, rec["policy_number"].encode(), hashlib.sha256))
    """
    assert _verdict(body, 10).passed
    assert not _verdict(body.replace('hmac.new(KEY, rec["policy_number"].encode(), '
                                     'hashlib.sha256)', 'rec["policy_number"]'), 10).passed


@pytest.mark.parametrize("late", [
    # compared only after the money has moved
    """
    @tool
    def refund_order(order_id: str, amount: float) -> str:
        '''Refund an order.'''
        receipt = payments.refund(order_id, amount)
        if amount > MAX_REFUND:
            return "flagged for review"
        return receipt
    """,
    # a branch that only logs the breach
    """
    @tool
    def refund_order(order_id: str, amount: float) -> str:
        '''Refund an order.'''
        if amount > MAX_REFUND:
            log.warning("large refund %s", order_id)
        return payments.refund(order_id, amount)
    """,
])
def test_art9_a_cap_must_act_before_the_money_moves(late: str) -> None:
    assert not _verdict(late, 9).passed
    enforced = """
    @tool
    def refund_order(order_id: str, amount: float) -> str:
        '''Refund an order.'''
        if amount > MAX_REFUND:
            return "over the refund limit"
        return payments.refund(order_id, amount)
    """
    assert _verdict(enforced, 9).passed


def test_art9_huge_ranges_and_folded_limits() -> None:
    assert not _verdict("for _ in range(10_000):\n    agent.invoke({'input': 'go'})\n",
                        9).passed
    assert _verdict("for _ in range(8):\n    agent.invoke({'input': 'go'})\n", 9).passed
    assert not _verdict("Runner.run_sync(agent, 'go', max_turns=10**6)\n", 9).passed


def test_art10_trace_span_attributes_are_a_sink() -> None:
    body = """
        def traced(span, customer):
            span.set_attribute("customer.email", customer["email"])
    """
    assert not _verdict(body, 10).passed
    assert _verdict(body.replace('customer["email"]', 'customer["plan"]'), 10).passed


def test_art10_serialised_record_must_be_named_for_its_class() -> None:
    body = """
        import json
        from dataclasses import asdict, dataclass

        @dataclass
        class Patient:
            ref: str
            nhs_number: str

        @dataclass
        class RunStats:
            steps: int

        def close(stats: RunStats, patient: Patient):
            log.info(json.dumps(asdict(stats)))
    """
    assert _verdict(body, 10).passed
    assert not _verdict(body.replace("asdict(stats)", "asdict(patient)"), 10).passed


def test_art10_an_organisations_contact_data_is_not_personal() -> None:
    body = """
        def order(supplier, customer):
            return llm.invoke(f"Order from {supplier['email']} ({supplier['phone']})")
    """
    assert _verdict(body, 10).passed
    assert not _verdict(body.replace("supplier[", "customer["), 10).passed


@pytest.mark.parametrize(("field", "kind"), [
    ("email", "contact"), ("shipping_address", "contact"), ("date_of_birth", "contact"),
    ("policy_number", "contact"), ("nhs_number", "special"), ("diagnosis", "special"),
    ("customer_age", "contact"), ("full_name", "name"), ("vehicle_age", None),
    ("age_band", None), ("email_client", None), ("from_address", None), ("order_no", None),
])
def test_art10_field_classes(field: str, kind: str | None) -> None:
    assert classify(field) == kind


def test_art9_workflow_without_a_time_limit() -> None:
    body = "workflow = AgentWorkflow(agents=[triage], root_agent='triage', timeout=None)\n"
    assert not _verdict(body, 9).passed
    assert _verdict(body.replace("timeout=None", "timeout=120"), 9).passed


def test_art9_advice_forbidden_in_its_own_clause_only() -> None:
    told = "prompt = 'Never diagnose, but tell the patient which medication to take.'\n"
    assert not _verdict(told, 9).passed
    assert _verdict("prompt = 'Summarise the contract. Do not give legal advice.'\n", 9).passed


def test_art10_leak_inside_a_decorator_wrapper() -> None:
    body = """
        import functools

        def traced(fn):
            @functools.wraps(fn)
            def wrapper(record):
                log.info("calling %s for %s", fn.__name__, record["email"])
                return fn(record)
            return wrapper
    """
    assert not _verdict(body, 10).passed
    assert _verdict(body.replace('record["email"]', 'record["ticket_id"]'), 10).passed


def test_art9_limit_text_in_a_docstring_is_prose_not_config() -> None:
    body = '''
        def run(question):
            """Runs the agent; max_iterations: None would let it loop for ever."""
            return executor.invoke({"input": question})
    '''
    assert _verdict(body, 9).passed
    assert not _verdict('CONFIG = """\\nmax_iterations: null\\n"""\n', 9).passed


def test_art9_a_decorator_that_caps_the_amount_before_calling_through() -> None:
    body = """
        import functools

        def within_granted(tool):
            @functools.wraps(tool)
            def guarded(case_id: str, amount_eur: float) -> str:
                granted = ledger.granted(case_id)
                if not 0 < amount_eur <= granted:
                    return "above the granted amount"
                return tool(case_id, amount_eur)
            return guarded

        @{decorator}
        @function_tool
        def refund_case(case_id: str, amount_eur: float) -> str:
            '''Refund a case.'''
            log.info("refund %s", case_id)
            return payments.refund(case_id, amount_eur)
    """
    assert _verdict(body.format(decorator="within_granted"), 9).passed
    # The same wrapper checking only that the amount is positive caps nothing.
    weak = body.replace("if not 0 < amount_eur <= granted:", "if amount_eur <= 0:")
    assert not _verdict(weak.format(decorator="within_granted"), 9).passed


def test_art9_a_check_that_refers_the_question_to_a_person_is_a_guardrail() -> None:
    body = '''
        advisor = Agent(name="pensions", instructions="Answer members' questions about "
                        "their pension and retirement options.")
        HANDOVER = "An adviser will call you back about this."

        def refer(member_id, question):
            worklist.execute("INSERT INTO callbacks VALUES (?, ?)", (member_id, question))
            return HANDOVER

        def answer(member_id, question):
            reply = Runner.run_sync(advisor, question, max_turns=4).final_output
            if personal_recommendation.search(reply):
                return refer(member_id, question)
            return reply
    '''
    assert _verdict(body, 9).passed
    # A helper that answers with the model's own text is no referral.
    assert not _verdict(body.replace("return HANDOVER", "return advisor.draft(question)"),
                        9).passed


def test_art10_storing_under_a_key_taints_the_container_not_the_key_or_self() -> None:
    body = """
        class Outreach:
            @kernel_function(description="List members behind on their plan.")
            def behind(self) -> str:
                rows = []
                for i, entry in enumerate(self.http.get("/members").json()):
                    ref = f"M{i}"
                    self.contacts[ref] = {"email": entry["email"]}
                    rows.append(ref)
                log.info("members behind=%d in %s: %s", len(rows), self.cfg.region, ref)
                return ", ".join(rows)
    """
    assert _verdict(body, 10).passed
    # Stored into a local container that is then logged, the address leaks.
    leaky = body.replace("self.contacts[ref] =", "contacts = {}\n"
                         "                    contacts[ref] =").replace(
        "self.cfg.region, ref)", "self.cfg.region, contacts)")
    assert not _verdict(leaky, 10).passed


def test_art10_the_reply_of_a_send_is_not_the_payload() -> None:
    body = """
        @function_tool
        def send_survey(ticket_id: int) -> str:
            '''Email the requester the satisfaction survey.'''
            ticket = http.get(f"/tickets/{ticket_id}").json()
            sent = http.post(MAILER, json={"to": ticket["requester_email"], "text": SURVEY})
            log.info("survey sent for %s: %s", ticket_id, sent.json()["id"])
            return "sent"
    """
    assert _verdict(body, 10).passed
    assert not _verdict(body.replace('sent.json()["id"]', 'ticket["requester_email"]'),
                        10).passed


def test_art10_a_loader_wrapped_in_an_allow_list_view_is_minimised() -> None:
    body = """
        import functools

        def only(*fields):
            def wrap(fetch):
                @functools.wraps(fetch)
                def view(customer_id):
                    row = fetch(customer_id)
                    return {k: row[k] for k in fields if k in row}
                return view
            return wrap

        @only("plan", "tenure")
        def load_customer(customer_id):
            return crm.get(f"/customers/{customer_id}").json()

        def brief(session):
            facts = load_customer(session.customer_number)
            log.info("brief for %s", facts["plan"])
            return llm.invoke(f"Customer context: {facts}")
    """
    assert _verdict(body, 10).passed
    # Without the view the customer number flows into the prompt with the record.
    assert not _verdict(body.replace('@only("plan", "tenure")', ""), 10).passed


def test_art10_a_flag_about_what_an_answer_says_is_not_the_persons_data() -> None:
    body = """
        async def answer(session_id, question):
            result = await Runner.run(assistant, question, max_turns=4)
            review = result.final_output_as(ScopeCheck)
            log.warning("session=%s flagged diagnosis=%s", session_id,
                        review.mentions_diagnosis)
            return result.final_output
    """
    assert _verdict(body, 10).passed
    assert classify("mentions_diagnosis") is None
    assert not _verdict(body.replace("review.mentions_diagnosis", "patient.diagnosis"),
                        10).passed


def test_art10_a_record_minimised_in_one_place_and_returned_raw_in_another() -> None:
    body = """
        def pseudonymise(application: dict) -> dict:
            '''Drop direct identifiers.'''
            return {k: v for k, v in application.items() if k not in DIRECT_IDENTIFIERS}

        @kernel_function(description="Fetch one job application.")
        def get_application(application_id: str) -> str:
            application = http.get(f"/applications/{application_id}").json()
            log.info("loaded %s", pseudonymise(application)["ref"])
            return json.dumps(application)
    """
    assert not _verdict(body, 10).passed
    assert _verdict(body.replace("json.dumps(application)",
                                 "json.dumps(pseudonymise(application))"), 10).passed


def test_art9_a_limit_that_falls_back_to_none() -> None:
    body = """
        import os
        MAX_ROUNDS = int(os.getenv("MAX_ROUNDS", "0")) or None

        def revise(draft):
            rounds = 0
            while True:
                rounds += 1
                draft = writer.invoke(draft)
                if MAX_ROUNDS and rounds >= MAX_ROUNDS:
                    break
            return draft
    """
    assert not _verdict(body, 9).passed
    assert _verdict(body.replace('"0")) or None', '"6")) or None'), 9).passed


def test_art9_a_team_that_stops_only_on_a_phrase() -> None:
    body = """
        def build(writer, critic):
            stop = TextMentionTermination("SIGNED OFF")
            return RoundRobinGroupChat([writer, critic], termination_condition=stop)
    """
    assert not _verdict(body, 9).passed
    assert _verdict(body.replace('stop = TextMentionTermination("SIGNED OFF")',
                                 'stop = TextMentionTermination("SIGNED OFF") | '
                                 'MaxMessageTermination(20)'), 9).passed
    assert _verdict(body.replace("termination_condition=stop",
                                 "termination_condition=stop, max_turns=12"), 9).passed


def test_art9_a_wall_clock_deadline_around_the_run_bounds_it() -> None:
    body = """
        import asyncio

        async def review(task):
            team = RoundRobinGroupChat([writer, critic],
                                       termination_condition=TextMentionTermination("DONE"))
            return await asyncio.wait_for(team.run(task=task), timeout=WINDOW)
    """
    assert _verdict(body.replace("WINDOW", "600"), 9).passed
    assert not _verdict(body.replace("WINDOW", "None"), 9).passed


def test_art9_a_stop_the_model_must_grant_is_no_bound() -> None:
    body = """
        SETTINGS = {"target": 8}

        def refine(topic):
            rounds = 0
            while True:
                rounds += 1
                review = crew.kickoff(inputs={"topic": topic})
                score = grade(review.raw)
                if score >= SETTINGS["target"]:
                    break
            return review
    """
    assert not _verdict(body, 9).passed
    assert _verdict(body.replace('if score >= SETTINGS["target"]:',
                                 'if score >= SETTINGS["target"] or rounds >= 5:'), 9).passed


def test_art9_a_back_off_sleep_is_not_a_polling_loop() -> None:
    body = """
        import time

        def build(request):
            while True:
                try:
                    draft = agent.run(request)
                except Exception:
                    time.sleep(5)
                    continue
                if "PASS" in draft:
                    return draft
    """
    assert not _verdict(body, 9).passed
    polling = body.replace('                if "PASS" in draft:',
                           '                time.sleep(30)\n                if "PASS" in draft:')
    assert _verdict(polling, 9).passed


def test_art9_a_callback_that_stops_the_run_at_a_clock_bounds_it() -> None:
    body = """
        import time

        class RunClock(BaseCallbackHandler):
            def __init__(self, seconds=120.0):
                self.ends_at = time.monotonic() + seconds

            def on_agent_action(self, action, **kwargs):
                if time.monotonic() > self.ends_at:
                    raise RuntimeError("window closed")

        executor = AgentExecutor(agent=agent, tools=tools, max_iterations=None)
        executor.invoke({"input": "triage"}, config={"callbacks": [RunClock()]})
    """
    assert _verdict(body, 9).passed
    assert not _verdict(body.replace('[RunClock()]', '[]'), 9).passed


def test_art9_a_guardrail_declared_but_never_attached() -> None:
    body = '''
        @output_guardrail
        async def clinical_check(ctx, agent, output):
            verdict = (await Runner.run(reviewer, output, max_turns=2)).final_output
            return GuardrailFunctionOutput(output_info=verdict,
                                           tripwire_triggered=verdict.unsafe)

        guide = Agent(name="symptoms", instructions="Suggest self-care and which "
                      "over-the-counter medicine may help.")

        async def answer(message):
            return (await Runner.run(guide, message, max_turns=6)).final_output
    '''
    assert not _verdict(body, 9).passed
    attached = body.replace('"over-the-counter medicine may help.")',
                            '"over-the-counter medicine may help.",\n'
                            '                      output_guardrails=[clinical_check])')
    assert _verdict(attached, 9).passed


def test_art9_a_hook_that_passes_safe_replies_and_replaces_the_rest() -> None:
    body = '''
        HANDOFF = "A pharmacist will call you back about this."
        helper = ConversableAgent("helper", llm_config=cfg, system_message="Explain "
                                  "over-the-counter medicines and their side effects.")

        def hold_back(sender, message, recipient, silent):
            if not CLINICAL.search(message.get("content", "")):
                return message
            callbacks.append(message)
            return {**message, "content": HANDOFF}

        helper.register_hook("process_message_before_send", hold_back)
    '''
    assert _verdict(body, 9).passed
    # The same hook handing the model's text on in both branches replaces nothing.
    assert not _verdict(body.replace('"content": HANDOFF', '"content": message["content"]'),
                        9).passed


def test_art9_a_check_the_answer_is_handed_to_replaces_it() -> None:
    body = '''
        HANDOFF = "An adviser will pick this up and message you within a working day."
        helper = FunctionAgent(name="tenancy", system_prompt="Explain tenancy rules.")

        class Routing:
            def review(self, question, draft):
                own_case = any(term in question.lower() for term in COURT_TERMS)
                if own_case:
                    return HANDOFF
                return draft

        routing = Routing()

        async def reply(question):
            draft = str(await helper.run(user_msg=question))
            return routing.review(question, draft)
    '''
    assert _verdict(body, 9).passed
    # The same check, written but never applied to the answer, replaces nothing.
    assert not _verdict(body.replace("return routing.review(question, draft)",
                                     "return draft"), 9).passed


def test_art9_savings_and_fund_picks_are_financial_advice() -> None:
    body = '''
        coach = AssistantAgent("coach", model_client=client, system_message=(
            "Look at the customer's allocation and {task}."))
    '''
    assert not _verdict(body.format(task="recommend which funds to buy or sell and how "
                                         "much of their savings to move"), 9).passed
    assert _verdict(body.format(task="explain the fee schedule"), 9).passed


def test_art10_the_reply_of_a_chat_post_is_not_the_payload() -> None:
    body = """
        def propose(application_id, body):
            cand = ats.get(f"/applications/{application_id}").json()
            text = body.replace("{first_name}", cand["first_name"]) + cand["email"]
            msg = slack.chat_postMessage(channel=REVIEW_CHANNEL, text=text)
            click = wait_for_click(msg["ts"])
            log.info("app=%s click=%s", application_id, click)
    """
    assert _verdict(body, 10).passed
    # Logging what was posted leaks the address.
    assert not _verdict(body.replace("application_id, click)", "application_id, text)"),
                        10).passed


def test_art10_a_comprehension_carries_what_its_elements_read() -> None:
    body = """
        @function_tool
        async def list_assignments(case_id: str) -> list[str]:
            '''List the apps assigned to the user of a case.'''
            links = http.get(f"/users/{case_id}/appLinks").json()
            return sorted({f"{link['appInstanceId']}:{link['label']}" for link in links})
    """
    assert _verdict(body, 10).passed
    # The elements whole, or a personal field of each, still leak.
    assert not _verdict(body.replace("""f"{link['appInstanceId']}:{link['label']}" """,
                                     "str(link) "), 10).passed
    assert not _verdict(body.replace("link['label']", "link['email']"), 10).passed


def test_art10_a_placeholder_filled_after_the_model_is_not_in_the_prompt() -> None:
    body = """
        SYSTEM = "Write a short status email. Address the candidate as {first_name}."

        def draft(candidate_id, person):
            reply = client.chat.completions.create(model="m", messages=[
                {"role": "system", "content": SYSTEM}])
            text = reply.choices[0].message.content
            return text.replace("{first_name}", mask_name(person))
    """
    assert _verdict(body, 10).passed
    # Formatted into the prompt, the name reaches the model.
    assert not _verdict(body.replace('"content": SYSTEM}', '"content": SYSTEM.format('
                                     'first_name=person["first_name"])}'), 10).passed


def test_art10_a_bare_health_field_also_describes_a_service() -> None:
    body = """
        @kernel_function(description="Report the canary health of a service.")
        def canary_health(service):
            health = http.get(f"/applications/{service}").json()["status"]["health"]
            return f"{service}: {health['status']}"
    """
    assert _verdict(body, 10).passed
    # Beside another personal field it is a person's health.
    assert not _verdict(body.replace("""return f"{service}: {health['status']}" """.strip(),
                                     """rec = http.get("/patients/1").json()
            return f"{rec['email']}: {health}" """.strip()), 10).passed


def test_art9_a_group_chat_manager_with_no_round_limit() -> None:
    body = """
        class ReviewManager(RoundRobinGroupChatManager):
            async def should_terminate(self, chat_history):
                last = chat_history.messages[-1]
                return BooleanResult(result="APPROVED" in str(last.content), reason="")

        async def review(task):
            chat = GroupChatOrchestration(members=[writer, reviewer], manager=MANAGER)
            return await (await chat.invoke(task=task, runtime=runtime)).get()
    """
    assert not _verdict(body.replace("MANAGER", "ReviewManager()"), 9).passed
    assert not _verdict(body.replace("MANAGER", "RoundRobinGroupChatManager()"), 9).passed
    assert _verdict(body.replace("MANAGER", "ReviewManager(max_rounds=10)"), 9).passed
    counting = body.replace('"APPROVED" in str(last.content)',
                            'len(chat_history.messages) >= 12').replace(
        "MANAGER", "ReviewManager()")
    assert _verdict(counting, 9).passed


def test_art9_shopping_savings_are_not_financial_advice() -> None:
    body = '''
        helper = Agent(name="deals", instructions="Help shoppers buy or sell {goods} "
                       "and point out their savings on bundles.")
    '''
    assert _verdict(body.format(goods="used furniture"), 9).passed
    assert not _verdict(body.format(goods="shares"), 9).passed
