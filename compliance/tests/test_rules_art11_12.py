"""Articles 11 and 12 of the rule scanner: for each documented check, one short snippet it
must catch and one it must not. Every snippet is otherwise compliant on its article, so
removing a check makes its "catch" case pass silently and the test fail."""

from __future__ import annotations

import textwrap

import pytest

from summarybench_compliance.scanner import scan_code
from summarybench_compliance.scanner.rules import (
    RecordKeepingRule,
    TechnicalDocumentationRule,
)

DOC = '"""Wiki assistant for the platform team: answers questions from runbooks."""\n'
LOGGED = "import logging\nlog = logging.getLogger('wiki')\n"


def _fires(code: str, article: int) -> bool:
    return not scan_code(code).result(article).passed


# -- Article 11 ------------------------------------------------------------------------

DOCUMENTED_TOOL = textwrap.dedent("""
    from langchain_core.tools import tool

    @tool
    def search_runbooks(query: str) -> str:
        '''Full-text search over the ops runbooks; returns titles and links.'''
        log.info("search %s", query)
        return index.search(query)
""")

ART11_CASES = {
    # check: (catch, must not)
    "purpose-missing": (LOGGED + DOCUMENTED_TOOL, DOC + LOGGED + DOCUMENTED_TOOL),
    "purpose-placeholder": ('"""Agent module.\n\nTechnical documentation: TODO."""\n'
                            + LOGGED + DOCUMENTED_TOOL,
                            '"""Ticket triage bot."""\n' + LOGGED + DOCUMENTED_TOOL),
    "tool-undocumented": (DOC + LOGGED + textwrap.dedent("""
        from llama_index.core.tools import FunctionTool

        def pod_status(namespace: str) -> list:
            return core.list_namespaced_pod(namespace)

        tools = [FunctionTool.from_defaults(fn=pod_status)]
    """), DOC + LOGGED + textwrap.dedent("""
        from llama_index.core.tools import FunctionTool

        def pod_status(namespace: str) -> list:
            return core.list_namespaced_pod(namespace)

        tools = [FunctionTool.from_defaults(
            fn=pod_status, description="Phase and restart count of every pod in a namespace.")]
    """)),
    "tool-description-from-yaml": (DOC + LOGGED + textwrap.dedent('''
        import yaml
        from agents import function_tool

        SPEC = yaml.safe_load("""
        tools:
          lookup_vendor:
            description: TBD
        """)

        @function_tool(description_override=SPEC["tools"]["lookup_vendor"]["description"])
        def lookup_vendor(code: str) -> dict:
            return erp.vendor(code)
    '''), DOC + LOGGED + textwrap.dedent('''
        import yaml
        from agents import function_tool

        SPEC = yaml.safe_load("""
        tools:
          lookup_vendor:
            description: Status and payment terms of a vendor in the vendor master.
        """)

        @function_tool(description_override=SPEC["tools"]["lookup_vendor"]["description"])
        def lookup_vendor(code: str) -> dict:
            return erp.vendor(code)
    ''')),
    "agent-texts-from-config-dict": (DOC + LOGGED + textwrap.dedent("""
        from crewai import Agent

        AGENT = {"role": "Agent", "goal": "Do the task", "backstory": "You are a helpful agent."}
        agent = Agent(**AGENT)
    """), DOC + LOGGED + textwrap.dedent("""
        from crewai import Agent

        AGENT = {"role": "Release editor", "goal": "Group merged PRs into release notes",
                 "backstory": "You write crisp notes for engineers in other teams."}
        agent = Agent(**AGENT)
    """)),
    "agent-text-not-written-yet": (DOC + LOGGED + textwrap.dedent("""
        from autogen import AssistantAgent

        a = AssistantAgent("analyst", description="TBD",
                           system_message="Summarise deals by region.")
    """), DOC + LOGGED + textwrap.dedent("""
        from autogen import AssistantAgent

        a = AssistantAgent("analyst", description="Summarises open deals by region.",
                           system_message="You are a helpful assistant.")
    """)),
    "placeholder-agent-names": (DOC + LOGGED + textwrap.dedent("""
        from autogen import AssistantAgent, UserProxyAgent

        a = AssistantAgent("a", system_message="Find risky clauses in supplier contracts.")
        u = UserProxyAgent("agent_2", human_input_mode="ALWAYS")
    """), DOC + LOGGED + textwrap.dedent("""
        from autogen import AssistantAgent, UserProxyAgent

        a = AssistantAgent("clause_reviewer",
                           system_message="Find risky clauses in supplier contracts.")
        u = UserProxyAgent("legal_counsel", human_input_mode="ALWAYS")
    """)),
}


