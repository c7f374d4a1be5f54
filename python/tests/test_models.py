"""Model options: an OpenAI-compatible server (a real HTTP server on 127.0.0.1) and Python
callables as the embedder and the summarizer."""

import _thread
import http.server
import json
import subprocess
import sys
import threading

import pytest

import memforest
from conftest import exchange

DIM = 26


def letters(text):
    """A bag-of-letters vector: similar words, similar vectors."""
    v = [0.0] * DIM
    for c in text.lower():
        if "a" <= c <= "z":
            v[ord(c) - ord("a")] += 1.0
    return v


def send_json(handler, reply):
    """Writes `reply` as a 200 JSON response."""
    data = json.dumps(reply).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class Model(http.server.BaseHTTPRequestHandler):
    """`/v1/embeddings` and `/v1/chat/completions` answering as an OpenAI server would."""

    requests = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Model.requests.append((self.path, self.headers.get("Authorization"), body))
        if self.path == "/v1/embeddings":
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            reply = {"data": [{"index": i, "embedding": letters(t)} for i, t in enumerate(inputs)]}
        elif self.path == "/v1/chat/completions":
            items = {"items": [{"fact_text": "Alice owns a red kayak.", "entities": ["Alice"]}]}
            reply = {"choices": [{"message": {"role": "assistant", "content": json.dumps(items)}}]}
        else:
            self.send_error(404)
            return
        send_json(self, reply)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    Model.requests = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Model)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_openai_extractor_and_embedder_with_an_api_key_from_the_environment(
    store, server, monkeypatch
):
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-test-123")
    with memforest.Memory(store, extractor="openai", embedder="openai", llm_url=server,
                          llm_model="chat-model", embed_model="embed-model",
                          api_key_env="TEST_MODEL_KEY") as m:
        m.add(exchange("I bought a boat for the lake.", "Have fun paddling!"), user_id="alice")
        m.flush()
        hits = m.search("What boat does Alice own?", user_id="alice")
        assert any(h["text"] == "Alice owns a red kayak." for h in hits)
    paths = {p for p, _, _ in Model.requests}
    assert paths == {"/v1/chat/completions", "/v1/embeddings"}
    assert all(auth == "Bearer sk-test-123" for _, auth, _ in Model.requests)
    chat = next(b for p, _, b in Model.requests if p == "/v1/chat/completions")
    assert chat["model"] == "chat-model"


def test_python_callables_as_embedder_and_summarizer(store):
    embedded, summarized = [], []

    def embed(texts):
        embedded.extend(texts)
        return [letters(t) for t in texts]

    def summarize(texts):
        summarized.append(list(texts))
        return "; ".join(texts)

    with memforest.Memory(store, embedder=embed, summarizer=summarize) as m:
        for i in range(3):
            m.add(exchange(f"I planted {i + 1} apple trees.", "Nice orchard."), user_id="alice")
        m.flush()
        assert any("apple" in h["text"] for h in m.search("apple trees", user_id="alice"))
        assert m.stats("alice")["dirty_summaries"] == 0
    assert any("apple" in t for t in embedded)
    assert summarized and all(isinstance(t, str) for batch in summarized for t in batch)


def test_a_python_extractor_gives_the_memories_of_each_exchange(store):
    seen = []

    def extract(messages):
        seen.extend(messages)
        user = [m for m in messages if m["role"] == "user"]
        items = [f"{m['name']} mentioned {m['content'].rstrip('.').lower()}" for m in user]
        if any("kayak" in m["content"] for m in user):
            items.append({"fact_text": "Alice owns a kayak.", "attribute_keys": ["boat"]})
        return items

    with memforest.Memory(store, extractor=extract) as m:
        added = m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice", wait=True)
        assert added["pending"] == 0 and len(added["memories"]) == 2
        texts = {r["text"] for r in m.get_all(user_id="alice")}
        assert texts == {"Alice mentioned i bought a kayak", "Alice owns a kayak."}
        # Without wait, add returns once the messages are stored; the model runs behind it.
        added = m.add(exchange("I sold the bike.", "Good riddance."), user_id="alice")
        assert added["messages"] == 2 and added["memories"] == [] and added["pending"] == 1
        m.flush()
        texts = {r["text"] for r in m.get_all(user_id="alice")}
        assert "Alice mentioned i sold the bike" in texts
    first = seen[0]
    assert first["role"] == "user" and first["name"] == "Alice" and first["id"] == "default#turn_0"
    assert first["timestamp"].tzinfo is not None


