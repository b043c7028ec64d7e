"""Article 10, data and data governance: personal data is minimised before an agent or a
log sees it.

Record fields that name personal data (contact details, identifiers, special categories
such as health or ethnicity) may only be used when the module also minimises them:
redaction, anonymisation (Presidio), masking, hashing or pseudonymisation.
"""

from __future__ import annotations

from ..base import ArticleResult
from ..facts import CodeFacts, tokens
from ..vocabulary import (
    CONTACT_PII,
    NAME_PII,
    NATIONAL_ID_PARTS,
    PROTECTION_TOKENS,
    SPECIAL_CATEGORY_PII,
)

# Plain variable names are left out: a local called ``email`` is usually a parameter
# already counted, and builtins such as zip() would otherwise look like data fields.
_FIELD_KINDS = frozenset({"attr", "key", "placeholder", "param", "keyword"})


def _classify(identifier: str) -> str | None:
    lowered = identifier.lower()
    words = set(tokens(identifier))
    if words & SPECIAL_CATEGORY_PII or any(part in lowered for part in NATIONAL_ID_PARTS):
        return "special"
    if words & CONTACT_PII:
        return "contact"
    if lowered in NAME_PII:
        return "name"
    return None


def personal_fields(facts: CodeFacts) -> dict[str, list[tuple[str, int]]]:
    """Personal-data identifiers by class (special, contact, name), first use each."""
    found: dict[str, list[tuple[str, int]]] = {"special": [], "contact": [], "name": []}
    seen: set[str] = set()
    for kind, identifier, line in facts.identifiers:
        if kind not in _FIELD_KINDS or identifier in seen:
            continue
        category = _classify(identifier)
        if category is not None:
            seen.add(identifier)
            found[category].append((identifier, line))
    return found


def protections(facts: CodeFacts) -> list[str]:
    """Minimisation mechanisms in the module, as evidence strings."""
    out = [f"import {m}" for m in sorted(facts.imports)
           if PROTECTION_TOKENS & set(tokens(m.replace(".", "_")))]
    for _, identifier, line in facts.identifiers:
        if PROTECTION_TOKENS & set(tokens(identifier)):
            out.append(f"line {line}: {identifier}")
    return out


class DataGovernanceRule:
    """Personal data must be minimised before it reaches a model or a log."""

    article = 10
    title = "Data and data governance"
    checks = (
        "collect record fields naming personal data from attributes, dict keys, template "
        "placeholders, parameters and keyword arguments: special categories and national "
        "identifiers (ssn, diagnosis, ethnicity, national_insurance, ...), contact data "
        "(email, phone, address, date of birth, age, ...) and full names",
        "accept as minimisation: presidio imports, hashlib, and identifiers with redact, "
        "anonymise, mask, pseudonym, scrub or hash tokens",
        "severity: CRITICAL for special categories or national identifiers, HIGH for "
        "contact data, MEDIUM for names only",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        fields = personal_fields(facts)
        if not any(fields.values()):
            return ArticleResult.ok(self.article, "no personal-data fields")
        guards = protections(facts)
        if guards:
            return ArticleResult.ok(self.article, *guards[:5])
        if fields["special"]:
            severity = "CRITICAL"
        elif fields["contact"]:
            severity = "HIGH"
        elif len(fields["name"]) >= 2:
            severity = "MEDIUM"
        else:
            return ArticleResult.ok(self.article, "only a single name field")
        evidence = [f"line {line}: personal data field {identifier!r} ({category})"
                    for category in ("special", "contact", "name")
                    for identifier, line in fields[category]]
        evidence.append("no redaction, anonymisation, masking or pseudonymisation")
        return ArticleResult.violation(self.article, severity, *evidence)
