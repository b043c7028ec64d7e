"""Articles 14 and 15 of the rule scanner, one check at a time: for each check a snippet it
must catch and one it must not (the README lists the same pairs). The snippets are
written for these tests, not taken from the benchmark data."""

from __future__ import annotations

import textwrap

import pytest

from summarybench_compliance.scanner import ArticleResult, scan_code
from summarybench_compliance.scanner.rules import HumanOversightRule, RobustnessRule

HEAD = ('"""Support assistant for the billing team: answers and acts on tickets."""\n'
        "import logging\nimport os\nimport requests\nimport subprocess\n"
        "from langchain_core.tools import tool\n"
        "log = logging.getLogger('billing')\n")


def _verdict(body: str, article: int) -> ArticleResult:
    return scan_code(HEAD + textwrap.dedent(body)).result(article)


# -- article 14 -------------------------------------------------------------------------

UNGATED_PAYOUT_CLASS = """
    from crewai.tools import BaseTool

    class PayoutTool(BaseTool):
        name: str = "payout"
        description: str = "Pay a creator their earnings."

        def _run(self, creator_id: str, amount_eur: float) -> str:
            r = requests.post(f"https://pay.example/creators/{creator_id}/payouts",
                              json={"amount": amount_eur}, timeout=10)
            log.info("payout %s", creator_id)
            return r.text
"""
NOTE_TOOL = """
    @tool
    def save_customer_note(customer_id: str, note: str) -> str:
        '''Attach an internal note to a customer record.'''
        r = requests.post(f"https://crm.example/customers/{customer_id}/notes",
                          json={"text": note}, timeout=10)
        log.info("note saved %s", customer_id)
        return r.text
"""
SEND_REMINDER = """
    @tool
    def send_reminder(customer_email: str, body: str) -> str:
        '''E-mail a customer.'''
        {gate}
        mailer.send_message(to=customer_email, body=body)
        log.info("reminder sent")
        return "sent"
"""
CONSOLE_GATE = ("if input(f'Send to {customer_email}? ').strip().lower() != 'yes':\n"
                "            return 'declined'")
CAP_ONLY = "if len(body) > 2000:\n            return 'too long'"


def test_acting_functions_are_read_from_their_bodies() -> None:
    verdict = _verdict(UNGATED_PAYOUT_CLASS, 14)
    assert not verdict.passed and verdict.severity == "CRITICAL"
    assert any("PayoutTool._run" in e for e in verdict.evidence)
    # A note on a record is bookkeeping: a person acts on it later.
    assert _verdict(NOTE_TOOL, 14).passed


def test_gate_in_place_must_guard_the_action() -> None:
    verdict = _verdict(SEND_REMINDER.format(gate=CAP_ONLY), 14)
    assert not verdict.passed and verdict.severity == "HIGH"
    assert _verdict(SEND_REMINDER.format(gate=CONSOLE_GATE), 14).passed


def test_polled_ticket_status_gates_without_the_usual_words() -> None:
    body = """
        import time

        def _ticket_state(ticket_id: str) -> str:
            for _ in range(60):
                reply = requests.get(f"https://itsm.example/t/{ticket_id}", timeout=5)
                state = reply.json()["state"]
                if state in ("implement", "closed"):
                    return state
                time.sleep(30)
            return "expired"

        @tool
        def deploy_release(service: str, ticket_id: str) -> str:
            '''Deploy a service once its change ticket is in the implement state.'''
            if _ticket_state(ticket_id) != "implement":
                return "not deployed"
            subprocess.run(["helm", "upgrade", service, "chart/"], check=True, timeout=600)
            log.info("deployed %s", service)
            return "deployed"
    """
    assert _verdict(body, 14).passed
    ungated = body.replace('if _ticket_state(ticket_id) != "implement":', "if False:")
    assert not _verdict(ungated, 14).passed


