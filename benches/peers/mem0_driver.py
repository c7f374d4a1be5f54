#!/usr/bin/env python3
"""Mem0's side of the peer benchmark: `Memory.add` of one exchange per call.

Mem0 (the version `run.sh` pins) is configured with its OpenAI LLM and embedder pointed at
the mock server (`--llm-url`), local Qdrant in a scratch directory, and telemetry off
(`MEM0_TELEMETRY=False`, set before the import). Each exchange of the JSONL file
(`exchanges.py`) is added as `[{"role": "user", ...}, {"role": "assistant", ...}]` for its
user. `--callers T` threads add at once, user u (in order of first exchange) on thread
u % T, each thread with its own `Memory` (its own local Qdrant and history database):
local Qdrant is not safe to share between threads (one shared instance loses adds with
IndexError from its arrays).

Prints one JSON object with the same fields as `memforest bench peers --json`: add
latency p50 / p99 overall and per bucket of exchanges already added (1-50, 51-100,
101-200, ..., doubling), the wall time until the last add returned (Mem0's add returns
when its model calls are done, so this is also the time until all is done) and
exchanges per second.

Run: `python mem0_driver.py --exchanges X.jsonl --llm-url http://127.0.0.1:PORT/v1`.
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time

os.environ.setdefault("MEM0_TELEMETRY", "False")


def bucket_bounds(n):
    """1-50, 51-100, 101-200, ... (doubling), the last one ending at n."""
    out, first, last = [], 1, 50
    while first <= n:
        out.append((first, min(last, n)))
        first, last = last + 1, last * 2
    return out


def percentile(values, per_mille):
    """The nearest-rank percentile the Rust side uses: sorted[(n - 1) * q / 1000]."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) * per_mille // 1000]


def load(path, limit):
    out = []
    with open(path) as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
            if limit and len(out) == limit:
                break
    return out


def build(args, scratch):
    os.makedirs(scratch, exist_ok=True)
    from mem0 import Memory

    config = {
        "llm": {
            "provider": "openai",
            "config": {"model": args.llm_model, "api_key": "mock", "openai_base_url": args.llm_url},
        },
        "embedder": {
            "provider": "openai",
            "config": {
                "model": args.embed_model,
                "api_key": "mock",
                "openai_base_url": args.llm_url,
                "embedding_dims": args.embed_dimensions,
            },
        },
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "peers",
                "embedding_model_dims": args.embed_dimensions,
                "path": os.path.join(scratch, "qdrant"),
                "on_disk": False,
            },
        },
        "history_db_path": os.path.join(scratch, "history.db"),
    }
    return Memory.from_config(config)


def caller_of(exchanges, callers):
    """User u (in order of first exchange) goes to caller u % callers, as in MemForest's."""
    users = {}
    return [users.setdefault(x["user"], len(users)) % max(1, callers) for x in exchanges]


def add_all(memories, exchanges):
    """Caller t adds its users' exchanges to memories[t], in order; latency ms by index."""
    owner = caller_of(exchanges, len(memories))
    latencies = [0.0] * len(exchanges)
    errors = []

    def worker(me, memory):
        for i, x in enumerate(exchanges):
            if owner[i] != me:
                continue
            messages = [{"role": m["role"], "content": m["text"]} for m in x["messages"]]
            t = time.perf_counter()
            try:
                memory.add(messages, user_id=x["user"])
            except Exception as e:  # counted and reported; the driver then exits with 1
                errors.append(repr(e))
            latencies[i] = (time.perf_counter() - t) * 1000

    threads = [threading.Thread(target=worker, args=(t, m)) for t, m in enumerate(memories)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--llm-url", required=True)
    parser.add_argument("--llm-model", default="mock-chat")
    parser.add_argument("--embed-model", default="mock-embed")
    parser.add_argument("--embed-dimensions", type=int, default=256)
    parser.add_argument("--callers", type=int, default=1)
    args = parser.parse_args(argv)
    import mem0

    exchanges = load(args.exchanges, args.limit)
    with tempfile.TemporaryDirectory(prefix="mem0-peers-") as scratch:
        callers = max(1, args.callers)
        memories = [build(args, os.path.join(scratch, str(t))) for t in range(callers)]
        start = time.perf_counter()
        latencies, errors = add_all(memories, exchanges)
        wall = time.perf_counter() - start
    n = len(exchanges)
    report = {
        "system": f"mem0 {getattr(mem0, '__version__', '?')}",
        "exchanges": n,
        "callers": max(1, args.callers),
        "wait": True,
        "add_wall_s": wall,
        "wall_s": wall,
        "exchanges_per_s": n / wall if wall > 0 else 0.0,
        "add_p50_ms": percentile(latencies, 500),
        "add_p99_ms": percentile(latencies, 990),
        "buckets": [
            {
                "first": first,
                "last": last,
                "p50_ms": percentile(latencies[first - 1 : last], 500),
                "p99_ms": percentile(latencies[first - 1 : last], 990),
            }
            for first, last in bucket_bounds(n)
        ],
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }
    json.dump(report, sys.stdout)
    print()
    if errors:
        sys.exit(f"{len(errors)} adds failed, the first with {errors[0]}")


if __name__ == "__main__":
    main()
