#!/usr/bin/env python3
"""A mock OpenAI-compatible server for the peer benchmark (standard library only).

It serves `POST /v1/chat/completions` and `POST /v1/embeddings` on 127.0.0.1 with a fixed
latency per call and a cap on the calls served at once (calls beyond it wait for a slot),
so MemForest and Mem0 can be timed against the same model "speed". Replies are
deterministic and valid for the prompt they answer:

- MemForest's extraction prompt: `{"items": [...]}`, one item per turn of the cell, in the
  shape `memforest_llm::items::parse_items` validates; its batched prompt (several cells,
  each after an `Excerpt <id>` line): `{"excerpts": [{"excerpt": id, "items": [...]}]}`,
  one entry per excerpt in order (`memforest_llm::batch::parse_batch`).
- MemForest's summary prompt: `{"summary": "..."}` when the prompt asks for JSON, else the
  plain text, made of the children's first words; its batched prompt (several nodes, each
  after a `Node <id>` line): `{"summaries": [{"node": id, "summary": "..."}]}`.
- Mem0 2.x's additive extraction prompt: `{"memory": [{"id", "text", "attributed_to"}]}`,
  one memory per new message. Mem0 1.x's fact-retrieval (`{"facts": [...]}`) and
  memory-update (`{"memory": []}`) prompts are answered too.
- Any other chat prompt: HTTP 400 (counted as `unknown`), so a driver that sends
  something this mock does not understand fails visibly.
- Embeddings: one unit vector per input, of the request's `dimensions` or `--dims`,
  seeded by the text's SHA-256.

Each reply (status line, headers and body) goes out in one `sendall` on a socket with
`TCP_NODELAY`, so Nagle's algorithm adds no delay. `GET /stats` returns the calls by kind,
the peak of calls served at once (`peak_in_flight`, at most the cap) and of calls received
at once (`peak_received`, including those waiting for a slot); `POST /reset` zeroes them.

Run: `python3 mock_openai.py --chat-ms 200 --embed-ms 20 --cap 8 --port 0 --port-file F`.
"""

import argparse
import hashlib
import json
import math
import os
import random
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MEMFOREST_EXTRACT = "You extract long-term memory items"
MEMFOREST_SUMMARY = "You summarize one node of a memory tree"
MEMFOREST_SUMMARIES = "You summarize several nodes of memory trees"
MEM0_ADDITIVE = "You are a Memory Extractor"
MEM0_FACTS = "Personal Information Organizer"
MEM0_UPDATE = "smart memory manager"

TURN_LINE = re.compile(
    r"^\[(?P<id>[^\]]+)\] (?P<date>\d{4}-\d{2}-\d{2}) [^ ]+ UTC \([A-Za-z]+\) "
    r"(?P<role>user|assistant|system)(?: \((?P<speaker>[^)]*)\))?: (?P<text>.*)$"
)
EXCERPT_LINE = re.compile(r"^Excerpt (?P<id>\S+)$")
NODE_LINE = re.compile(r"^Node (?P<id>\S+)$")
CHILD_LINE = re.compile(r"^\d+\. \[[^\]]*\] ?(?P<text>.*)$")
HEADER = re.compile(r"^\[[^\]]*\|[^\]]*\]")
NAME = re.compile(r"^[A-Z][a-z]{2,}$")
STOP = {"The", "This", "That", "What", "When", "How", "And", "But", "Yes", "Thanks", "Wow", "Hey"}

SUMMARY_WORDS = 120
FACT_CHARS = 300