@pytest.mark.parametrize("check", sorted(ART11_CASES))
def test_art11_check_catches_and_spares(check: str) -> None:
    catch, spare = ART11_CASES[check]
    assert _fires(catch, 11), f"{check}: should fire"
    assert not _fires(spare, 11), f"{check}: should stay quiet"


def test_art11_severity_follows_what_the_system_touches() -> None:
    internal = scan_code(LOGGED + DOCUMENTED_TOOL).result(11)
    assert internal.severity == "LOW"
    finance = scan_code('"""Agent definitions are loaded below."""\n' + (
        LOGGED + textwrap.dedent("""
        from agents import function_tool

        @function_tool(description_override="TBD")
        def match_invoice(invoice_number: str) -> dict:
            return erp.match(invoice_number)
    """))).result(11)
    assert not finance.passed and finance.severity == "MEDIUM"


def test_art11_checks_are_documented() -> None:
    checks = " ".join(TechnicalDocumentationRule.checks)
    for word in ("purpose", "tools", "agents and tasks", "severity", "YAML/JSON"):
        assert word in checks


# -- Article 12 ------------------------------------------------------------------------

ACTING_TOOL = """
    from langchain_core.tools import tool

    @tool
    def unlock_account(username: str) -> str:
        '''Unlock a locked directory account.'''
        {before}idm.post("/unlock", json={{"user": username}})
        {after}return "unlocked"
"""


def _tool(after: str = "", before: str = "") -> str:
    return DOC + textwrap.dedent(ACTING_TOOL).format(after=after, before=before)


AUDIT_HELPER = """
class AuditTrail:
    '''Append-only audit file.'''

    def __init__(self, path):
        self._log = logging.getLogger("audit")
        self._log.addHandler(logging.FileHandler(path))

    def record(self, action, **details):
        self._log.info("%s %s", action, details)


audit = AuditTrail("audit.log")
"""

EVENT_TABLE = """
import sqlite3


class Events:
    '''Rows in the agent_events table.'''

    def __init__(self):
        self.db = sqlite3.connect("events.db")

    def append(self, kind, detail):
        self.db.execute("INSERT INTO agent_events VALUES (?, ?)", (kind, detail))


events = Events()
"""

