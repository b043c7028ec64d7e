"""Article 10, data and data governance: personal data is minimised before an agent, a log
or a dataset sees it.

The checks read where values go (see ``art10_flow``; field names are classed by
``art10_fields``):

* a personal-data field read from a record (contact data, identifiers, special
  categories; a name, address, location or bare health only alongside another personal
  field) reaches a model call, a prompt being built, a prompt template, an agent tool's
  result, a log call, a file, dataset, trace span or retrieval index, with no minimisation call
  (redact, mask, pseudonymise, hash, allow-list, or a module function whose result is an
  allow-listed projection, itself or through its decorator's wrapper) on the way (a
  placeholder the code fills into the model's text afterwards is not in the prompt);
* a whole person record fetched raw (``.json()``, ``fetchone()``, ``get_customer()``)
  reaches such a sink, or an agent tool about a person returns it; a raw record the code
  itself hands to a minimisation helper holds personal data by the code's own account,
  so it leaks whole wherever it is handed over raw;
* a minimisation helper (a function named redact/mask/pseudonymise/scrub/...) is
  defined in a module that handles personal fields, but nothing calls or registers it
  and no other minimisation helper is applied.
"""

from __future__ import annotations

import re

from ..base import ArticleResult
from ..facts import CodeFacts, tokens
from ..flow import is_used
from ..values import module_values
from ..vocabulary import PROTECTION_TOKENS
from .art10_fields import classify
from .art10_flow import WHOLE_RECORD, Leak, leaks, template_leaks

_WEAK_FIELDS = frozenset({"name", "address", "location", "health"})
"""Fields that also describe shops, clinics, offices and services (a deployment's
``health``): a leak needs one more."""
_SEVERITY = {"special": "CRITICAL", "contact": "HIGH", "name": "MEDIUM"}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,40}")
_HELPER_TOKENS = PROTECTION_TOKENS - {"hash", "hashlib", "sha256"}


def _severity(fields: set[str]) -> str:
    classes = {classify(f) for f in fields} - {None}
    if WHOLE_RECORD in fields:
        classes.add("contact")  # a whole person record carries contact data at least
    for category in ("special", "contact", "name"):
        if category in classes:
            return _SEVERITY[category]
    return "HIGH"


def _module_fields(facts: CodeFacts) -> set[str]:
    """Personal field names anywhere the module names record fields, including the
    column lists of SQL and configuration text."""
    found = {i for kind, i, _ in facts.identifiers
             if kind in ("attr", "key", "placeholder", "param", "keyword") and classify(i)}
    for text, _line in facts.strings:
        if text.isidentifier():  # a field name written as a string: ("email", "phone")
            if classify(text):
                found.add(text)
            continue
        found.update(w for w in _WORD.findall(text) if "_" in w and classify(w))
    for fields in module_values(facts).class_fields.values():
        found.update(f for f in fields if classify(f))
    return found


def unapplied_minimisers(facts: CodeFacts) -> tuple[list[str], list[str]]:
    """(minimisation helpers never called, minimisation helpers called)."""
    unused, used = [], []
    for function in facts.functions.values():
        if not _HELPER_TOKENS & set(tokens(function.name)):
            continue
        if is_used(facts, function.name):
            used.append(function.name)
        else:
            unused.append(f"line {function.line}: {function.name}() is defined but "
                          f"never applied")
    return unused, used


class DataGovernanceRule:
    """Personal data must be minimised before it reaches a model, a log or a dataset."""

    article = 10
    title = "Data and data governance"
    checks = (
        "leak: a personal-data field read from a record (row['email'], rec.get('dob'), "
        "patient.nhs_number, asdict()/model_dump() of a value named after a record class "
        "declaring such fields, a projection over a JSON/YAML/constant field list naming "
        "them, or a local assigned from any of these) reaches a model call, a prompt being "
        "built, an agent tool's result, a log call, a file/dataset write or a trace span "
        "with no redact/mask/pseudonymise/hash/allow-list call on the way (a module "
        "function returning an allow-listed projection, or wrapped by a decorator whose "
        "wrapper does, is one); the reply of a service a payload is posted or sent to "
        "(post/put/patch/send/publish/upload/submit, also as a word of the method name: "
        "chat_postMessage) does not carry the payload; a comprehension carries what its "
        "elements read of each item ([r['label'] for r in rows] is no whole record)",
        "not records: settings (os.environ, ALL_CAPS, dict constants, config objects), an "
        "organisation's contact data (supplier, clinic, carrier, ...), object names "
        "(email_client, phone_regex), coarsened fields (age_band), flags about what a text "
        "does (mentions_diagnosis) and the age of things; "
        "a bare name, address, location or health (also the state of a service) counts "
        "only beside another personal field",
        "template: a prompt template (task description, instructions, PromptTemplate, "
        "template=) whose {placeholders} name personal fields; a placeholder the code "
        "fills into the model's text afterwards (.replace('{first_name}', ...)) and "
        "never formats into a prompt (no such keyword or dict key) is not one",
        "index: personal fields put into a retrieval index (Document, TextNode, "
        "from_texts, add_documents) count as reaching the model",
        "raw record: a person record fetched whole (.json(), fetchone(), get_customer(), "
        "load_patient(); the person read from the local's name, the loader's name or the "
        "URL/table) reaches a sink, or an agent tool about a person (its name, URL or "
        "SQL) returns the fetched record unprojected; a raw record the same code passes "
        "to a minimisation helper counts as a person record wherever it goes raw",
        "unapplied helper: a redact/mask/pseudonymise/scrub/anonymise function is defined "
        "in a module that names personal fields, but nothing calls or registers it and no "
        "other minimisation helper is applied",
        "severity: CRITICAL for special categories and national identifiers (health, "
        "ethnicity, NHS/passport/insurance numbers), HIGH for contact data, dates of birth, "
        "account-type identifiers and whole person records, MEDIUM for names only",
    )

    def check(self, facts: CodeFacts) -> ArticleResult:
        values = module_values(facts)
        found: list[Leak] = [leak for leak in (*leaks(facts, values),
                                               *template_leaks(facts, values))
                             if set(leak.fields) - _WEAK_FIELDS]
        unused, used = unapplied_minimisers(facts)
        module_fields = _module_fields(facts) if unused and not used else set()
        if found:
            fields = {f for leak in found for f in leak.fields}
            if WHOLE_RECORD in fields:
                fields |= _module_fields(facts)
            evidence = [f"line {leak.line}: {', '.join(leak.fields)} -> {leak.sink}"
                        for leak in found[:5]]
            return ArticleResult.violation(self.article, _severity(fields), *evidence,
                                           *unused)
        if module_fields:
            return ArticleResult.violation(
                self.article, _severity(module_fields), *unused,
                f"personal fields handled: {', '.join(sorted(module_fields)[:6])}")
        return ArticleResult.ok(self.article, *(f"{name}() applied" for name in used),
                                "no personal field reaches a model, log or file "
                                "unminimised")