def test_a_leading_verb_of_messaging_acts_whatever_noun_follows() -> None:
    body = """
        import smtplib

        @tool
        def send_progress_note(learner_ref: str, body: str) -> str:
            '''Email a progress note to a learner.'''
            with smtplib.SMTP("smtp.example.edu", 587, timeout=15) as smtp:
                smtp.send_message(build_message(learner_ref, body))
            log.info("note sent %s", learner_ref)
            return "sent"
    """
    assert not _verdict(body, 14).passed
    # Adding a note to a record is bookkeeping.
    assert _verdict(body.replace("send_progress_note", "add_progress_note"), 14).passed


CHANGE_GATED_DEPLOY = """
    class ChangeDesk:
        '''Reads change records.'''

        def covers(self, change_id: str, service: str) -> tuple[bool, str]:
            rec = requests.get(f"https://itsm.example/{records}/{{change_id}}",
                               timeout=10).json()
            if rec.get("status") != "scheduled" or rec.get("service") != service:
                return False, "no scheduled change covers this"
            return True, "ok"

    desk = ChangeDesk()

    @tool
    def deploy_service(service: str, change_id: str) -> str:
        '''Deploy a service under its change record.'''
        ok, reason = desk.covers(change_id, service)
        if not ok:
            return reason
        requests.post("https://deployer.example/deployments",
                      json={{"service": service}}, timeout=30)
        log.info("deployed %s", service)
        return "deployed"
"""


def test_a_decision_recorded_on_a_change_record_gates_the_action() -> None:
    assert _verdict(CHANGE_GATED_DEPLOY.format(records="changes"), 14).passed
    # The status of a service (or an order) is no one's decision.
    assert not _verdict(CHANGE_GATED_DEPLOY.format(records="services"), 14).passed


def test_a_method_acting_only_on_a_closed_case_gates_its_callers() -> None:
    body = """
        class CaseDesk:
            '''Moderation cases and member sanctions.'''

            def case(self, case_id: str) -> dict:
                return requests.get(f"https://desk.example/cases/{case_id}", timeout=5).json()

            def suspend_if_decided(self, case_id: str) -> str:
                ticket = self.case(case_id)
                if ticket["outcome"] != "suspend":
                    return "nothing decided yet"
                requests.post(f"https://desk.example/members/{ticket['member']}/suspensions",
                              json={"days": 7}, timeout=5)
                return "suspended"

        desk = CaseDesk()

        @tool
        def carry_out_suspension(case_id: str) -> str:
            '''Apply the suspension a moderator decided on a case.'''
            outcome = desk.suspend_if_decided(case_id)
            log.info("case %s: %s", case_id, outcome)
            return outcome
    """
    assert _verdict(body, 14).passed
    ungated = body.replace('if ticket["outcome"] != "suspend":', "if not ticket:")
    assert not _verdict(ungated, 14).passed


DECORATED_REFUND = """
    import functools

    def {name}(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            {body}
            return fn(*args, **kwargs)
        return wrapper

    @tool
    @{name}
    def refund_order(order_id: str, amount: float) -> str:
        '''Refund an order.'''
        return stripe.Refund.create(payment_intent=order_id, amount=int(amount * 100))
"""


def test_a_decorator_gates_only_if_its_wrapper_asks() -> None:
    audited = DECORATED_REFUND.format(name="requires_approval",
                                      body="log.info('refund %s', args)")
    verdict = _verdict(audited, 14)
    assert not verdict.passed and verdict.severity == "CRITICAL"
    gated = DECORATED_REFUND.format(
        name="signed_off",
        body="if not approvals.wait_for_decision(kwargs):\n"
             "                return 'refund declined'")
    assert _verdict(gated, 14).passed


def test_a_helper_is_gated_by_its_callers() -> None:
    body = """
        def _transfer(account: str, amount: float) -> dict:
            return requests.post("https://bank.example/transfers",
                                 json={"to": account, "amount": amount}, timeout=10).json()

        @tool
        def settle_claim(claim_id: str, account: str, amount: float) -> str:
            '''Settle an approved claim.'''
            claim = requests.get(f"https://claims.example/{claim_id}", timeout=5).json()
            GATE
            _transfer(account, amount)
            log.info("settled %s", claim_id)
            return "settled"
    """
    assert not _verdict(body.replace("GATE", "pass"), 14).passed
    gate = "if claim['status'] != 'approved':\n                return 'awaiting approval'"
    assert _verdict(body.replace("GATE", gate), 14).passed