class Stats:
    """Call counters and the in-flight peaks, shared by the handler threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.zero()

    def reset(self):
        with self.lock:
            self.zero()

    def zero(self):
        self.calls = {}
        self.embedded_texts = 0
        self.request_bytes = 0
        self.received = 0
        self.in_flight = 0
        self.peak_received = 0
        self.peak_in_flight = 0

    def count(self, kind, body_bytes, texts=0):
        with self.lock:
            self.calls[kind] = self.calls.get(kind, 0) + 1
            self.request_bytes += body_bytes
            self.embedded_texts += texts

    def enter(self, field):
        with self.lock:
            value = getattr(self, field) + 1
            setattr(self, field, value)
            peak = "peak_" + field
            setattr(self, peak, max(getattr(self, peak), value))

    def leave(self, field):
        with self.lock:
            setattr(self, field, getattr(self, field) - 1)

    def snapshot(self):
        with self.lock:
            return {
                "calls": dict(self.calls),
                "chat_calls": sum(v for k, v in self.calls.items() if k != "embedding"),
                "embedding_calls": self.calls.get("embedding", 0),
                "embedded_texts": self.embedded_texts,
                "request_bytes": self.request_bytes,
                "peak_in_flight": self.peak_in_flight,
                "peak_received": self.peak_received,
            }


def classify(messages):
    """The kind of a chat request, from its system prompt."""
    system = " ".join(m.get("content") or "" for m in messages if m.get("role") == "system")
    for marker, kind in (
        (MEMFOREST_EXTRACT, "memforest_extract"),
        (MEMFOREST_SUMMARY, "memforest_summary"),
        (MEMFOREST_SUMMARIES, "memforest_summary"),
        (MEM0_ADDITIVE, "mem0_extract"),
        (MEM0_FACTS, "mem0_facts"),
        (MEM0_UPDATE, "mem0_update"),
    ):
        if marker in system:
            return kind, system
    return "unknown", system


def user_text(messages):
    return "\n".join(m.get("content") or "" for m in messages if m.get("role") == "user")


def names(text, skip):
    out = []
    for word in re.findall(r"[A-Za-z]+", text):
        if NAME.match(word) and word not in STOP and word != skip and word not in out:
            out.append(word)
    return out[:3]


def memforest_items(prompt):
    """One item per turn line of MemForest's cell prompt."""
    items = []
    for line in prompt.splitlines():
        turn = TURN_LINE.match(line)
        if not turn or not turn["text"].strip():
            continue
        who = turn["speaker"] or ("The user" if turn["role"] == "user" else "The assistant")
        items.append(
            {
                "fact_text": f"{who} said on {turn['date']}: {turn['text'][:FACT_CHARS]}",
                "participants": [turn["speaker"]] if turn["speaker"] else [],
                "origin": turn["role"] if turn["role"] != "system" else "unknown",
                "semantic_role": "detail",
                "entities": names(turn["text"], turn["speaker"]),
                "topics": ["conversation"],
                "time_text": None,
                "time_start": turn["date"],
                "time_end": turn["date"],
                "attribute_keys": [],
                "domain_keys": [],
                "collection_keys": [],
                "source_turns": [turn["id"]],
            }
        )
    return {"items": items}


def sections(prompt, head_line):
    """(id, text) of each section of a batched prompt, each after a line `head_line` matches."""
    out = []
    for line in prompt.splitlines():
        head = head_line.match(line)
        if head:
            out.append((head["id"], []))
        elif out:
            out[-1][1].append(line)
    return [(sid, "\n".join(lines)) for sid, lines in out]


def memforest_excerpts(prompt):
    """One entry per excerpt of MemForest's batched extraction prompt, with its items."""
    return {
        "excerpts": [
            {"excerpt": eid, "items": memforest_items(text)["items"]} for eid, text in sections(prompt, EXCERPT_LINE)
        ]
    }


def memforest_summaries(prompt):
    """One entry per node of MemForest's batched summary prompt."""
    return {
        "summaries": [
            {"node": nid, "summary": memforest_summary(text)} for nid, text in sections(prompt, NODE_LINE)
        ]
    }


def memforest_summary(prompt):
    """The children's words (headers removed), at most SUMMARY_WORDS of them."""
    words = []
    children = False
    for line in prompt.splitlines():
        if line.startswith("Children:"):
            children = True
            continue
        if not children:
            continue
        child = CHILD_LINE.match(line)
        text = HEADER.sub("", child["text"] if child else line).strip()
        words.extend(text.split()[:40])
    return " ".join(words[:SUMMARY_WORDS]) or "Nothing was said."


