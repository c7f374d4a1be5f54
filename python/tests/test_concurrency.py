"""Threads sharing one Memory, the GIL released during calls, and fork safety."""

import threading

from conftest import run_python


def test_threads_add_and_search_concurrently(mem):
    errors = []

    def writer(t):
        try:
            for i in range(25):
                mem.add([{"role": "user", "content": f"Thread {t} fact {i}: I own item{t}x{i}.",
                          "id": f"t{t}-{i}"}], user_id="alice", session_id=f"s{t}")
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    def reader():
        try:
            for _ in range(50):
                mem.search("Which items do I own?", user_id="alice")
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []
    assert mem.stats("alice")["messages"] == 100
    assert mem.stats("alice")["sessions"] == 4
    hits = mem.search("item2x13", user_id="alice")
    assert any("item2x13" in h["text"] for h in hits)


def test_a_python_embedder_runs_on_worker_threads_while_add_waits():
    # The embedder is called from the memory layer's worker threads while `add` waits for
    # them: with the GIL held by `add` this would deadlock (the child would hang).
    run_python(
        """
        import tempfile, threading, memforest
        calls = []
        def embed(texts):
            calls.append(threading.get_ident())
            return [[float(len(t)), 1.0, float(t.count("e"))] for t in texts]
        with memforest.Memory(tempfile.mkdtemp() + "/m", embedder=embed) as m:
            for i in range(5):
                m.add(f"I planted tree number {i}.", user_id="alice")
            m.flush()
            assert m.search("tree", user_id="alice")
        assert calls and any(c != threading.get_ident() for c in calls), calls
        """
    )


FORK_CHILD = """
import os, sys, time, memforest

def fork_and_wait(child):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            child()
        except BaseException as e:
            print("child failed:", repr(e), flush=True)
            code = 2
        os._exit(code)
    deadline = time.time() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.time() > deadline:
            os.kill(pid, 9)
            raise SystemExit("the forked child hung")
        time.sleep(0.05)
"""


def test_a_child_forked_while_a_store_is_open_raises_instead_of_hanging():
    run_python(
        FORK_CHILD
        + """
import tempfile
base = tempfile.mkdtemp()
parent = memforest.Memory(base + "/parent")
parent.add("I like figs.", user_id="alice")

def child():
    global parent
    assert parent.closed
    try:
        parent.search("figs", user_id="alice")
        raise AssertionError("the inherited handle worked")
    except memforest.ClosedError as e:
        assert "before a fork" in str(e), e
    try:
        memforest.Memory(base + "/child")
        raise AssertionError("opened a store in a child forked while one was open")
    except memforest.MemForestError as e:
        assert "forked while" in str(e), e
    parent.__exit__(None, None, None)  # a with-block ending in the child: no-op
    del parent  # must not join the parent's threads

assert fork_and_wait(child) == 0
assert parent.search("figs", user_id="alice")  # the parent's handle is unaffected
parent.close()
"""
    )


def test_a_child_forked_after_the_parent_closed_its_store_opens_stores():
    run_python(
        FORK_CHILD
        + """
import tempfile
base = tempfile.mkdtemp()
with memforest.Memory(base + "/parent") as parent:
    parent.add("I like figs.", user_id="alice")

def child():
    with memforest.Memory(base + "/child") as m:
        m.add("I like plums.", user_id="alice")
        assert m.search("plums", user_id="alice")
    with memforest.Memory(base + "/parent") as m:  # the parent's store, now free
        assert m.search("figs", user_id="alice")

for _ in range(3):
    assert fork_and_wait(child) == 0
"""
    )


def test_multiprocessing_fork_workers_open_their_own_stores():
    run_python(
        """
        import multiprocessing as mp, tempfile, memforest

        def work(path):
            with memforest.Memory(path) as m:
                m.add(f"I stored a note in {path}.", user_id="alice")
                return len(m.search("note", user_id="alice"))

        if __name__ == "__main__":
            base = tempfile.mkdtemp()
            with memforest.Memory(base + "/setup") as m:  # closed before the pool forks
                m.add("I like figs.", user_id="alice")
            ctx = mp.get_context("fork")
            with ctx.Pool(2) as pool:
                counts = pool.map(work, [f"{base}/w{i}" for i in range(4)], chunksize=1)
            assert all(c >= 1 for c in counts), counts

            held = memforest.Memory(base + "/held")  # open while the next pool forks
            with ctx.Pool(1) as pool:
                try:
                    pool.apply(work, (base + "/w9",))
                    raise AssertionError("a worker forked while a store was open opened one")
                except memforest.MemForestError as e:
                    assert "forked while" in str(e), e
            held.close()
        """
    )