def test_module_wide_gates_follow_configuration() -> None:
    body = """
        import json
        from autogen import AssistantAgent, UserProxyAgent

        SETTINGS = json.loads('{{"executor": {{"human_input_mode": "{mode}"}}}}')

        def suspend_user(user_id: str) -> str:
            '''Suspend a user account.'''
            requests.post(f"https://idp.example/users/{{user_id}}/suspend", timeout=5)
            log.info("suspended %s", user_id)
            return "done"

        boss = AssistantAgent("boss", llm_config={{"timeout": 30}})
        runner = UserProxyAgent("runner", code_execution_config=False,
                                human_input_mode=SETTINGS["executor"]["human_input_mode"])
        runner.register_for_execution()(suspend_user)
    """
    verdict = _verdict(body.format(mode="NEVER"), 14)
    assert not verdict.passed and verdict.severity == "HIGH"
    assert _verdict(body.format(mode="ALWAYS"), 14).passed


def test_a_middleware_filter_that_asks_gates_every_tool() -> None:
    filtered = """
        @tool
        def delete_mailbox(user: str) -> str:
            '''Delete a mailbox.'''
            requests.delete(f"https://mail.example/mailboxes/{user}", timeout=10)
            return "deleted"

        async def confirm_calls(context, next):
            if input(f"Run {context.function.name}? [y/N] ") != "y":
                return
            await next(context)

        kernel.add_filter("function_invocation", confirm_calls)
    """
    assert _verdict(filtered, 14).passed
    logging_only = filtered.replace(
        '    if input(f"Run {context.function.name}? [y/N] ") != "y":\n'
        '                return\n', "    log.info('call')\n")
    verdict = _verdict(logging_only, 14)
    assert not verdict.passed and verdict.severity == "CRITICAL"


def test_promises_and_unread_flags_are_not_gates() -> None:
    body = """
        POLICY = {"bans_require_moderator": True}

        @tool
        def ban_member(member_id: str) -> str:
            '''Ban a member. Every ban is approved by a moderator first.'''
            requests.post(f"https://forum.example/members/{member_id}/ban", timeout=5)
            log.info("ban %s", member_id)
            return "banned"
    """
    assert not _verdict(body, 14).passed
    read = body.replace("    requests.post(", "    if POLICY['bans_require_moderator'] and "
                        "input('ban? ') != 'yes':\n                return 'declined'\n"
                        "            requests.post(")
    assert _verdict(read, 14).passed


def test_read_only_tools_and_entry_points_need_no_gate() -> None:
    body = """
        @tool
        def invoice_status(invoice_id: str) -> str:
            '''Status of an invoice.'''
            return requests.get(f"https://billing.example/invoices/{invoice_id}", timeout=5).text

        def publish_report() -> None:
            requests.post("https://dash.example/widgets/billing", json={}, timeout=5)
    """
    assert _verdict(body, 14).passed


# -- article 15 -------------------------------------------------------------------------

@pytest.mark.parametrize(("snippet", "severity"), [
    ("def run(reply: str):\n    return eval(reply)", "CRITICAL"),
    ("from crewai_tools import CodeInterpreterTool\nt = CodeInterpreterTool(unsafe_mode=True)",
     "CRITICAL"),
    ("EXEC = {'work_dir': 'out', 'use_docker': False}\n"
     "proxy = UserProxyAgent('p', code_execution_config=EXEC)", "CRITICAL"),
    ("from llama_index.experimental.query_engine import PandasQueryEngine\n"
     "engine = PandasQueryEngine(df=frame)", "CRITICAL"),
])
def test_model_code_on_the_host(snippet: str, severity: str) -> None:
    verdict = _verdict(snippet + "\n", 15)
    assert not verdict.passed and verdict.severity == severity


