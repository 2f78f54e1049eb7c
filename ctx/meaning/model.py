"""The embedding model, behind one small interface so a stronger local model can replace it.

An ``Embedder`` turns texts into unit vectors (float32, ``dim`` wide); ``name`` says
which model made a vector, so vectors of another model are never compared with its
own. ``load()`` gives the one this installation has, or None without the extra
(``pip install 'ctx-memory[semantic]'``).

The model today is WordLlama's 256-dimension "l2_supercat" (MIT): a token embedding
table taken from a large language model and trained so that the mean of a text's
token vectors places texts of like meaning close together. Its weights (16 MB) and
tokenizer ship inside the ``wordllama`` wheel, so nothing is downloaded at run time.
The two files are read here directly (with ``tokenizers`` and ``safetensors``)
rather than through ``WordLlama.load``: version 0.4.0.post1 looks for the tokenizer
under ``tokenizer/`` while its wheel ships ``tokenizers/`` (and would then try to
download it), and importing the package loads far more than two files need.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    import numpy as np

    class Embedder(Protocol):
        name: str     # which model made a vector (part of its key in the index)
        dim: int      # the width of its vectors
        related: float  # a query sharing no word with any entry finds nothing unless one is this near
        near: float     # the cosine below which an entry sharing no word with the query is not listed

        def embed(self, texts: list[str]) -> np.ndarray:
            """One unit vector (float32) per text, a row each."""
            ...

EXTRA = "pip install 'ctx-memory[semantic]'"
WHAT_IT_ADDS = (f"ctx: --semantic ranks by words only here; {EXTRA} adds ranking by meaning "
                "(finds entries asked about in other words), offline")

_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


class WordLlama:
    """WordLlama l2_supercat, 256 dimensions: the mean of the text's token vectors, normalized."""

    name = "wordllama-l2_supercat-256"
    dim = 256
    # Measured on the evaluation set (tests/recall/): nonsense queries ("xyzzy plugh") come within
    # 0.16-0.22 of their nearest entry; questions asked in other words within 0.15-0.54 of their
    # nearest and 0.01-0.38 of their answer. A query that shares no word with any entry finds
    # nothing unless some entry is ``related`` (on the set, this loses no answer found in the top 5
    # and finds nothing for nonsense); once it finds something, every entry at least ``near`` ranks.
    related = 0.25
    near = 0.1

    def __init__(self, folder: Path) -> None:
        import os
        # one thread for numpy's BLAS: a product of one vector by every entry's is short, and
        # BLAS threads waiting for cores others hold make it many times longer (bench/recall.py)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        self._np = np
        self._table = load_file(str(folder / _WEIGHTS))["embedding.weight"]  # float16: rows widen as read
        self._tokenizer = Tokenizer.from_file(str(folder / _TOKENIZER))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()

    def embed(self, texts: list[str]) -> np.ndarray:
        np = self._np
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encoded = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        last = self._table.shape[0] - 1
        for row, enc in enumerate(encoded):
            if enc.ids:
                ids = np.minimum(np.asarray(enc.ids, dtype=np.int64), last)
                out[row] = self._table[ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def wordllama_folder() -> Path | None:
    """Where the ``wordllama`` package's files are (without importing it), or None."""
    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent
    return folder if (folder / _WEIGHTS).is_file() and (folder / _TOKENIZER).is_file() else None


_loaded: list[Embedder | None] = []
_noticed: list[bool] = []


def shared() -> Embedder | None:
    """``load()``, once a process: a server keeps the model it loaded."""
    if not _loaded:
        _loaded.append(load())
    return _loaded[0]


def first_notice() -> bool:
    """True the first time a process asks (so it says once what the extra adds)."""
    if _noticed:
        return False
    _noticed.append(True)
    return True


def load() -> Embedder | None:
    """The model this installation has (None without the extra)."""
    folder = wordllama_folder()
    if folder is None:
        return None
    try:
        return WordLlama(folder)
    except ImportError:  # numpy, tokenizers or safetensors missing: the extra is half there
        return None
