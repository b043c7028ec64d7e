"""Long texts cost what is kept of them: the tokenizer sees a bounded prefix of a long unit,
the pieces (hence the vectors) are those of the whole text cut at the model's budget, and
the static candidate stage tokenizes no more than the model does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_summarybench.embeddings.minilm import MiniLMBackend
from pytest_summarybench.embeddings.static import StaticVectors
from tests.fakes.hostile import long_unit

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "sample_codebase"
#: Characters a text may hand the tokenizer per word piece kept (the prefix's budget).
CHARS_PER_PIECE = 8


class CountingTokenizer:
    """The backend's tokenizer, counting the characters it is handed."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.chars = 0

    def encode_batch(self, texts: list[str], **kwargs: Any) -> Any:
        self.chars += sum(len(t) for t in texts)
        return self.tokenizer.encode_batch(texts, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tokenizer, name)


def kept(backend: MiniLMBackend) -> int:
    return backend.window * backend.max_windows


def whole_pieces(backend: MiniLMBackend, texts: list[str]) -> list[list[int]]:
    """The pieces as they were taken before: the whole text tokenized, then cut."""
    tokenizer, _ = backend.load()
    return [enc.ids[: kept(backend)]
            for enc in tokenizer.encode_batch(texts, add_special_tokens=False)]


@pytest.fixture(scope="module")
def backend() -> MiniLMBackend:
    backend = MiniLMBackend()
    backend.load()
    backend._tokenizer = CountingTokenizer(backend._tokenizer)
    return backend


def counted(backend: MiniLMBackend) -> CountingTokenizer:
    tokenizer = backend._tokenizer
    assert isinstance(tokenizer, CountingTokenizer)
    return tokenizer


def test_a_long_unit_is_tokenized_from_a_bounded_prefix(backend: MiniLMBackend) -> None:
    texts = [long_unit(i) for i in range(4)]
    assert all(len(t) > 190_000 for t in texts)
    expected = whole_pieces(backend, texts)
    counted(backend).chars = 0
    windows, owner = backend.windows(texts)
    # One prefix of at most CHARS_PER_PIECE characters per piece kept, per text.
    assert counted(backend).chars <= len(texts) * CHARS_PER_PIECE * kept(backend)
    assert [sum((w[1:-1] for w, o in zip(windows, owner, strict=True) if o == i), [])
            for i in range(len(texts))] == expected


def test_pieces_match_the_whole_text_on_ordinary_and_awkward_texts(
        backend: MiniLMBackend) -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE.rglob("*"))
             if p.is_file()]
    budget = CHARS_PER_PIECE * kept(backend)
    texts += [
        "x" * (budget + 5000),                     # one word: a single [UNK]
        ("a" * 150 + " ") * 2000,                  # words over the 100-character cap
        "(" * (budget + 10),                       # punctuation, no whitespace
        "\u00e9" * budget + " a b",                # accents stripped by the normaliser
        "word\u00a0" * 10_000,                     # a no-break space is not a cut point
        "\u03a3 " * 20_000,                        # case folding near the cut
        "\u4e2d\u6587" * 9000 + "\n" + "b " * 3000,  # CJK characters split one by one
        "",
    ]
    windows, owner = backend.windows(texts)
    assert [sum((w[1:-1] for w, o in zip(windows, owner, strict=True) if o == i), [])
            for i in range(len(texts))] == whole_pieces(backend, texts)


def test_static_vectors_tokenize_a_bounded_prefix(backend: MiniLMBackend) -> None:
    texts = [long_unit(i) for i in range(3)]
    static = StaticVectors(backend)
    counted(backend).chars = 0
    static.fit(texts)
    static.embed(texts)
    # fit and embed each tokenize every text once, from its bounded prefix.
    assert counted(backend).chars <= 2 * len(texts) * CHARS_PER_PIECE * kept(backend)


def test_a_long_unit_embeds_as_its_first_pieces(backend: MiniLMBackend) -> None:
    text = long_unit(7)
    tokenizer, _ = backend.load()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    ids = whole_pieces(backend, [text])[0]
    expected = [[cls_id, *ids[s:s + backend.window], sep_id]
                for s in range(0, len(ids), backend.window)]
    windows, owner = backend.windows([text])
    assert windows == expected and owner == [0] * backend.max_windows
    assert len(windows) * backend.window == kept(backend)