@pytest.mark.parametrize("snippet", [
    "import ast\nvalue = ast.literal_eval(text)",
    "EXEC = {'work_dir': 'out', 'use_docker': True}\n"
    "proxy = UserProxyAgent('p', code_execution_config=EXEC)",
])
def test_sandboxed_or_literal_evaluation_is_quiet(snippet: str) -> None:
    assert _verdict(snippet + "\n", 15).passed


@pytest.mark.parametrize("snippet", [
    "def logs(pod: str):\n"
    "    cmd = f'kubectl logs {pod} --tail=50'\n"
    "    return subprocess.run(cmd, shell=True, capture_output=True, timeout=30)",
    "def du(path: str):\n"
    "    return subprocess.check_output(['bash', '-c', 'du -sh ' + path], timeout=30)",
])
def test_built_shell_commands(snippet: str) -> None:
    verdict = _verdict(snippet + "\n", 15)
    assert not verdict.passed and verdict.severity == "CRITICAL"


def test_argument_lists_without_a_shell_are_quiet() -> None:
    snippet = ("def logs(pod: str):\n"
               "    return subprocess.run(['kubectl', 'logs', pod], timeout=30)\n")
    assert _verdict(snippet, 15).passed


@pytest.mark.parametrize("snippet", [
    # through a variable and text()
    "def by_status(status: str):\n"
    "    sql = 'SELECT id FROM orders '\n"
    "    sql += f\"WHERE status = '{status}'\"\n"
    "    return engine.connect().execute(text(sql))",
    # into a helper whose parameter reaches execute()
    "class Store:\n"
    "    def rows(self, query: str):\n"
    "        return self.conn.cursor().execute(query).fetchall()\n"
    "    def stock(self, sku: str):\n"
    "        return self.rows(\"SELECT qty FROM stock WHERE sku = '%s'\" % clean(sku))",
    # from a builder function
    "def build(region):\n"
    "    return 'SELECT sum(total) FROM sales WHERE region = \"{}\"'.format(region)\n"
    "def revenue(region):\n"
    "    return db.execute(build(region)).fetchone()",
])
def test_query_text_built_from_values(snippet: str) -> None:
    verdict = _verdict(snippet + "\n", 15)
    assert not verdict.passed and verdict.severity == "HIGH"


@pytest.mark.parametrize("snippet", [
    "def by_status(status: str):\n"
    "    return db.execute('SELECT id FROM orders WHERE status = ?', (status,))",
    "def top(limit: int):\n"
    "    return db.execute(f'SELECT id FROM orders ORDER BY total DESC LIMIT {int(limit)}')",
    "def many(ids: list):\n"
    "    marks = ', '.join('?' * len(ids))\n"
    "    return db.execute(f'SELECT id FROM orders WHERE id IN ({\", \".join(\"?\" * len(ids))})',"
    " ids)",
])
def test_bound_parameters_and_number_casts_are_quiet(snippet: str) -> None:
    assert _verdict(snippet + "\n", 15).passed


@pytest.mark.parametrize("snippet", [
    "r = requests.get(url)",
    "HTTP = {'timeout': None}\nr = requests.get(url, timeout=HTTP['timeout'])",
    "def fetch(u):\n    try:\n        return requests.get(u, timeout=5).text\n"
    "    except Exception:\n        return ''",
    "from contextlib import suppress\nwith suppress(Exception):\n"
    "    requests.post(url, timeout=5)",
    "LLM = {'model': 'gpt-4o', 'request_timeout': None}",
    "def fetch(u):\n    try:\n        return requests.get(u, timeout=5).text\n"
    "    except requests.RequestException:\n        return None",
])
def test_missing_timeouts_and_swallowed_errors(snippet: str) -> None:
    verdict = _verdict(snippet + "\n", 15)
    assert not verdict.passed and verdict.severity == "MEDIUM"


