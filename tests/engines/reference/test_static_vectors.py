"""The static model's vectors composed word by word equal the package's own encoder's."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

static_model = pytest.importorskip("static_model")

from memeval.engines.reference.static_files import Charmap, Unigram, cache_folder  # noqa: E402
from memeval.engines.reference.static_vectors import MAX_TOKENS, StaticVectors  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
MODEL = Path(static_model.__file__).resolve().parent / "model"
TOLERANCE = 1e-5


def native(texts: list[str]) -> list[list[float]]:
    return static_model.encode_batch(str(MODEL), list(texts), MAX_TOKENS)


class Counting:
    """The package's encoder, counting the texts handed to it."""

    def __init__(self) -> None:
        self.texts = 0

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.texts += len(texts)
        return native(texts)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder shared by the module's engines (the first one parses the vocabulary)."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def vectors(models: Path) -> StaticVectors:
    return StaticVectors(MODEL, models, native)


def assert_same(vectors: StaticVectors, texts: list[str]) -> None:
    ours = vectors.embed(texts)
    theirs = np.asarray(native(texts), dtype=np.float32)
    worst = np.abs(ours - theirs).max(axis=1)
    bad = [(texts[i][:60], float(worst[i])) for i in np.flatnonzero(worst > TOLERANCE)]
    assert not bad, bad


def test_the_benchmark_corpus_and_the_suites_texts(vectors: StaticVectors) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_reference import Corpus
    finally:
        sys.path.pop(0)
    corpus = Corpus()
    texts = [corpus.sentence() for _ in range(500)]
    for spec in sorted((ROOT / "specs").glob("**/*.yaml")) + sorted((ROOT / "tests/fixtures/heldout").glob("*.yaml")):
        texts += [line.strip() for line in spec.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(texts) > 1500
    assert_same(vectors, texts)


def test_random_ascii_with_tabs_and_line_breaks(vectors: StaticVectors) -> None:
    rng = random.Random(3)
    alphabet = [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n", "\r", "\r\n"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(2000)]
    assert_same(vectors, texts)


def test_unknown_pieces_fuse_as_the_tokenizer_fuses_them(vectors: StaticVectors) -> None:
    # "." holds the tokenizer's unknown id, so "a.." is two tokens, not three.
    assert_same(vectors, ["a..", "=../", "x..y..z", "a....", "..", "../memeval"])
    assert len(vectors.tokens("a..")) == 2


def test_unicode_text_is_composed_where_each_character_is_a_grapheme(models: Path) -> None:
    counting = Counting()
    vectors = StaticVectors(MODEL, models, counting)
    rng = random.Random(7)
    pieces = "— … “ ” ’ – é ü ß Æ ﬁ ² ½ Ｆｕｌｌ \u00a0 \u3000 日本語 한국어 😀 € © ™ ① ｱ".split(" ")
    texts = [" ".join(rng.choice(pieces) + rng.choice(["", "deploy", "x"]) for _ in range(rng.randint(1, 12)))
             for _ in range(500)]
    assert_same(vectors, texts)
    assert counting.texts == 0


def test_text_with_combining_marks_goes_to_the_package_encoder(models: Path) -> None:
    counting = Counting()
    vectors = StaticVectors(MODEL, models, counting)
    texts = ["cafe\u0301 au lait", "\U0001f1eb\U0001f1f7 flag", "family \U0001f468\u200d\U0001f469", "plain words"]
    assert_same(vectors, texts)
    assert counting.texts == 3


def test_long_texts_stop_at_the_token_limit(vectors: StaticVectors) -> None:
    rng = random.Random(5)
    words = ["alpha", "beta", "gamma", "delta", "kappa", "omega"]
    long = " ".join(rng.choice(words) + str(rng.randint(0, 99)) for _ in range(400))
    assert_same(vectors, [long, long + " ü" * 10, "short"])


def test_texts_without_tokens_are_the_zero_vector(vectors: StaticVectors) -> None:
    assert not vectors.embed(["", "   ", "\n\t"]).any()
    assert vectors.embed([]).shape == (0, vectors.dim)


def test_the_vocabulary_is_cached_and_a_broken_cache_is_rewritten(tmp_path: Path) -> None:
    first = Unigram(MODEL / "tokenizer.json", tmp_path)
    [stored] = tmp_path.iterdir()
    again = Unigram(MODEL / "tokenizer.json", tmp_path)
    assert again.ids == first.ids and again.unk == first.unk and again.longest == first.longest
    assert np.array_equal(again.scores, first.scores)
    pieces = [piece for piece, _ in json.loads((MODEL / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]]
    sample = random.Random(3).sample(range(len(pieces)), 3000)
    assert all(again.find(pieces[tid]) == tid for tid in sample)
    whole = stored.read_bytes()
    stored.write_bytes(whole[:-7])
    broken = Unigram(MODEL / "tokenizer.json", tmp_path)
    assert all(broken.find(pieces[tid]) == tid for tid in sample)
    assert broken.find("\u2581not-a-piece-\u00e9\u00e9\u00e9") is None and broken.find("") is None
    assert stored.read_bytes() == whole


def test_an_unwritable_cache_folder_only_means_no_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert Unigram(MODEL / "tokenizer.json", blocker / "models").ids


def test_the_charmap_applies_nfkc_to_single_characters(vectors: StaticVectors) -> None:
    charmap: Charmap = vectors._model.charmap
    assert charmap.get("Ｆ") == "F" and charmap.get("ﬁ") == "fi" and charmap.get("x") == "x"


def test_the_cache_folder_follows_xdg_then_home() -> None:
    assert cache_folder({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/c/memeval/models")
    assert cache_folder({"HOME": "/h"}) == Path("/h/.cache/memeval/models")
