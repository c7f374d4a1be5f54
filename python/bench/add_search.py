"""Latency of `Memory.add` (one exchange: two messages) and `Memory.search` from Python,
with the default (offline) extractor, summarizer and embedder, for one user holding
`--facts` memories.

    python bench/add_search.py               # 10^5 memories (the goal's size)
    python bench/add_search.py --facts 5000  # a quick run

It fills the store with batched adds of synthetic exchanges, then times `--adds` adds of one
exchange each, `--searches` searches, and `--mixed` rounds of an add followed by a search (an
agent's loop: each search follows a write), and prints median, p99 and max in milliseconds.
Build the package in release mode first (`pip install ./python` or `maturin develop -r`).
"""

import argparse
import os
import random
import statistics
import tempfile
import time

PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Emil", "Farah", "Gus", "Hana", "Ivan", "June"]
VERBS = ["bought", "sold", "painted", "repaired", "borrowed", "lost", "found", "gifted"]
THINGS = ["bike", "kayak", "guitar", "lamp", "camera", "tent", "violin", "scooter", "clock"]
COLORS = ["red", "blue", "green", "amber", "teal", "black", "white", "violet"]
CITIES = ["Paris", "Berlin", "Oslo", "Rome", "Lima", "Kyoto", "Cairo", "Quito", "Perth"]


def exchange(rng, i):
    """A synthetic exchange: a user fact with a unique token and the assistant's reply."""
    text = (f"I {rng.choice(VERBS)} a {rng.choice(COLORS)} {rng.choice(THINGS)} in "
            f"{rng.choice(CITIES)} with {rng.choice(PEOPLE)}, receipt r{i}.")
    return [{"role": "user", "content": text, "name": "Alice"},
            {"role": "assistant", "content": f"Noted receipt r{i}, {rng.choice(PEOPLE)}!"}]


def fill(add, stored, target, rng):
    """Adds batches of 50 exchanges until `stored()` counts `target` memories; `add` gets
    each batch and the index of the next exchange, which is returned at the end."""
    i = 0
    while stored() < target:
        batch = []
        for _ in range(50):
            batch += exchange(rng, i)
            i += 1
        add(batch, i)
    return i


def question(rng):
    """A question about one of the exchanges' purchases."""
    return (f"Which {rng.choice(COLORS)} {rng.choice(THINGS)} did Alice buy in "
            f"{rng.choice(CITIES)}?")


def percentile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name, samples_ns):
    ms = [s / 1e6 for s in samples_ns]
    print(f"{name:<28} n={len(ms):<6} median={statistics.median(ms):.3f} ms  "
          f"p99={percentile(ms, 0.99):.3f} ms  max={max(ms):.3f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=100_000, help="memories stored before timing")
    ap.add_argument("--adds", type=int, default=2_000, help="timed one-exchange adds")
    ap.add_argument("--searches", type=int, default=1_000, help="timed searches")
    ap.add_argument("--mixed", type=int, default=500, help="timed rounds of an add, then a search")
    ap.add_argument("--dir", help="store directory (default: a fresh temporary one)")
    args = ap.parse_args()
    import memforest  # here, so that other benchmarks can import this file's workload

    rng = random.Random(7)
    path = args.dir or os.path.join(tempfile.mkdtemp(prefix="memforest-bench-"), "store")
    with memforest.Memory(path) as m:
        started = time.perf_counter()
        i = fill(lambda batch, i: m.add(batch, user_id="alice", session_id=f"fill{i // 5000}"),
                 lambda: m.stats("alice")["memories"], args.facts, rng)
        m.flush()
        fill_s = time.perf_counter() - started
        stats = m.stats("alice")
        print(f"store {path}: {stats['memories']} memories, {stats['messages']} messages "
              f"for one user, filled in {fill_s:.1f} s")

        adds = []
        for _ in range(args.adds):
            msgs = exchange(rng, i)
            i += 1
            t = time.perf_counter_ns()
            m.add(msgs, user_id="alice", session_id="timed")
            adds.append(time.perf_counter_ns() - t)
        report("add (one exchange)", adds)

        def search():
            q = question(rng)
            t = time.perf_counter_ns()
            m.search(q, user_id="alice", limit=10)
            return time.perf_counter_ns() - t

        report("search (limit 10)", [search() for _ in range(args.searches)])

        mixed_adds, mixed_searches = [], []
        for _ in range(args.mixed):
            msgs = exchange(rng, i)
            i += 1
            t = time.perf_counter_ns()
            m.add(msgs, user_id="alice", session_id="mixed")
            mixed_adds.append(time.perf_counter_ns() - t)
            mixed_searches.append(search())
        report("add, then search: the add", mixed_adds)
        report("add, then search: search", mixed_searches)


if __name__ == "__main__":
    main()
