"""The numpy MiniLM encoder equals sentence-transformers, and encoding imports no torch."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

from tests.conftest import run_python_ok
from tutor.teacher import minilm

HAVE_REFERENCE = all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers"))

LONG_PROSE = (
    "FlashAttention computes exact attention in tiles that fit in shared memory, so the full attention "
    "matrix never travels through HBM; the softmax is rescaled online as each tile of keys arrives. "
) * 12
TEXTS = [
    "?",
    "",
    "   ",
    "a",
    "Why does my kernel spill to local memory?",
    "How does a paged KV cache reduce memory fragmentation?",
    "What is the roofline model, and where does arithmetic intensity come in?",
    "When should I NOT fuse two kernels?",
    "kernel fusion",
    "Tensor cores: FP16 × FP16 → FP32 accumulate (≈ 989 TFLOP/s dense on H100).",
    "Ünïcödé naïve café — résumé, Straße, ÅÄÖ",
    "日本語の文章も埋め込めますか？ 中文也可以吗？",
    "emoji 🚀🔥 and math ∑ᵢ xᵢ² ≤ ∞",
    "Quantization: int8 weights, bf16 activations; per-channel scales.",
    "The quick brown fox jumps over the lazy dog.",
    "def matmul(a, b):\n    return [[sum(x * y for x, y in zip(r, c)) for c in zip(*b)] for r in a]",
    "   leading and trailing whitespace, and\ttabs\tand\nnewlines   ",
    "GPU " * 300,
    LONG_PROSE,
    "continuous batching speculative decoding prefix caching chunked prefill " * 40,
]


def test_long_texts_are_truncated_at_the_models_max_seq_length():
    model = minilm.load()
    assert model.max_seq_length == 256
    lengths = [sum(e.attention_mask) for e in model.tokenizer.encode_batch(TEXTS)]
    assert lengths[TEXTS.index(LONG_PROSE)] == 256  # > 256 before truncation: the test set exercises it
    assert sum(n == 256 for n in lengths) == 3
    assert lengths[0] == 3  # [CLS] ? [SEP]


def test_encode_shape_dtype_norm_and_order():
    vecs = minilm.encode(TEXTS, batch_size=4)  # several batches, sorted by length inside
    assert vecs.shape == (len(TEXTS), minilm.DIM) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    one_by_one = np.stack([minilm.encode([t])[0] for t in TEXTS])
    np.testing.assert_allclose(vecs, one_by_one, atol=1e-5)  # padding and batching change nothing
    assert minilm.encode([]).shape == (0, minilm.DIM)


def test_bert_prefixed_weight_names_load_the_same(tmp_path):
    from safetensors.numpy import load_file, save_file

    src = minilm.model_path()
    for item in src.iterdir():
        if item.name != "model.safetensors":
            (tmp_path / item.name).symlink_to(item)
    save_file(
        {"bert." + k: v for k, v in load_file(str(src / "model.safetensors")).items()}, tmp_path / "model.safetensors"
    )
    a, b = minilm.load(), minilm._load(tmp_path)
    assert np.array_equal(a.word_emb, b.word_emb)
    for la, lb in zip(a.layers, b.layers, strict=True):
        assert np.array_equal(la.qkv_w, lb.qkv_w) and np.array_equal(la.out_ln_b, lb.out_ln_b)


@pytest.mark.skipif(not HAVE_REFERENCE, reason="torch / sentence-transformers not installed (the `labs` extra)")
def test_equals_sentence_transformers():
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(minilm.model_path()), device="cpu")
    assert reference.max_seq_length == minilm.load().max_seq_length
    expected = reference.encode(TEXTS, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    got = minilm.encode(TEXTS)
    cosines = np.sum(got * expected, axis=1)
    assert cosines.min() >= 0.9999, dict(zip(TEXTS, cosines.round(6), strict=True))
    assert np.abs(got - expected).max() < 1e-4


def test_encoding_does_not_import_torch():
    """The web process embeds questions with this module: no torch, sentence-transformers or transformers."""
    code = textwrap.dedent("""
        import sys
        import django
        django.setup()
        from tutor.teacher import embeddings, minilm
        vec = minilm.encode(["Why does my kernel spill to local memory?"])
        assert vec.shape == (1, 384), vec.shape
        assert embeddings.encode(["what is a roofline?"]).shape == (1, 384)
        heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
        assert not heavy, heavy
        print("ok")
    """)
    run_python_ok(code)