ART12_CASES = {
    "logger-in-tool": (_tool(after="print('done')\n    "),
                       LOGGED + _tool(after="log.info('unlocked %s', username)\n    ")),
    "helper-sink-in-tool": ("import logging\n" + AUDIT_HELPER + _tool()
                            + "audit.record('assistant_started')\n",
                            "import logging\n" + AUDIT_HELPER
                            + _tool(after="audit.record('unlock', user=username)\n    ")),
    "event-table-insert": (EVENT_TABLE + _tool(),
                           EVENT_TABLE + _tool(after="events.append('unlock', username)\n"
                                                     "    ")),
    "registered-callback": (DOC + textwrap.dedent("""
        from langchain_core.callbacks import BaseCallbackHandler, StdOutCallbackHandler

        class Shown(BaseCallbackHandler):
            def on_tool_end(self, output, **kwargs):
                print(output)

        executor = AgentExecutor(agent=a, tools=t, callbacks=[StdOutCallbackHandler(), Shown()])
    """), DOC + textwrap.dedent("""
        import json
        from langchain_core.callbacks import BaseCallbackHandler

        class Journal(BaseCallbackHandler):
            def on_tool_end(self, output, **kwargs):
                with open("journal.jsonl", "a") as fh:
                    fh.write(json.dumps({"output": str(output)}) + "\\n")

        executor = AgentExecutor(agent=a, tools=t, callbacks=[Journal()])
    """)),
    "after-the-run": (DOC + LOGGED + textwrap.dedent("""
        from crewai import Crew

        if __name__ == "__main__":
            log.info("crew starting")
            Crew(agents=[], tasks=[]).kickoff()
    """), DOC + LOGGED + textwrap.dedent("""
        from crewai import Crew

        if __name__ == "__main__":
            out = Crew(agents=[], tasks=[]).kickoff()
            log.info("crew finished: %s", out.raw)
    """)),
    "framework-persistence": (DOC + textwrap.dedent("""
        import autogen

        autogen.runtime_logging.stop()
        proxy.initiate_chat(analyst, message="report")
    """), DOC + textwrap.dedent("""
        import autogen

        autogen.runtime_logging.start(logger_type="sqlite", config={"dbname": "runs.db"})
        proxy.initiate_chat(analyst, message="report")
    """)),
    "level-filters-calls": (DOC + textwrap.dedent("""
        import logging
        from crewai import Crew
        logging.basicConfig(filename="crew.log", level=logging.WARNING)
        log = logging.getLogger("crew")
        out = Crew(agents=[], tasks=[]).kickoff()
        log.info("finished %s", out.raw)
    """), DOC + textwrap.dedent("""
        import logging
        from crewai import Crew
        logging.basicConfig(filename="crew.log", level=logging.INFO)
        log = logging.getLogger("crew")
        out = Crew(agents=[], tasks=[]).kickoff()
        log.info("finished %s", out.raw)
    """)),
    "console-only-logging": (DOC + textwrap.dedent("""
        import logging, sys
        logging.basicConfig(level=logging.INFO, stream=sys.stdout)
        log = logging.getLogger("desk")
    """) + _tool(after="log.info('unlocked %s', username)\n    "), DOC + textwrap.dedent("""
        import logging
        logging.basicConfig(level=logging.INFO, filename="desk.log")
        log = logging.getLogger("desk")
    """) + _tool(after="log.info('unlocked %s', username)\n    ")),
    "record-service": (DOC + "import requests\nNOTIFY_URL = 'https://chat.example/hooks/ops'\n"
                       + _tool(after="requests.post(NOTIFY_URL, json={}, timeout=5)\n    "),
                       DOC + "import requests\nAUDIT_URL = 'https://audit.example/api/events'\n"
                       + _tool(after="requests.post(AUDIT_URL, json={}, timeout=5)\n    ")),
    "append-file-handle": (DOC + "JOURNAL = open('journal.jsonl', 'w')\n"
                           + _tool(after="JOURNAL.write(username)\n    "),
                           DOC + "JOURNAL = open('journal.jsonl', 'a')\n"
                           + _tool(after="JOURNAL.write(username)\n    ")),
    "run-config-callbacks": (DOC + textwrap.dedent("""
        from langchain_core.callbacks import StdOutCallbackHandler

        def answer(question):
            return executor.invoke({"input": question},
                                   config={"callbacks": [StdOutCallbackHandler()]})
    """), DOC + textwrap.dedent("""
        from langfuse.langchain import CallbackHandler

        def answer(question):
            return executor.invoke({"input": question}, config={"callbacks": [CallbackHandler()]})
    """)),
    "run-hooks": (DOC + textwrap.dedent("""
        from agents import RunHooks, Runner

        class Shown(RunHooks):
            async def on_tool_end(self, context, agent, tool, result):
                print(tool.name, result)

        async def ask(question):
            return await Runner.run(agent, question, hooks=Shown())
    """), DOC + textwrap.dedent("""
        import logging
        from agents import RunHooks, Runner
        log = logging.getLogger("desk")

        class Kept(RunHooks):
            async def on_tool_end(self, context, agent, tool, result):
                log.info("tool %s -> %s", tool.name, result)

        async def ask(question):
            return await Runner.run(agent, question, hooks=Kept())
    """)),
}


