"""What the report quotes of external validity as measured offline
(``benchmarks/validity/``, docs/validity.md "External validity"): how each family's
ordering of summarizers agreed with retrieval by real, human-labelled developer queries.
The figures live in ``external.json`` next to this module, ``{"<family or evaluator>":
{"dataset", "tau_docstrings", "tau_stripped", "validated", "doc"}}``; the report quotes
them for each family that scored the ladder. A family or evaluator the file does not name
(or no file) is "not externally validated": nothing is ever estimated in its place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..schemas.report import ExternalValidity, RankingBasis

#: Where the measured figures are shipped.
EXTERNAL_PATH = Path(__file__).with_name("external.json")
#: The fields of an entry the report quotes.
FIELDS = ("dataset", "tau_docstrings", "tau_stripped", "validated", "doc")
#: A larger file is not the small table this module expects.
MAX_BYTES = 1_000_000


def load_external(path: Path | None = None) -> dict[str, ExternalValidity]:
    """The figures by family or evaluator name in ``path`` (default ``EXTERNAL_PATH``);
    empty when the file is missing. Only the documented fields of an entry are read (the
    measuring scripts record more: the ceiling, per-set figures), bounded and validated;
    an entry without them is left out (it cannot be quoted)."""
    from pydantic import ValidationError

    path = EXTERNAL_PATH if path is None else path
    try:
        if path.stat().st_size > MAX_BYTES:
            return {}
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(data, Mapping):
        return {}
    out: dict[str, ExternalValidity] = {}
    for name, entry in data.items():
        if not isinstance(entry, Mapping):
            continue
        # Only the documented fields: the measuring scripts may record more.
        known = {k: entry[k] for k in FIELDS if k in entry}
        try:
            out[str(name)] = ExternalValidity.model_validate({**known, "name": str(name)})
        except ValidationError:
            continue
    return out


def external_for(family: str, evaluators: Iterable[str],
                 table: Mapping[str, ExternalValidity]) -> list[ExternalValidity]:
    """The figures that apply to ``family`` as it ran: those of each evaluator of it that
    ran, in name order, else the family's own entry (empty: not externally validated)."""
    found = [table[name] for name in sorted(set(evaluators)) if name in table]
    if found:
        return found
    return [table[family]] if family in table else []


def quote_basis(basis: RankingBasis, table: Mapping[str, ExternalValidity] | None = None
                ) -> RankingBasis:
    """``basis`` with the external figures of the evaluators the ranking rests on (per
    family, as ``external_for`` picks them; ``table``: default ``external.json``'s)."""
    table = load_external() if table is None else table
    found: list[ExternalValidity] = []
    for family in basis.families:
        mine = [e for e in basis.evaluators if e.split("/", 1)[0] == family]
        found += [e for e in external_for(family, mine, table) if e not in found]
    basis.external = found
    return basis