def test_a_python_extractor_that_fails_leaves_the_messages_stored_and_pending(store):
    def extract(messages):
        raise RuntimeError("model down")

    m = memforest.Memory(store, extractor=extract)
    added = m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice")
    assert added["messages"] == 2 and added["memories"] == [] and added["pending"] >= 1
    assert m.stats("alice")["messages"] == 2
    with pytest.raises(memforest.ModelCallError, match="failed 4 times"):
        m.flush()  # a model that keeps failing is reported, not waited for forever
    m.close()  # the extraction stays pending in the store, retried after a reopen
    with memforest.Memory(store) as m:
        m.flush()
        texts = [r["text"] for r in m.get_all(user_id="alice")]
        assert any("kayak" in t for t in texts)


def test_a_callable_embedder_returning_garbage_is_a_model_call_error(store):
    with memforest.Memory(store, embedder=lambda texts: "not vectors", summarizer="none") as m:
        with pytest.raises(memforest.ModelCallError, match="TypeError"):
            m.search("anything", user_id="alice")


class HeldModel(http.server.BaseHTTPRequestHandler):
    """A chat server whose first call waits for `gate`: the exchanges added meanwhile queue
    up behind it. It records the excerpts each call carried and answers a batched prompt
    (`Excerpt <id>` sections) with one entry per excerpt."""

    gate = threading.Event()
    excerpts_per_call = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not HeldModel.excerpts_per_call:
            HeldModel.gate.wait(30)
        prompt = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
        ids = [line.split(" ", 1)[1] for line in prompt.splitlines()
               if line.startswith("Excerpt ")]
        HeldModel.excerpts_per_call.append(max(len(ids), 1))
        item = {"fact_text": "Alice paddled on the lake.", "entities": ["Alice"]}
        if ids:
            content = {"excerpts": [{"excerpt": i, "items": [item]} for i in ids]}
        else:
            content = {"items": [item]}
        reply = {"choices": [{"message": {"role": "assistant", "content": json.dumps(content)}}]}
        send_json(self, reply)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("batch", [1, 3])
def test_waiting_exchanges_are_extracted_together_up_to_extract_batch(store, batch):
    HeldModel.gate = threading.Event()
    HeldModel.excerpts_per_call = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HeldModel)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        with memforest.Memory(store, extractor="openai", llm_url=url, llm_model="m",
                              embedder="none", summarizer="none",
                              extract_batch=batch) as m:
            for i in range(7):
                m.add(exchange(f"Day {i}: I paddled on the lake.", "Nice!"), user_id="alice")
            HeldModel.gate.set()
            m.flush()
            assert m.stats("alice")["pending_extractions"] == 0
    finally:
        httpd.shutdown()
        httpd.server_close()
    calls = HeldModel.excerpts_per_call
    assert sum(calls) == 7
    assert max(calls) == batch  # the exchanges queued behind the held call go together


@pytest.mark.parametrize(
    "reply",
    ["Alice owns a kayak.", {"fact_text": "Alice owns a kayak."}, None, 7,
     ["Alice owns a kayak.", 5], ["Alice owns a kayak.", None]],
)
def test_an_extractor_reply_that_is_not_a_list_of_str_or_dict_is_a_failed_call(store, reply):
    with memforest.Memory(store, extractor=lambda messages: reply, embedder="none",
                          summarizer="none") as m:
        m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice")
        with pytest.raises(memforest.ModelCallError):
            m.flush()
        assert m.get_all(user_id="alice") == []  # not one memory per character, key or item
        assert m.stats("alice")["pending_extractions"] == 1


def test_an_extractor_reply_in_a_tuple_is_taken(store):
    with memforest.Memory(store, extractor=lambda messages: ("Alice owns a kayak.",),
                          embedder="none", summarizer="none") as m:
        m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice", wait=True)
        assert [r["text"] for r in m.get_all(user_id="alice")] == ["Alice owns a kayak."]


