#!/usr/bin/env python3
"""LoCoMo conversations as the exchanges both peer drivers add, one JSON object a line.

Each LoCoMo session is cut into exchanges of two consecutive turns: the first speaker's
turn as the user's message, the reply as the assistant's (a session's odd last turn is an
exchange of one). One LoCoMo conversation is one user. The users' exchanges are
interleaved round-robin (user 0's first, user 1's first, ...), each user's in session
order, so the first N lines hold several users' early conversations, as an agent serving
several users would see them.

A `--limit` beyond the file's exchanges (about 3,000 in locomo10.json) repeats them in
rounds, for growth runs: round r (from 1) keeps the users, so each user's memory keeps
growing, moves every time r spans of the whole file later, names its sessions
`.../r<r>/session_<n>`, and ends each text with ` (round <r>)` so that no system can
recognise a repeat as a duplicate.

A line: `{"user": "conv-26", "session": "conv-26/session_1", "messages": [{"role":
"user", "speaker": "Caroline", "text": "...", "time": "2023-05-08T13:56:00Z"}, ...]}`
(the shape of MemForest's `Message`; the Mem0 driver sends `role` and `text` as
`role` / `content`).

Run: `python3 exchanges.py LOCOMO10_JSON OUT_JSONL [--limit N]`.
"""

import argparse
import json
from datetime import datetime, timedelta


def session_start(text):
    """`1:56 pm on 8 May, 2023` as a datetime (UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def conversation_exchanges(sample):
    """The exchanges of one LoCoMo sample, in order."""
    conv = sample["conversation"]
    user = sample["sample_id"]
    numbers = sorted(
        int(k.split("_")[1]) for k in conv if k.startswith("session_") and not k.endswith("date_time")
    )
    out = []
    for n in numbers:
        turns = [t for t in conv.get(f"session_{n}") or [] if (t.get("text") or "").strip()]
        start = session_start(conv[f"session_{n}_date_time"])
        for i in range(0, len(turns), 2):
            messages = []
            for j, (role, turn) in enumerate(zip(("user", "assistant"), turns[i : i + 2])):
                at = start + timedelta(minutes=i + j)
                messages.append(
                    {
                        "role": role,
                        "speaker": turn["speaker"],
                        "text": turn["text"],
                        "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    }
                )
            out.append({"user": user, "session": f"{user}/session_{n}", "messages": messages})
    return out


def interleave(per_user):
    """Round-robin over the users' lists, each kept in order."""
    out = []
    depth = max((len(x) for x in per_user), default=0)
    for i in range(depth):
        out.extend(x[i] for x in per_user if i < len(x))
    return out


def repeated(exchanges, limit):
    """`exchanges` repeated in rounds until there are `limit` of them (see the module doc)."""
    if not exchanges:
        return []
    times = [datetime.strptime(m["time"], "%Y-%m-%dT%H:%M:%SZ") for x in exchanges for m in x["messages"]]
    span = max(times) - min(times) + timedelta(days=1)
    out = list(exchanges)
    r = 0
    while len(out) < limit:
        r += 1
        for x in exchanges[: limit - len(out)]:
            user, session = x["session"].rsplit("/", 1)
            messages = []
            for m in x["messages"]:
                at = datetime.strptime(m["time"], "%Y-%m-%dT%H:%M:%SZ") + r * span
                messages.append(
                    dict(m, text=f"{m['text']} (round {r})", time=at.strftime("%Y-%m-%dT%H:%M:%SZ"))
                )
            out.append({"user": x["user"], "session": f"{user}/r{r}/{session}", "messages": messages})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", help="locomo10.json")
    parser.add_argument("out", help="the JSONL written")
    parser.add_argument("--limit", type=int, default=0, help="first N exchanges (0: all; more than the file holds: repeated in rounds)")
    args = parser.parse_args(argv)
    with open(args.locomo) as f:
        samples = json.load(f)
    exchanges = interleave([conversation_exchanges(s) for s in samples])
    if args.limit > 0:
        exchanges = repeated(exchanges, args.limit)[: args.limit]
    with open(args.out, "w") as f:
        for x in exchanges:
            f.write(json.dumps(x, ensure_ascii=False) + "\n")
    print(f"{len(exchanges)} exchanges -> {args.out}")


if __name__ == "__main__":
    main()
