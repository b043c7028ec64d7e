"""Article 10, what a personal-data field is called: the class of a record field name.

Generic vocabulary only (GDPR categories and the usual names of contact fields and
identifiers), matched on identifier tokens, so ``sender`` is not ``send``, ``age_band``
(already generalised) is not ``age`` and ``mentions_diagnosis`` (a flag about a text) is
not a diagnosis.
"""

from __future__ import annotations

from ..facts import tokens
from ..vocabulary import CONTACT_PII, NAME_PII, NATIONAL_ID_PARTS, SPECIAL_CATEGORY_PII

SPECIAL_EXTRA = frozenset({"health", "nhs", "clinical", "allergy", "allergies",
                           "medication", "medications", "diagnosis_code", "disabilities",
                           "accommodations", "sickness", "political", "union"})
"""Health and other special-category field words beyond the shared list."""
_ID_OWNERS = frozenset({"account", "card", "policy", "member", "employee", "student",
                        "customer", "patient", "passport", "licence", "license", "tax",
                        "insurance", "membership", "policyholder", "staff"})
_ID_WORDS = frozenset({"number", "no", "num", "nr"})
_NATIONAL = frozenset({"passport", "nhs", "ssn", "insurance"})
_GENERALISED = frozenset({"band", "range", "bucket", "group", "bracket", "year",
                          "decade", "hash", "hashed", "masked", "redacted", "last4",
                          "domain", "area", "district", "region", "country"})
"""Tokens that mark a field as already coarsened (``age_band``, ``email_domain``)."""
_NOT_A_FIELD = frozenset({"client", "service", "sender", "api", "tool", "tools", "template",
                          "queue", "provider", "server", "host", "port", "url", "endpoint",
                          "subject", "body", "count", "enabled", "verified", "status",
                          "type", "format", "channel", "regex", "pattern", "re", "validator",
                          "field", "fields", "column", "columns", "length", "config",
                          "settings", "policy", "prompt", "agent", "task", "smtp",
                          "noreply", "support", "admin", "ops", "alert", "alerts",
                          "helpdesk", "from"})
"""Tokens of names that are objects or settings about a kind of data, not the data
(``email_client``, ``phone_regex``, ``address_fields``)."""
_TEXT_PREDICATES = frozenset({"gives", "contains", "mentions", "includes", "reveals",
                              "suggests", "recommends", "misses", "cites", "asks",
                              "requests", "detects", "exposes", "leaks", "quotes"})
"""Leading verbs of a flag about what a text does (``mentions_diagnosis``,
``contains_email``): the flag is a yes/no about an answer, not the person's data."""
_PERSON_NAME_OWNERS = frozenset({"customer", "patient", "employee", "candidate",
                                 "applicant", "student", "claimant", "policyholder",
                                 "recipient", "member", "tenant", "guest", "contact",
                                 "full", "first", "last", "given", "family", "legal",
                                 "requester", "user", "client", "holder", "cardholder"})


def classify(identifier: str) -> str | None:
    """``special`` (health, special categories, national identifiers), ``contact``
    (contact data, dates of birth, account-type identifiers), ``name`` or None."""
    ordered = tokens(identifier)
    words = set(ordered)
    if not words or words & _GENERALISED or ordered[0] in _TEXT_PREDICATES:
        return None
    if words & _ID_WORDS and words & _ID_OWNERS:  # policy_number, account_no
        return "special" if words & _NATIONAL else "contact"
    if words & _NOT_A_FIELD:
        return None
    lowered = identifier.lower()
    if words & (SPECIAL_CATEGORY_PII | SPECIAL_EXTRA) or lowered in SPECIAL_EXTRA \
            or any(part in lowered for part in NATIONAL_ID_PARTS):
        return "special"
    contact = words & (CONTACT_PII | {"iban", "birthdate", "birthday"})
    if contact == {"age"} and words - {"age"} - _PERSON_NAME_OWNERS:
        return None  # vehicle_age, ticket_age: the age of a thing
    if contact:
        return "contact"
    if lowered in NAME_PII or lowered == "surname" or (
            "name" in words and words & _PERSON_NAME_OWNERS):
        return "name"
    return None