def test_a_failing_extractor_s_last_exception_is_in_the_flush_error(store):
    def extract(messages):
        raise RuntimeError("model down: 503 from the gateway")

    with memforest.Memory(store, extractor=extract, embedder="none", summarizer="none") as m:
        m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice")
        with pytest.raises(memforest.ModelCallError) as e:
            m.flush()
    message = str(e.value)
    assert "failed 4 times" in message
    assert "RuntimeError: model down: 503 from the gateway" in message


def test_an_extractor_reply_that_is_a_str_is_named_in_the_flush_error(store):
    with memforest.Memory(store, extractor=lambda messages: "Alice owns a kayak.",
                          embedder="none", summarizer="none") as m:
        m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice")
        with pytest.raises(memforest.ModelCallError,
                           match="the extractor returned a str .*not a list"):
            m.flush()


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_in_a_background_callable_is_raised_by_flush(store, exception):
    def extract(messages):
        raise exception("stop")

    with memforest.Memory(store, extractor=extract, embedder="none", summarizer="none") as m:
        m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice")
        with pytest.raises(exception):
            m.flush()
        assert m.stats("alice")["messages"] == 2  # the messages stay stored


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_in_a_callable_on_the_calling_thread_is_raised_as_is(store, exception):
    def embed(texts):
        raise exception("stop")

    with memforest.Memory(store, embedder=embed, summarizer="none") as m:
        with pytest.raises(exception):
            m.search("anything", user_id="alice")
        # A later failure of another kind is an ordinary ModelCallError.
    with memforest.Memory(store, embedder=lambda texts: "nope", summarizer="none") as m:
        with pytest.raises(memforest.ModelCallError, match="TypeError"):
            m.search("anything", user_id="alice")


def test_close_inside_a_callable_raises_instead_of_waiting_for_itself(store):
    raised = []
    holder = {}

    def extract(messages):
        try:
            holder["m"].close()
        except memforest.MemForestError as e:
            raised.append(str(e))
        return ["I bought a kayak."]

    m = memforest.Memory(store, extractor=extract, embedder="none", summarizer="none")
    holder["m"] = m
    done = threading.Event()
    worker = threading.Thread(
        target=lambda: (m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice"), m.flush(), done.set())
    )
    worker.start()
    worker.join(timeout=60)
    assert done.is_set(), "add and flush returned"
    assert raised and "inside an extractor" in raised[0], raised
    assert not m.closed
    m.close()


def test_ctrl_c_interrupts_a_flush_waiting_on_a_slow_model(store):
    release = threading.Event()
    answered = []

    def extract(messages):
        release.wait(60)
        answered.append(True)
        return ["Alice bought a kayak."]

    with memforest.Memory(store, extractor=extract, embedder="none", summarizer="none") as m:
        m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice")
        threading.Timer(0.3, _thread.interrupt_main).start()  # as Ctrl-C does
        with pytest.raises(KeyboardInterrupt):
            m.flush()
        assert not answered, "the interrupt waited for the model"
        # The background work went on: once the model answers, a flush completes.
        release.set()
        m.flush()
        assert [r["text"] for r in m.get_all(user_id="alice")] == ["Alice bought a kayak."]


REENTER = """
import sys, memforest
def embed(texts):
    m.search("paris", user_id="alice")  # re-enters until Python's recursion limit
    return [[1.0, 0.0] for _ in texts]
m = memforest.Memory(sys.argv[1], embedder=embed, summarizer="none")
m.add("I live in Paris.", user_id="alice")  # embedded on a background worker
try:
    m.flush()
except memforest.ModelCallError as e:
    print("raised", "RecursionError" in str(e))
"""


def test_a_callable_that_reenters_without_end_on_a_worker_raises_instead_of_crashing(store):
    # In a child process: a stack overflow would kill it (SIGSEGV), not fail an assert.
    r = subprocess.run([sys.executable, "-c", REENTER, str(store)], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "raised True", r.stdout[-2000:] + r.stderr[-2000:]


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_in_a_callable_add_waited_on_is_raised_by_flush(store, exception):
    def extract(messages):
        raise exception("stop")

    with memforest.Memory(store, extractor=extract, embedder="none", summarizer="none") as m:
        added = m.add(exchange("I bought a kayak.", "Nice boat!"), user_id="alice", wait=True)
        assert added["pending"] == 1 and added["messages"] == 2, added
        with pytest.raises(exception):
            m.flush()
