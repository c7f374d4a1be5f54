#!/usr/bin/env python3
"""The calls an agent makes from Python, through MemForest's package and through Mem0, side
by side: `add` of one exchange and `search`, on one user holding `--facts` memories.

MemForest runs with its defaults (no model server: the heuristic extractor and the bundled
static embedder). Mem0 (the version `run.sh` pins, configured as `mem0_driver.py` does:
local Qdrant, telemetry off) runs against the mock OpenAI-compatible server
(`mock_openai.py`) answering at once (0 ms per chat and embedding call), so what is timed is
each system's own work. Both get the synthetic exchanges of `python/bench/add_search.py`: the
store is filled with adds of 50 exchanges, then `--adds` adds of one exchange and
`--searches` searches (limit 10) are timed.

    python3 benches/peers/python_calls.py --memforest-python VENV1/bin/python \\
        --mem0-python VENV2/bin/python [--facts 2000 --adds 300 --searches 300]

The MemForest interpreter has the package installed (`pip install ./python`), the Mem0 one
`mem0ai` (`run.sh` makes that virtual environment). Each system runs in its own process
(`--system`); the table gives median and p99 in milliseconds and Mem0's over MemForest's.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "bench"))

from add_search import exchange, fill, percentile, question  # noqa: E402


def workload(add, search, stored, args):
    """Fills to `args.facts` memories (`stored()` counts them), then times one-exchange
    adds and searches; latencies in ms."""
    rng = random.Random(7)
    i = fill(lambda batch, _: add(batch), stored, args.facts, rng)
    adds, searches = [], []
    for _ in range(args.adds):
        msgs = exchange(rng, i)
        i += 1
        t = time.perf_counter()
        add(msgs)
        adds.append((time.perf_counter() - t) * 1000)
    for _ in range(args.searches):
        q = question(rng)
        t = time.perf_counter()
        search(q)
        searches.append((time.perf_counter() - t) * 1000)
    return {"memories": stored(), "add": adds, "search": searches}


def run_memforest(args, scratch):
    import memforest

    with memforest.Memory(os.path.join(scratch, "store")) as m:
        return workload(
            lambda msgs: m.add(msgs, user_id="alice"),
            lambda q: m.search(q, user_id="alice", limit=10),
            lambda: m.stats("alice")["memories"],
            args,
        )


def run_mem0(args, scratch):
    from mem0_driver import build

    args.llm_model, args.embed_model, args.embed_dimensions = "mock-chat", "mock-embed", 256
    memory = build(args, scratch)

    def stored():
        got = memory.get_all(filters={"user_id": "alice"}, top_k=10**7)
        return len(got["results"] if isinstance(got, dict) else got)

    return workload(
        lambda msgs: memory.add(msgs, user_id="alice"),
        lambda q: memory.search(q, filters={"user_id": "alice"}, top_k=10),
        stored,
        args,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memforest-python", help="interpreter with the memforest package")
    parser.add_argument("--mem0-python", help="interpreter with mem0ai")
    parser.add_argument("--facts", type=int, default=2000, help="memories stored before timing")
    parser.add_argument("--adds", type=int, default=300)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--system", choices=["memforest", "mem0"], help="run one system (internal)")
    parser.add_argument("--llm-url", help="the mock server (internal)")
    args = parser.parse_args(argv)
    if args.system:
        with tempfile.TemporaryDirectory(prefix=f"python-calls-{args.system}-") as scratch:
            out = (run_memforest if args.system == "memforest" else run_mem0)(args, scratch)
        json.dump(out, sys.stdout)
        return
    if not (args.memforest_python and args.mem0_python):
        parser.error("--memforest-python and --mem0-python are required")
    from run import Mock

    common = ["--facts", str(args.facts), "--adds", str(args.adds), "--searches", str(args.searches)]
    mock = Mock(chat_ms=0, embed_ms=0, cap=8, dims=256)
    try:
        results = {}
        for system, python in (("memforest", args.memforest_python), ("mem0", args.mem0_python)):
            cmd = [python, os.path.abspath(__file__), "--system", system, "--llm-url", mock.url] + common
            out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True,
                                 env=dict(os.environ, MEM0_TELEMETRY="False")).stdout
            results[system] = json.loads(out[out.find("{"):])
    finally:
        mock.close()
    mf, m0 = results["memforest"], results["mem0"]
    print(f"one user; memories stored: MemForest {mf['memories']}, Mem0 {m0['memories']}; "
          f"mock server at 0 ms")
    print(f"{'call':<8} {'MemForest p50':>14} {'p99':>8} {'Mem0 p50':>10} {'p99':>8} "
          f"{'Mem0/MF p50':>12} {'p99':>7}")
    for call in ("add", "search"):
        a50, a99 = percentile(mf[call], 0.5), percentile(mf[call], 0.99)
        b50, b99 = percentile(m0[call], 0.5), percentile(m0[call], 0.99)
        print(f"{call:<8} {a50:>11.2f} ms {a99:>8.2f} {b50:>7.2f} ms {b99:>8.2f} "
              f"{b50 / a50:>11.1f}x {b99 / a99:>6.1f}x")


if __name__ == "__main__":
    main()