def mem0_new_messages(prompt):
    """(role, text) of each line in the `## New Messages` section of Mem0's prompt."""
    section = prompt.split("## New Messages", 1)[-1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        role, sep, text = line.partition(": ")
        if sep and role in ("user", "assistant") and text.strip():
            out.append((role, text.strip()[:FACT_CHARS]))
    return out


def chat_reply(kind, system, prompt):
    """The message content for a chat request of `kind`."""
    if kind == "memforest_extract":
        if '"excerpts"' in system:
            return json.dumps(memforest_excerpts(prompt))
        return json.dumps(memforest_items(prompt))
    if kind == "memforest_summary":
        if '"summaries"' in system:
            return json.dumps(memforest_summaries(prompt))
        text = memforest_summary(prompt)
        return json.dumps({"summary": text}) if '{"summary"' in system else text
    if kind == "mem0_extract":
        lines = mem0_new_messages(prompt)
        return json.dumps(
            {
                "memory": [
                    {"id": str(i), "text": f"{role.capitalize()} said: {text}", "attributed_to": role}
                    for i, (role, text) in enumerate(lines)
                ]
            }
        )
    if kind == "mem0_facts":
        return json.dumps({"facts": [t for _, t in mem0_new_messages(prompt)] or [prompt[-FACT_CHARS:]]})
    return json.dumps({"memory": []})


def vector(text, dims):
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "replace")).digest()[:8], "big")
    rng = random.Random(seed)
    v = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [round(x / norm, 6) for x in v]


def make_handler(config, stats, slots):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            super().setup()

        def log_message(self, *args):
            pass

        def reply(self, status, payload):
            body = json.dumps(payload).encode()
            head = (
                f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            self.wfile.write(head + body)

        def do_GET(self):
            if self.path.rstrip("/") == "/stats":
                self.reply(200, stats.snapshot())
            else:
                self.reply(404, {"error": {"message": "not found"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.rstrip("/")
            if path == "/reset":
                stats.reset()
                self.reply(200, {"ok": True})
                return
            try:
                request = json.loads(raw or b"{}")
            except ValueError:
                self.reply(400, {"error": {"message": "body is not JSON"}})
                return
            if path.endswith("/chat/completions"):
                self.serve(request, len(raw), self.chat)
            elif path.endswith("/embeddings"):
                self.serve(request, len(raw), self.embeddings)
            else:
                self.reply(404, {"error": {"message": f"no route {self.path}"}})

        def serve(self, request, size, answer):
            stats.enter("received")
            try:
                with slots:
                    stats.enter("in_flight")
                    try:
                        status, payload = answer(request, size)
                    finally:
                        stats.leave("in_flight")
            finally:
                stats.leave("received")
            self.reply(status, payload)

        def chat(self, request, size):
            messages = request.get("messages") or []
            kind, system = classify(messages)
            stats.count(kind, size)
            time.sleep(config.chat_ms / 1000)
            if kind == "unknown":
                return 400, {"error": {"message": "the mock does not know this prompt"}}
            prompt = user_text(messages)
            content = chat_reply(kind, system, prompt)
            return 200, {
                "id": "mock",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", "mock"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": size // 4,
                    "completion_tokens": len(content) // 4,
                    "total_tokens": size // 4 + len(content) // 4,
                },
            }

        def embeddings(self, request, size):
            texts = request.get("input")
            texts = [texts] if isinstance(texts, str) else list(texts or [])
            stats.count("embedding", size, len(texts))
            time.sleep(config.embed_ms / 1000)
            dims = request.get("dimensions") or config.dims
            data = [
                {"object": "embedding", "index": i, "embedding": vector(str(t), dims)}
                for i, t in enumerate(texts)
            ]
            tokens = sum(len(str(t)) for t in texts) // 4
            return 200, {
                "object": "list",
                "data": data,
                "model": request.get("model", "mock"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }

    return Handler


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--chat-ms", type=float, default=200.0, help="latency of one chat call")
    parser.add_argument("--embed-ms", type=float, default=20.0, help="latency of one embedding call")
    parser.add_argument("--cap", type=int, default=8, help="calls served at once")
    parser.add_argument("--dims", type=int, default=256, help="embedding dimensions by default")
    config = parser.parse_args(argv)
    stats = Stats()
    slots = threading.BoundedSemaphore(max(1, config.cap))
    ThreadingHTTPServer.request_queue_size = 256
    server = ThreadingHTTPServer(("127.0.0.1", config.port), make_handler(config, stats, slots))
    server.daemon_threads = True
    port = server.server_address[1]
    if config.port_file:
        with open(config.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(config.port_file + ".tmp", config.port_file)
    print(f"mock OpenAI server on http://127.0.0.1:{port}/v1", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
