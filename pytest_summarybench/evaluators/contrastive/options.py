"""The options a contrastive item offers must be told apart by their code: a distractor
whose code is the target's (or another option's), byte for byte or once whitespace is
ignored, makes the right answer a coin toss (two auth classes' identical
``_build_auth_header`` were offered side by side). ``distinct_options`` drops such
distractors from a set however it was selected (``distractors.py``, ``lexical.py``); it is
applied where a set is read, so a set stored by an earlier version is filtered too.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from ..base import EvaluationError
from .distractors import DistractorSet, difficulty

_WHITESPACE = re.compile(r"\s+")


def code_key(code: str) -> str:
    """What two options must differ in: their code without any whitespace."""
    return _WHITESPACE.sub("", code)


def distinct_options(dset: DistractorSet, code_of: Callable[[str], str]) -> DistractorSet:
    """``dset`` without the distractors whose code (whitespace ignored) is the target's or
    an earlier option's; the same set when none is. An ``EvaluationError`` when no
    distractor is left: there is no choice to make."""
    seen = {code_key(code_of(dset.target_id))}
    keep: list[int] = []
    for i, uid in enumerate(dset.distractor_ids):
        key = code_key(code_of(uid))
        if key not in seen:
            seen.add(key)
            keep.append(i)
    if len(keep) == len(dset.distractor_ids):
        return dset
    if not keep:
        raise EvaluationError(f"every distractor of unit {dset.target_id} has the target's "
                              "code: no option can be told apart from it")
    sims = [dset.similarities[i] for i in keep] if dset.similarities else []
    return dataclasses.replace(
        dset, distractor_ids=[dset.distractor_ids[i] for i in keep],
        tiers=[dset.tiers[i] for i in keep], similarities=sims,
        difficulty=difficulty(sims) if sims else dset.difficulty)
