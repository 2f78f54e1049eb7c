"""The sentence model itself: its files are the ones pinned, it tokenizes as BERT does, its
vectors agree with the upstream fp32 model's, and a process runs the session that suits it."""

from __future__ import annotations

import hashlib

import pytest

from ctx.meaning import model as meaning_model

# Ids of the upstream tokenizer (sentence-transformers/all-MiniLM-L6-v2's tokenizer.json)
UPSTREAM_IDS = {
    "Uploads over 50 MB fail at 30 s: nginx proxy_read_timeout":
        [101, 2039, 11066, 2015, 2058, 2753, 16914, 8246, 2012, 2382, 1055, 1024, 12835, 2378, 2595, 24540, 1035,
         3191, 1035, 2051, 5833, 102],
    "Crème brûlée, naïve café": [101, 13675, 21382, 7987, 9307, 2063, 1010, 15743, 7668, 102],
}

# Cosines of the upstream fp32 weights (model.safetensors, a numpy forward pass: mean of the
# last layer over the tokens, normalized), which the int8 model must stay near
PAIRS = [
    ("A man is eating food.", "A man is eating a piece of bread.", 0.7553),
    ("Uploads over 50 MB fail at 30 s: nginx proxy_read_timeout", "why do big file transfers break", 0.4618),
    ("Uploads over 50 MB fail at 30 s: nginx proxy_read_timeout", "xyzzy plugh", -0.0157),
    ("A man is eating food.", "xyzzy plugh", -0.0904),
]


def test_the_vocabulary_is_rebuilt_byte_for_byte_and_texts_split_as_upstream(embedder):
    words = meaning_model.vocabulary(meaning_model.package_file(*meaning_model.I2W))
    assert hashlib.sha256(("\n".join(words) + "\n").encode()).hexdigest() == meaning_model.VOCAB_SHA256
    assert words[101] == "[CLS]" and words[2015] == "##s"
    for text, ids in UPSTREAM_IDS.items():
        assert embedder._tokenizer.encode(text).ids == ids
    long = embedder._tokenizer.encode("word " * 400).ids
    assert len(long) == meaning_model.MAX_TOKENS and long[-1] == 102


def test_the_int8_vectors_agree_with_the_upstream_weights(embedder):
    for first, second, upstream in PAIRS:
        a, b = embedder.embed([first, second])
        assert abs(float(a @ b) - upstream) < 0.01, (first, second, float(a @ b))
    vectors = embedder.embed(["one", "two words", "a longer text of several words"])
    assert vectors.shape == (3, 384) and abs(float((vectors ** 2).sum(axis=1).min()) - 1) < 1e-4
    alone = embedder.embed(["a longer text of several words"])[0]
    assert float(alone @ vectors[2]) > 0.9999  # padding in a batch changes nothing


def test_a_file_not_the_one_pinned_loads_no_model_and_says_so(monkeypatch):
    pinned = dict(meaning_model.PINNED)
    monkeypatch.setattr(meaning_model, "_why", [])
    monkeypatch.setattr(meaning_model, "PINNED", {**pinned, meaning_model.ONNX: "0" * 64})
    assert meaning_model.load() is None
    assert "not the ones expected (model.onnx)" in meaning_model.why_not()
    monkeypatch.setattr(meaning_model, "_why", [])
    monkeypatch.setattr(meaning_model, "VOCAB_SHA256", "0" * 64)
    monkeypatch.setattr(meaning_model, "PINNED", pinned)
    assert meaning_model.load() is None and "vocabulary" in meaning_model.why_not()


def test_without_the_packages_there_is_no_model_and_the_notice_says_what_the_extra_adds(monkeypatch):
    monkeypatch.setattr(meaning_model, "_why", [])
    monkeypatch.setattr(meaning_model, "ONNX", ("no_such_package_here", "model.onnx"))
    assert meaning_model.load() is None and meaning_model.why_not() == meaning_model.WHAT_IT_ADDS


@pytest.mark.slow
def test_a_first_query_runs_unoptimized_and_a_second_call_or_a_build_optimizes_once():
    found = meaning_model.load()
    if found is None:
        pytest.skip("the semantic extra is not installed")
    assert found._session is None and found._quick is None
    found.embed(["one query"])
    assert found._quick is not None and found._session is None
    found.embed(["a second query"])
    optimized = found._session
    assert optimized is not None and found._quick is None
    found.embed(["a third"])
    assert found._session is optimized
    building = meaning_model.load()
    assert building is not None
    building.embed([f"text {i}" for i in range(meaning_model.QUICK + 1)])
    assert building._session is not None and building._quick is None
