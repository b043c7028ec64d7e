"""How close a completion is to the original: the lexical half of CodeBLEU.

CodeBLEU (Ren et al., 2020) averages four parts: BLEU over code tokens, a keyword-
weighted unigram match, an AST subtree match and a data-flow match. summarybench computes
the first two, which need no parser per language, and averages them with equal weight:

    similarity = 0.5 * BLEU-4 + 0.5 * weighted unigram match

over tokens with comments and docstrings removed (a completion is not rewarded for
copying prose). BLEU-4 is the geometric mean of modified 1- to 4-gram precisions with
add-one smoothing for orders above 1 (Lin and Och's smoothing 2) and the brevity
penalty; the weighted unigram match is the clipped unigram precision where language
keywords weigh 1.0 and every other token 0.2 (CodeBLEU's weights), times the same
brevity penalty. Both are 0 for an empty candidate and 1 for a token-identical one.
"""

from __future__ import annotations

import io
import keyword
import math
import re
import tokenize
from collections import Counter
from collections.abc import Sequence

#: Keywords of the languages the extractor knows, beyond Python's own.
_KEYWORDS = frozenset(keyword.kwlist) | frozenset("""
    abstract async await boolean break case catch chan class const continue default defer
    delete do else enum export extends false final finally fn for func function go goto if
    impl implements import in instanceof interface internal let loop match mod mut namespace
    new nil null override package private protected pub public readonly return select self
    static struct super switch this throw throws trait true try type typeof union unsafe use
    val var void when where while yield
""".split())
KEYWORD_WEIGHT = 1.0
OTHER_WEIGHT = 0.2
_GENERIC_TOKEN = re.compile(
    r"""[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|"""
    r"""`[^`]*`|==|!=|<=|>=|->|=>|&&|\|\||::|\+\+|--|[^\sA-Za-z0-9_]""")
_C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/|#[^\n]*", re.S)


def code_tokens(code: str, language: str = "python") -> list[str]:
    """The code's tokens without comments, docstrings and layout."""
    if language == "python":
        tokens = _python_tokens(code)
        if tokens is not None:
            return tokens
    return _GENERIC_TOKEN.findall(_C_COMMENTS.sub(" ", code))


def _python_tokens(code: str) -> list[str] | None:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    out: list[str] = []
    previous = tokenize.NEWLINE
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            # A string that is a whole statement (a docstring) is prose, not code.
            if tok.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT,
                                                            tokenize.DEDENT, tokenize.NL):
                previous = tokenize.STRING
                continue
            if tok.type not in skip:
                out.append(tok.string)
            if tok.type not in (tokenize.COMMENT,):
                previous = tok.type
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return out


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def brevity_penalty(candidate_len: int, reference_len: int) -> float:
    if candidate_len == 0:
        return 0.0
    if candidate_len >= reference_len:
        return 1.0
    return math.exp(1 - reference_len / candidate_len)


def bleu(candidate: Sequence[str], reference: Sequence[str], max_n: int = 4) -> float:
    """Sentence BLEU with add-one smoothing for n > 1 (see the module doc)."""
    if not candidate or not reference:
        return 0.0
    log_sum = 0.0
    for n in range(1, max_n + 1):
        cand = _ngrams(candidate, n)
        ref = _ngrams(reference, n)
        matches = sum(min(count, ref[gram]) for gram, count in cand.items())
        total = sum(cand.values())
        if n == 1:
            if matches == 0:
                return 0.0
            precision = matches / total
        else:
            precision = (matches + 1) / (total + 1)
        log_sum += math.log(precision) / max_n
    return brevity_penalty(len(candidate), len(reference)) * math.exp(log_sum)


def weighted_unigram_match(candidate: Sequence[str], reference: Sequence[str]) -> float:
    """Clipped unigram precision with keywords weighted 1.0 and other tokens 0.2."""
    if not candidate or not reference:
        return 0.0
    ref = Counter(reference)
    cand = Counter(candidate)

    def weight(tok: str) -> float:
        return KEYWORD_WEIGHT if tok in _KEYWORDS else OTHER_WEIGHT

    matched = sum(weight(t) * min(c, ref[t]) for t, c in cand.items())
    total = sum(weight(t) * c for t, c in cand.items())
    return brevity_penalty(len(candidate), len(reference)) * matched / total


def code_similarity(candidate: str, reference: str, language: str = "python") -> float:
    """``0.5 * BLEU-4 + 0.5 * weighted unigram match`` over code tokens, in [0, 1]."""
    cand = code_tokens(candidate, language)
    ref = code_tokens(reference, language)
    return round(0.5 * bleu(cand, ref) + 0.5 * weighted_unigram_match(cand, ref), 6)


def exact_match(candidate: str, reference: str, language: str = "python") -> bool:
    """Token-identical once comments, docstrings and layout are ignored."""
    return code_tokens(candidate, language) == code_tokens(reference, language)
