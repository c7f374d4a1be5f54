#!/usr/bin/env python3
"""Lists each word's nearest words in MemForest's bundled static embedder.

A query expands its words with the words whose vectors are nearest in the embedder's
table (query expansion by word embeddings: Kuzi, Shtok and Kurland, CIKM 2016), so that
"kids" also finds "children" and "buy" finds "purchase". This file is a cache of that
computation over the whole vocabulary: for every whole-word token (letters only, three
or more, not a `##` piece) with a vector, the nearest such words by cosine, best first.
The query side (`crates/memforest/src/embedder/related.rs`) stems them, drops stop
words and words of the same stem, and keeps the few that are near enough.

Input: the table `distill.py` wrote. Only numpy and zstandard are needed.

Usage:
    python3 data/embedder/related.py data/embedder/minilm-l6-static.bin.zst \
        data/embedder/minilm-l6-related.tsv.zst

Output (zstd-compressed UTF-8 text), one line per word that has a near word:
    word TAB neighbour:cosine SPACE neighbour:cosine ...
cosines with three decimals, at least MIN_COSINE, at most PER_WORD per line, in
vocabulary order.
"""

import struct
import sys

import numpy as np
import zstandard

PER_WORD = 8
MIN_COSINE = 0.5
CHUNK = 2048


def read_table(path: str):
    with open(path, "rb") as f:
        raw = zstandard.ZstdDecompressor().decompress(f.read(), max_output_size=1 << 31)
    if raw[:4] != b"MFSE":
        raise SystemExit(f"{path}: not a static embedder table")
    _, n, dims = struct.unpack("<III", raw[4:16])
    at, tokens = 16, []
    for _ in range(n):
        (length,) = struct.unpack("<H", raw[at : at + 2])
        tokens.append(raw[at + 2 : at + 2 + length].decode("utf-8"))
        at += 2 + length
    scales = np.frombuffer(raw[at : at + 4 * n], dtype="<f4")
    at += 4 * n
    rows = np.frombuffer(raw[at : at + n * dims], dtype=np.int8).reshape(n, dims)
    return tokens, rows.astype(np.float32) * scales[:, None]


def main(table: str, out: str) -> None:
    tokens, vectors = read_table(table)
    norms = np.linalg.norm(vectors, axis=1)
    words = [
        i
        for i, t in enumerate(tokens)
        if norms[i] > 0 and len(t) >= 3 and t.isascii() and t.isalpha()
    ]
    unit = vectors[words] / norms[words][:, None]
    lines = []
    for start in range(0, len(words), CHUNK):
        sims = unit[start : start + CHUNK] @ unit.T
        for row, own in enumerate(range(start, min(start + CHUNK, len(words)))):
            sims[row, own] = -1.0
            best = np.argsort(-sims[row], kind="stable")[:PER_WORD]
            near = [
                f"{tokens[words[j]]}:{sims[row, j]:.3f}"
                for j in best
                if sims[row, j] >= MIN_COSINE
            ]
            if near:
                lines.append(f"{tokens[words[own]]}\t{' '.join(near)}\n")
    with open(out, "wb") as f:
        f.write(zstandard.ZstdCompressor(level=19).compress("".join(lines).encode()))
    print(f"wrote {out}: {len(lines)} words", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
