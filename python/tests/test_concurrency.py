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


def test_a_forked_child_neither_deadlocks_nor_uses_the_parents_store():
    run_python(
        """
        import os, tempfile, time, memforest
        base = tempfile.mkdtemp()
        parent = memforest.Memory(base + "/parent")
        parent.add("I like figs.", user_id="alice")
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                try:
                    parent.search("figs", user_id="alice")
                    code = 3
                except memforest.ClosedError:
                    pass
                with memforest.Memory(base + "/child") as child:
                    child.add("I like plums.", user_id="alice")
                    assert child.search("plums", user_id="alice")
                del parent  # dropping the inherited handle must not join the parent's threads
            except BaseException as e:
                print("child failed:", repr(e), flush=True)
                code = 2
            os._exit(code)
        deadline = time.time() + 60
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.time() > deadline:
                os.kill(pid, 9)
                raise SystemExit("the forked child hung")
            time.sleep(0.05)
        assert os.waitstatus_to_exitcode(status) == 0, status
        assert parent.search("figs", user_id="alice")
        parent.close()
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
            held = memforest.Memory(base + "/held")  # background threads running at fork
            held.add("I like figs.", user_id="alice")
            ctx = mp.get_context("fork")
            with ctx.Pool(2) as pool:
                counts = pool.map(work, [f"{base}/w{i}" for i in range(4)], chunksize=1)
            assert all(c >= 1 for c in counts), counts
            held.close()
        """
    )