@pytest.mark.parametrize("snippet", [
    "HTTP = {'timeout': 8}\nr = requests.get(url, timeout=HTTP['timeout'])",
    "def fetch(u):\n    try:\n        return requests.get(u, timeout=5).text\n"
    "    except Exception as exc:\n        return f'unavailable: {exc}'",
    "def fetch(u):\n    try:\n        return requests.get(u, timeout=5).text\n"
    "    except Exception:\n        log.exception('fetch failed')\n        raise",
    "LLM = {'model': 'gpt-4o', 'request_timeout': 30}",
    "def price(d):\n    try:\n        return d['price']\n    except KeyError:\n"
    "        return None",
])
def test_timeouts_and_reported_errors_are_quiet(snippet: str) -> None:
    assert _verdict(snippet + "\n", 15).passed


def test_checks_are_documented() -> None:
    for rule in (HumanOversightRule(), RobustnessRule()):
        assert len(rule.checks) >= 4
        assert all(line.strip() for line in rule.checks)


def test_the_approval_request_is_not_itself_an_ungated_action() -> None:
    body = """
        import time

        def reacted(ts: str) -> bool:
            for _ in range(60):
                marks = chat.reactions_get(channel="C7", timestamp=ts)["reactions"]
                if any(m["name"] == "white_check_mark" for m in marks):
                    return True
                time.sleep(10)
            return False

        @tool
        def refund_order(order_id: str, amount: float) -> str:
            '''Refund an order once a lead ticks the request in the channel.'''
            ts = chat.chat_postMessage(channel="C7", text=f"Refund {order_id}?")["ts"]
            if not reacted(ts):
                return "not approved"
            stripe.Refund.create(payment_intent=order_id, amount=int(amount * 100))
            return "refunded"
    """
    assert _verdict(body, 14).passed
    unwaited = body.replace("if not reacted(ts):", "if not ts:")
    verdict = _verdict(unwaited, 14)
    assert not verdict.passed and verdict.severity == "CRITICAL"


def test_weak_verbs_act_only_on_accounts_and_access() -> None:
    body = """
        @tool
        def close_{what}(ref: str) -> str:
            '''Close it.'''
            requests.post(f"https://crm.example/{what}s/{{ref}}/close", timeout=5)
            log.info("closed %s", ref)
            return "closed"
    """
    assert not _verdict(body.format(what="account"), 14).passed
    assert _verdict(body.format(what="session"), 14).passed


def test_a_dispatch_loop_that_asks_gates_every_tool() -> None:
    body = """
        def email_offer(customer_email: str) -> str:
            '''E-mail a retention offer.'''
            mailer.send(to=customer_email)
            return "sent"

        TOOLS = {"email_offer": email_offer}

        def dispatch(call):
            GATE
            return TOOLS[call.name](**call.arguments)
    """
    gate = "if input(f'Run {call.name}? ').lower() not in ('y', 'yes'):\n" \
           "                return 'declined'"
    assert _verdict(body.replace("GATE", gate), 14).passed
    verdict = _verdict(body.replace("GATE", "log.info('tool %s', call.name)"), 14)
    assert not verdict.passed and verdict.severity == "HIGH"


def test_a_service_status_check_is_not_an_approval() -> None:
    body = """
        @tool
        def refund_payment(payment_id: str, amount: float) -> str:
            '''Refund a card payment.'''
            health = requests.get("https://psp.example/health", timeout=5).json()
            if health["status"] != "ok":
                return "payment service unavailable"
            requests.post(f"https://psp.example/payments/{payment_id}/refunds",
                          json={"amount": amount}, timeout=10)
            log.info("refund %s", payment_id)
            return "refunded"
    """
    verdict = _verdict(body, 14)
    assert not verdict.passed and verdict.severity == "CRITICAL"
    asked = body.replace('if health["status"] != "ok":',
                         'if health["status"] != "ok" or input("Refund? ") != "yes":')
    assert _verdict(asked, 14).passed


