#!/usr/bin/env bash
# The write-path benchmark of MemForest against Mem0 on one mock OpenAI-compatible server
# (docs/benchmarks.md, "Peers: write path against Mem0").
#
#   benches/peers/run.sh LOCOMO10_JSON [N] [run.py flags...]
#
# Installs Mem0 (pinned) into a virtual environment (PEERS_VENV, default target/peers-venv),
# builds `memforest` (release), writes the first N (default 300) LoCoMo exchanges, then runs
# run.py: 200 and 50 ms per chat call, 20 ms per embedding call, 8 calls served at once.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
locomo="${1:?usage: run.sh LOCOMO10_JSON [N] [run.py flags...]}"
n="${2:-300}"
shift $(( $# >= 2 ? 2 : 1 ))

MEM0_VERSION=2.2.1
venv="${PEERS_VENV:-$root/target/peers-venv}"
if ! "$venv/bin/python" -c "import mem0, sys; sys.exit(mem0.__version__ != '$MEM0_VERSION')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "mem0ai==$MEM0_VERSION"
fi

(cd "$root" && cargo build --release --locked -p memforest-cli)
target="$(cd "$root" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

exchanges="$(mktemp --suffix .jsonl)"
trap 'rm -f "$exchanges"' EXIT
python3 "$here/exchanges.py" "$locomo" "$exchanges" --limit "$n" >&2

export MEM0_TELEMETRY=False
python3 "$here/run.py" --exchanges "$exchanges" --memforest "$target/release/memforest" \
    --python "$venv/bin/python" "$@"
