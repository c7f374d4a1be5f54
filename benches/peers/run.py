#!/usr/bin/env python3
"""Runs MemForest and Mem0 on the same exchanges against one mock server and prints one
table with the ratios (what `run.sh` calls once Mem0's virtual environment and the
`memforest` binary are built).

For each chat latency of `--chat-ms`, a fresh mock server (`mock_openai.py`, on a free
port, `--embed-ms` per embedding call, `--cap` calls served at once) serves these runs,
its counters reset before each:

- `seq`: one caller (an agent loop), Mem0 and MemForest (`add` returns once the messages
  are durable; the time counted runs until every extraction and summary is done).
- `wait`: MemForest with `--wait` (each `add` waits for its own extraction), against
  Mem0's `seq` run.
- `callers=T`: `--callers` threads for both, each with its own users (10 by default:
  one LoCoMo user each).

Per run: add p50 / p99 (overall and the first and last buckets of exchanges added), wall
seconds until all is done, exchanges/s, chat and embedding requests per exchange and the
peak of calls in flight as the mock saw them; the ratio is MemForest's exchanges/s over
Mem0's in the same row group.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


class Mock:
    """The mock server as a child process."""

    def __init__(self, chat_ms, embed_ms, cap, dims):
        self.dir = tempfile.mkdtemp(prefix="peers-mock-")
        port_file = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "mock_openai.py"), "--port", "0", "--port-file", port_file,
             "--chat-ms", str(chat_ms), "--embed-ms", str(embed_ms), "--cap", str(cap), "--dims", str(dims)],
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 30
        while not os.path.exists(port_file):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the mock server did not start")
            time.sleep(0.05)
        with open(port_file) as f:
            self.root = f"http://127.0.0.1:{int(f.read())}"
        self.url = self.root + "/v1"

    def call(self, method, path):
        req = urllib.request.Request(self.root + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def run_driver(mock, cmd):
    mock.call("POST", "/reset")
    out = subprocess.run(cmd, check=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr[-4000:])
        raise RuntimeError(f"{cmd[0]} failed with status {out.returncode}")
    report = json.loads(out.stdout[out.stdout.find("{") :])
    report["mock"] = mock.call("GET", "/stats")
    return report


def memforest(args, mock, callers, wait):
    cmd = [args.memforest, "bench", "peers", "--json", "--exchanges", args.exchanges,
           "--llm-url", mock.url, "--callers", str(callers), "--pool", str(args.cap),
           "--embed-dimensions", str(args.dims)]
    return run_driver(mock, cmd + (["--wait"] if wait else []))


def mem0(args, mock, callers):
    cmd = [args.python, os.path.join(HERE, "mem0_driver.py"), "--exchanges", args.exchanges,
           "--llm-url", mock.url, "--callers", str(callers), "--embed-dimensions", str(args.dims)]
    return run_driver(mock, cmd)


def row(chat_ms, mode, r, base):
    """One table line; the ratio is against `base` (`None`: the peer's own line, 1.00;
    `False`: no peer was run, `-`)."""
    n = r["exchanges"]
    m = r["mock"]
    b = r["buckets"]
    ratio = f"{r['exchanges_per_s'] / base['exchanges_per_s']:.2f}" if base else "1.00" if base is None else "-"
    return (
        f"{chat_ms:>5} {mode:<10} {r['system']:<11} {n:>5} {r['add_p50_ms']:>8.2f} {r['add_p99_ms']:>8.2f} "
        f"{b[0]['p50_ms']:>8.2f} {b[-1]['p50_ms']:>8.2f} {r['wall_s']:>8.1f} {r['exchanges_per_s']:>7.2f} "
        f"{m['chat_calls'] / n:>6.2f} {m['embedding_calls'] / n:>6.2f} {m['peak_in_flight']:>5} {ratio:>6}"
    )


HEADER = (
    f"{'chat':>5} {'mode':<10} {'system':<11} {'N':>5} {'add p50':>8} {'add p99':>8} "
    f"{'p50 1st':>8} {'p50 last':>8} {'wall s':>8} {'ex/s':>7} "
    f"{'chat/x':>6} {'emb/x':>6} {'peak':>5} {'ratio':>6}"
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", required=True, help="JSONL from exchanges.py")
    parser.add_argument("--memforest", required=True, help="the memforest binary")
    parser.add_argument("--python", required=True, help="the interpreter with mem0 installed")
    parser.add_argument("--chat-ms", default="200,50", help="chat latencies to run, comma-separated")
    parser.add_argument("--embed-ms", type=float, default=20.0)
    parser.add_argument("--cap", type=int, default=8, help="calls the mock serves at once")
    parser.add_argument("--callers", type=int, default=10, help="threads of the concurrent runs (0: none)")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--json-out", help="also write every report here")
    parser.add_argument("--modes", default="seq,wait,callers", help="runs to make, comma-separated")
    parser.add_argument("--no-mem0", action="store_true", help="run MemForest only (no ratios)")
    args = parser.parse_args(argv)
    lines, reports = [HEADER], []
    for chat_ms in [float(x) for x in args.chat_ms.split(",") if x]:
        label = f"{chat_ms:g}"
        mock = Mock(chat_ms, args.embed_ms, args.cap, args.dims)
        try:
            runs = [("seq", 1, False), ("wait", 1, True)]
            if args.callers > 0:
                runs.append((f"callers={args.callers}", args.callers, False))
            runs = [r for r in runs if r[0].split("=")[0] in args.modes.split(",")]
            base_seq = False
            for mode, callers, wait in runs:
                if args.no_mem0:
                    base = False
                elif not wait:
                    sys.stderr.write(f"chat {label} ms, {mode}: mem0\n")
                    base = mem0(args, mock, callers)
                    reports.append({"chat_ms": chat_ms, "mode": mode, **base})
                    lines.append(row(label, mode, base, None))
                    if callers == 1:
                        base_seq = base
                else:
                    base = base_seq
                sys.stderr.write(f"chat {label} ms, {mode}: memforest\n")
                mf = memforest(args, mock, callers, wait)
                reports.append({"chat_ms": chat_ms, "mode": mode, **mf})
                lines.append(row(label, mode, mf, base))
                sys.stderr.write(lines[-1] + "\n")
                if args.json_out:
                    with open(args.json_out, "w") as f:
                        json.dump(reports, f, indent=1)
        finally:
            mock.close()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