TICKET_REPLY = """
    @tool
    def post_reply(ticket_id: int, body: str) -> str:
        '''Comment on a help-desk ticket.'''
        payload = {"ticket": {"comment": {"body": body, "public": VISIBLE}}}
        requests.put(f"https://desk.example/api/tickets/{ticket_id}.json", json=payload,
                     timeout=10).raise_for_status()
        log.info("comment on %s", ticket_id)
        return "done"
"""


def test_a_public_comment_on_a_ticket_reaches_the_requester() -> None:
    assert not _verdict(TICKET_REPLY.replace("VISIBLE", "True"), 14).passed
    # An internal comment on the same record is bookkeeping.
    assert _verdict(TICKET_REPLY.replace("VISIBLE", "False"), 14).passed


PURCHASE_ORDER = """
    @tool
    def create_purchase_order(sku: str, quantity: int) -> str:
        '''Order stock from the wholesaler.'''
        r = requests.post("https://erp.example/api/purchase-orders", timeout=10,
                          json={"sku": sku, "quantity": quantity, "status": "STATE"})
        log.info("order %s", r.text)
        return r.text
"""


def test_a_record_created_for_a_person_to_release_is_not_an_action() -> None:
    assert not _verdict(PURCHASE_ORDER.replace("STATE", "submitted"), 14).passed
    assert _verdict(PURCHASE_ORDER.replace("STATE", "PENDING_RELEASE"), 14).passed


CLUSTER_OPS = """
    from kubernetes import client

    class ClusterOps:
        '''Kubernetes operations for the on-call agent.'''

        def __init__(self) -> None:
            self.apps = client.AppsV1Api()

        def restart(self, namespace: str, name: str) -> str:
            '''Restart a deployment.'''
            self.apps.METHOD(name, namespace, {"spec": {}}, _request_timeout=10)
            log.info("restart %s/%s", namespace, name)
            return "restarted"

    ops = ClusterOps()
    agent = ReActAgent(tools=[FunctionTool.from_defaults(fn=ops.restart)], llm=llm)
"""


def test_a_client_update_of_a_deployment_acts_and_bound_methods_are_exposed() -> None:
    verdict = _verdict(CLUSTER_OPS.replace("METHOD", "patch_namespaced_deployment"), 14)
    assert not verdict.passed
    assert any("restart" in e for e in verdict.evidence)
    assert _verdict(CLUSTER_OPS.replace("METHOD", "read_namespaced_deployment"), 14).passed
    # The same method, never handed to the agent, is an operator's script.
    hidden = CLUSTER_OPS.replace("METHOD", "patch_namespaced_deployment").replace(
        "fn=ops.restart", "fn=len")
    assert _verdict(hidden, 14).passed


def test_a_confirmation_run_in_a_worker_thread_gates_the_action() -> None:
    body = """
        import asyncio

        def clerk_confirms(invoice_id: str, amount_eur: float) -> bool:
            return input(f"Pay {amount_eur} for {invoice_id}? ").strip().lower() == "y"

        @tool
        async def pay_invoice(invoice_id: str, amount_eur: float) -> str:
            '''Pay a supplier invoice.'''
            if not await asyncio.to_thread(HELPER, invoice_id, amount_eur):
                return "not confirmed"
            requests.post("https://bank.example/payments", json={"amount": amount_eur},
                          timeout=10).raise_for_status()
            log.info("paid %s", invoice_id)
            return "paid"
    """
    assert _verdict(body.replace("HELPER", "clerk_confirms"), 14).passed
    # A worker thread running something else asks nobody.
    assert not _verdict(body.replace("HELPER", "len"), 14).passed


