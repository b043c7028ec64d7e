"""Word lists shared by the rule sets: what an action, a limit or personal data is called
in agent code. Matching is on identifier tokens (``send_invoice`` -> send, invoice), never
on substrings, so ``sender`` is not ``send`` and ``address_book`` is not an address field
unless the token ``address`` appears."""

from __future__ import annotations

FINANCIAL_ACTIONS = frozenset({
    "pay", "refund", "transfer", "wire", "charge", "book", "withdraw", "deposit", "trade",
    "buy", "sell", "freeze", "disburse", "place",
})
"""Verbs of actions that move money or block access to it."""
FINANCIAL_NOUNS = frozenset({
    "payment", "payout", "refund", "invoice", "credit", "debit", "payroll", "salary",
    "card", "sepa", "iban", "amount", "eur", "usd", "gbp", "price", "order", "trade",
    "transfer", "loan", "balance",
})
"""Tokens that put an action in the financial domain."""
IRREVERSIBLE_ACTIONS = frozenset({
    "delete", "remove", "purge", "drop", "destroy", "wipe", "truncate", "terminate",
    "revoke", "shutdown", "kill", "erase",
})
COMMUNICATION_ACTIONS = frozenset({
    "send", "email", "mail", "notify", "post", "publish", "tweet", "message", "sms", "reply",
})
ACCOUNT_ACTIONS = frozenset({
    "ban", "suspend", "block", "grant", "deploy", "release", "change", "update", "submit",
    "issue", "approve", "cancel", "close", "modify", "schedule",
})
SIDE_EFFECT_ACTIONS = FINANCIAL_ACTIONS | IRREVERSIBLE_ACTIONS | COMMUNICATION_ACTIONS \
    | ACCOUNT_ACTIONS
READ_ONLY_PREFIXES = frozenset({"get", "list", "read", "fetch", "search", "lookup", "find",
                                "load", "query", "check", "status", "count", "describe"})

SIDE_EFFECT_TOOL_CLASSES = frozenset({
    "ShellTool", "GmailSendMessage", "SlackSendMessage", "O365SendMessage",
    "TwilioAPIWrapper", "RequestsPostTool", "RequestsDeleteTool", "RequestsPutTool",
    "RequestsPatchTool", "FileManagementToolkit", "DeleteFileTool", "MoveFileTool",
})

APPROVAL_TOKENS = frozenset({"approve", "approval", "approved", "confirm", "confirmation",
                             "signoff"})

LIMIT_KEYWORDS = frozenset({
    "max_iterations", "max_iter", "max_turns", "max_round", "max_rounds", "max_steps",
    "max_consecutive_auto_reply", "recursion_limit", "max_execution_time", "max_rpm",
    "max_retries_per_turn", "max_agent_steps",
})
UNBOUNDED_AT = 100
"""An iteration/turn limit at or above this is treated as no limit."""

SPECIAL_CATEGORY_PII = frozenset({
    "ssn", "diagnosis", "diagnoses", "medical", "ethnicity", "ethnic", "race", "religion",
    "religious", "biometric", "passport", "sexual", "orientation", "disability", "criminal",
    "genetic", "nationality",
})
"""Special-category data (GDPR art. 9) and national identifiers."""
NATIONAL_ID_PARTS = ("national_insurance", "social_security", "tax_id", "ni_number")
CONTACT_PII = frozenset({
    "email", "phone", "mobile", "address", "street", "postcode", "birth", "dob", "salary",
    "age", "gender", "marital", "surname",
})
NAME_PII = frozenset({"full_name", "first_name", "last_name", "recipient_name",
                      "employee_name", "customer_name", "patient_name", "name"})
PROTECTION_TOKENS = frozenset({
    "redact", "redacted", "anonymize", "anonymise", "anonymizer", "anonymiser",
    "anonymized", "anonymised", "pseudonym", "pseudonymize", "pseudonymise", "mask",
    "masked", "scrub", "deidentify", "hash", "hashlib", "sha256", "presidio", "minimize",
    "minimise", "tokenize_pii",
})

LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception",
                            "critical", "log", "msg"})
AGENT_FRAMEWORKS = ("langchain", "langchain_core", "langchain_community", "langchain_openai",
                    "langgraph", "autogen", "autogen_agentchat", "crewai", "crewai_tools",
                    "llama_index", "smolagents", "agents", "pydantic_ai", "openai",
                    "anthropic", "semantic_kernel", "haystack")
DECISION_DOMAIN_WORDS = ("claim", "contract", "legal", "customer", "patient", "loan",
                         "credit", "applicant", "candidate", "insurance", "tenant", "student",
                         "reply", "replies")
"""Stems marking code whose output affects decisions about people or their contracts."""