@pytest.mark.parametrize("check", sorted(ART12_CASES))
def test_art12_check_catches_and_spares(check: str) -> None:
    catch, spare = ART12_CASES[check]
    assert _fires(catch, 12), f"{check}: should fire"
    assert not _fires(spare, 12), f"{check}: should stay quiet"


def test_art12_severity_by_what_goes_unrecorded() -> None:
    acting = scan_code(_tool()).result(12)
    assert not acting.passed and acting.severity == "MEDIUM"
    read_only = scan_code(DOC + textwrap.dedent("""
        from langchain_core.tools import tool

        @tool
        def search_runbooks(query: str) -> str:
            '''Full-text search over the ops runbooks.'''
            return index.search(query)
    """)).result(12)
    assert not read_only.passed and read_only.severity == "LOW"


def test_art12_checks_are_documented() -> None:
    checks = " ".join(RecordKeepingRule.checks)
    for word in ("tool body", "callback", "after the agent's run call", "runtime_logging",
                 "print()", "severity"):
        assert word in checks


def test_art12_a_store_reached_through_a_declared_field_records() -> None:
    code = DOC + EVENT_TABLE + textwrap.dedent("""
        from dataclasses import dataclass
        from agents import RunHooks, Runner

        @dataclass
        class Run:
            run_id: str
            store: Events

        class Steps(RunHooks):
            async def on_tool_end(self, context, agent, tool, result):
                context.context.store.append(tool.name, str(result))

        async def ask(question):
            return await Runner.run(agent, question, context=Run("r1", Events()),
                                    hooks=Steps())
    """)
    assert not _fires(code, 12)
    # The same hook writing to a store of no known class keeps nothing we can see.
    assert _fires(code.replace("store: Events", "store: object").replace(
        "Run(\"r1\", Events())", "Run(\"r1\", object())"), 12)


def test_art12_hooks_dispatched_by_name_from_a_registry_record() -> None:
    code = DOC + EVENT_TABLE + textwrap.dedent("""
        import anthropic

        class StepSink:
            '''Writes each step to the events table.'''

            def on_tool_call(self, name, args):
                events.append(name, str(args))

        HOOKS = [StepSink()]

        def emit(event, *args):
            for hook in HOOKS:
                getattr(hook, event)(*args)

        def answer(question):
            reply = claude.messages.create(model="m", max_tokens=100, messages=[])
            emit("on_tool_call", "search", question)
            return reply
    """)
    assert not _fires(code, 12)
    assert _fires(code.replace("events.append(name, str(args))", "print(name, args)"), 12)


def test_art12_a_request_line_before_an_acting_agent_runs_is_no_record() -> None:
    driver = textwrap.dedent("""
        import asyncio
        import logging
        log = logging.getLogger("desk")

        async def main(question):
            log.info("desk agent started")
            result = await executor.ainvoke({"input": question})
            print(result)

        if __name__ == "__main__":
            asyncio.run(main("unlock bob"))
    """)
    # The tools change the directory: a start line before the run records none of it.
    assert _fires(_tool() + driver, 12)
    # A read-only agent's request line is the record of that request.
    read_only = DOC + textwrap.dedent("""
        from langchain_core.tools import tool

        @tool
        def search_runbooks(query: str) -> str:
            '''Full-text search over the ops runbooks.'''
            return index.search(query)
    """)
    assert not _fires(read_only + driver, 12)
    assert not _fires(_tool() + driver.replace("    print(result)",
                                               "    log.info('answered %s', result)"), 12)