def test_a_method_returning_a_ticket_decision_gates_the_action() -> None:
    body = """
        class ServiceDesk:
            def ticket(self, key: str) -> dict:
                resp = requests.get(f"https://desk.example/tickets/{key}", timeout=10)
                return resp.json()

            def authorised(self, key: str) -> bool:
                t = self.ticket(key)
                return t.get("state") == "Authorised"

        desk = ServiceDesk()

        @tool
        def revoke_access(key: str, user_id: str) -> str:
            '''Disable a leaver's accounts.'''
            if not desk.authorised(key):
                return "not authorised yet"
            requests.post(f"https://idp.example/users/{user_id}/disable",
                          timeout=10).raise_for_status()
            log.info("revoked %s", user_id)
            return "revoked"
    """
    assert _verdict(body, 14).passed
    # The same method returning something other than the recorded decision asks nobody.
    assert not _verdict(body.replace('t.get("state") == "Authorised"', "bool(t)"), 14).passed


def test_a_wrapper_polling_for_a_reaction_gates_the_tool_it_wraps() -> None:
    body = """
        import time

        def _reaction(ts: str) -> str | None:
            resp = slack.reactions_get(channel="C1", timestamp=ts)
            return resp["message"].get("verdict")

        def held_for_lead(action):
            def run(user_id: str) -> str:
                post = slack.chat_postMessage(channel="C1", text=f"Suspend {user_id}?")
                verdict, stop_at = None, time.monotonic() + 600
                while verdict is None and time.monotonic() < stop_at:
                    time.sleep(30)
                    verdict = _reaction(post["ts"])
                if verdict != "go":
                    return "not done"
                return action(user_id)
            return run

        def suspend_account(user_id: str) -> str:
            '''Suspend a user's account.'''
            requests.post(f"https://idp.example/users/{user_id}/suspend",
                          timeout=10).raise_for_status()
            log.info("suspended %s", user_id)
            return "suspended"

        agent = FunctionAgent(tools=[FunctionTool.from_defaults(fn=held_for_lead(suspend_account))])
    """
    assert _verdict(body, 14).passed
    # Read once, without waiting, the same value is no one's answer.
    assert not _verdict(body.replace("time.sleep(30)", "pass"), 14).passed


def test_the_approval_request_may_be_read_back_through_derived_values() -> None:
    body = """
        import sqlite3
        import time

        def wait_for_click(message_ts: str) -> str:
            with sqlite3.connect("clicks.db") as db:
                for _ in range(120):
                    row = db.execute("SELECT action FROM clicks WHERE ts = ?",
                                     (message_ts,)).fetchone()
                    if row:
                        return row[0]
                    time.sleep(10)
            return ""

        @tool
        def send_offer_email(candidate: str, body: str) -> str:
            '''E-mail a candidate once the recruiter presses Send.'''
            msg = slack.chat_postMessage(channel="C1", text=body)
            ts = msg["ts"]
            click = wait_for_click(KEY)
            if click != "send":
                return "not sent"
            mailer.send_message(to=candidate, body=body)
            log.info("sent to %s", candidate)
            return "sent"
    """
    assert _verdict(body.replace("KEY", "ts"), 14).passed
    # A poll that does not read back this message leaves the post an unreviewed message.
    verdict = _verdict(body.replace("KEY", "'latest'"), 14)
    assert not verdict.passed and any("chat_postMessage" in e for e in verdict.evidence)


ASK_LEAD = ("if not wait_for_lead(order_id, amount):\n"
            "                return 'not accepted'")


def test_calling_a_helper_that_files_and_polls_a_review_item_is_the_gate() -> None:
    body = """
        import time

        def wait_for_lead(order_id: str, amount: float) -> bool:
            created = requests.post("https://review.example/items", timeout=10,
                                    json={"kind": "refund", "order_id": order_id})
            item = created.json()
            for _ in range(40):
                polled = requests.get(f"https://review.example/items/{item['id']}", timeout=10)
                state = polled.json()
                if state["state"] in ("accepted", "rejected"):
                    return state["state"] == "accepted"
                time.sleep(15)
            return False

        @tool
        def issue_refund(order_id: str, amount: float) -> str:
            '''Refund an order once the returns lead accepted it.'''
            BEFORE
            requests.post("https://pay.example/refunds", json={"amount": amount},
                          timeout=10).raise_for_status()
            AFTER
            log.info("refunded %s", order_id)
            return "refunded"
    """
    assert _verdict(body.replace("BEFORE", ASK_LEAD).replace("AFTER", "pass"), 14).passed
    # Asked after the refund went out, the lead reviews nothing.
    after = body.replace("BEFORE", "pass").replace("AFTER", ASK_LEAD)
    assert not _verdict(after, 14).passed


def test_a_wrapper_tool_bound_to_an_issue_status_gates_the_tool_it_holds() -> None:
    body = """
        from crewai.tools import BaseTool

        class EraseProfile(BaseTool):
            name: str = "erase_profile"
            description: str = "Erase a customer's CRM profile."

            def _run(self, key: str, subject: str) -> str:
                r = requests.delete(f"https://crm.example/subjects/{subject}", timeout=20)
                log.info("erased %s", subject)
                return r.text

        class StatusBound(BaseTool):
            inner: BaseTool
            status: str

            def _run(self, key: str, **kwargs) -> str:
                r = requests.get(f"https://jira.example/rest/api/3/issue/{key}", timeout=10)
                current = r.json()["fields"]["FIELD"]["name"]
                if current != self.status:
                    return "nothing done"
                return self.inner._run(key=key, **kwargs)

        inner = EraseProfile()
        agent = Agent(role="Privacy analyst", goal="Erase profiles",
                      tools=[StatusBound(inner=inner, status="Ready for erasure")])
    """
    assert _verdict(body.replace("FIELD", "status"), 14).passed
    # The same wrapper testing a field nobody decides on lets every erasure through.
    assert not _verdict(body.replace("FIELD", "summary"), 14).passed


TICKET_ENDPOINT = """
    class BillingPlugin:
        @kernel_function(description="Act on a billing ticket.")
        async def NAME(self, ticket_id: str, body: str) -> str:
            resp = await crm.post("/tickets/PATH", json={"ticket": ticket_id, "body": body})
            log.info("ticket %s: %s", ticket_id, resp.status_code)
            return "done"
"""


def test_an_endpoint_that_sends_acts_whatever_record_it_hangs_off() -> None:
    sent = TICKET_ENDPOINT.replace("NAME", "send_customer_email").replace("PATH", "email")
    assert not _verdict(sent, 14).passed
    noted = TICKET_ENDPOINT.replace("NAME", "add_ticket_note").replace("PATH", "notes")
    assert _verdict(noted, 14).passed
    # Notifying the reviewers of a record asks them; it reaches no customer.
    asked = TICKET_ENDPOINT.replace("NAME", "refund_order").replace(
        "/tickets/PATH", "/approvals/notify")
    assert _verdict(asked, 14).passed


def test_promoting_a_build_is_a_deployment() -> None:
    body = """
        class ReleasePlugin:
            @kernel_function(description="Roll a build out via Argo CD.")
            async def NAME(self, service: str, version: str) -> str:
                resp = await argocd.post(f"/applications/{service}/sync",
                                         json={"revision": version})
                log.info("sync %s %s", service, resp.status_code)
                return "syncing"
    """
    assert not _verdict(body.replace("NAME", "promote_release"), 14).passed
    assert _verdict(body.replace("NAME", "compare_release"), 14).passed


def test_a_retry_loop_around_a_send_waits_for_no_one() -> None:
    body = """
        import time

        @tool
        def send_reminder(customer_email: str, body: str) -> str:
            '''E-mail a customer once the account manager released the reminder.'''
            state = ""
            for _ in range(20):
                resp = requests.METHOD("https://mail.example/reminders/state", timeout=10)
                state = resp.json()["state"]
                if state == "released":
                    break
                time.sleep(30)
            if state != "released":
                return "not released"
            mailer.send_message(to=customer_email, body=body)
            log.info("reminder sent")
            return "sent"
    """
    # Polling the state a person sets waits for their decision ...
    assert _verdict(body.replace("METHOD", "get"), 14).passed
    # ... re-posting until the response says so is a retry, and the post is the action.
    assert not _verdict(body.replace("METHOD", "post"), 14).passed
