"""Reopen, the lock, erasure and users kept apart."""

import os

import pytest

import memforest
from conftest import exchange


def test_a_reopen_gives_the_same_answers(store):
    with memforest.Memory(store) as m:
        for i in range(20):
            m.add(exchange(f"My note number {i} is about topic{i}.", "Noted."), user_id="alice")
        before = m.search("topic7", user_id="alice")
        listed = m.get_all(user_id="alice")
    with memforest.Memory(store) as m:
        assert m.search("topic7", user_id="alice") == before
        assert m.get_all(user_id="alice") == listed
        assert m.stats("alice")["messages"] == 40


def test_acknowledged_adds_survive_a_store_dropped_without_close(store):
    m = memforest.Memory(store)
    m.add("I keep bees.", user_id="alice")
    del m  # no close: the buffered WAL is still in the OS
    with memforest.Memory(store) as m:
        assert any("bees" in h["text"] for h in m.search("bees", user_id="alice"))


def test_a_second_open_of_a_held_store_raises_locked(store):
    with memforest.Memory(store):
        with pytest.raises(memforest.LockedError):
            memforest.Memory(store)


def test_two_users_are_isolated(mem):
    mem.add("My favourite colour is teal.", user_id="alice")
    mem.add("My favourite colour is amber.", user_id="bob")
    alice = [h["text"] for h in mem.search("favourite colour", user_id="alice")]
    bob = [h["text"] for h in mem.search("favourite colour", user_id="bob")]
    assert any("teal" in t for t in alice) and not any("amber" in t for t in alice)
    assert any("amber" in t for t in bob) and not any("teal" in t for t in bob)
    bob_id = mem.get_all(user_id="bob")[0]["id"]
    assert mem.get(bob_id, user_id="alice") is None
    with pytest.raises(memforest.NotFoundError):
        mem.delete(bob_id, user_id="alice")
    mem.delete_all(user_id="alice")
    assert mem.get_all(user_id="alice") == []
    assert [r["id"] for r in mem.get_all(user_id="bob")] == [bob_id]


def grep(directory, needle):
    """The files under `directory` whose bytes contain `needle`."""
    found = []
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                if needle in f.read():
                    found.append(path)
    return found


def test_delete_all_then_purge_erases_the_bytes_from_every_file(store):
    secret = b"zebra-passport-8812"
    with memforest.Memory(store) as m:
        m.add(exchange(f"My passport number is {secret.decode()}.", "Noted."), user_id="bob")
        m.add("I like quiet mornings.", user_id="alice")
        m.flush()
    with memforest.Memory(store) as m:
        assert grep(store, secret), "the secret should be on disk before the purge"
        m.delete_all(user_id="bob")
        report = m.purge()
        assert report["files_after"] >= 0 and "bytes_before" in report
    assert grep(store, secret) == []
    with memforest.Memory(store) as m:
        assert m.search("passport", user_id="bob") == []
        assert any("mornings" in h["text"] for h in m.search("mornings", user_id="alice"))


def flip_a_byte_of_the_log(store):
    """Flips a byte in the middle of the store's newest write-ahead log segment."""
    wal = os.path.join(store, "wal")
    newest = sorted(n for n in os.listdir(wal) if n.endswith(".wal"))[-1]
    path = os.path.join(wal, newest)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x55
    with open(path, "wb") as f:
        f.write(data)
    return newest, bytes(data)


def test_a_damaged_log_refuses_and_repair_salvage_keeps_the_rest(store):
    with memforest.Memory(store) as m:
        for i in range(12):
            m.add(exchange(f"My note number {i} is about topic{i}.", "Noted."), user_id="alice")
    segment, damaged = flip_a_byte_of_the_log(store)
    with pytest.raises(memforest.CorruptStoreError, match=r"WAL.*repair\(path, salvage=True\)"):
        memforest.Memory(store)
    with pytest.raises(memforest.CorruptStoreError):
        memforest.repair(store)
    report = memforest.repair(store, salvage=True)
    assert report["wal_skipped"], report
    assert all(d["segment"] == int(segment[:-4]) for d in report["wal_skipped"]), report
    aside = segment + ".quarantine"
    assert aside in report["wal_set_aside"], report
    with open(os.path.join(store, "wal", aside), "rb") as f:
        assert f.read() == damaged
    with memforest.Memory(store) as m:
        assert 0 < m.stats("alice")["messages"] <= 24
        m.add("I keep bees.", user_id="alice")
        assert any("bees" in h["text"] for h in m.search("bees", user_id="alice"))
    with memforest.Memory(store) as m:  # and it stays open-able
        assert any("bees" in h["text"] for h in m.search("bees", user_id="alice"))


def test_a_cut_segment_file_refuses_naming_repair_and_its_cost(store):
    with memforest.Memory(store) as m:
        m.add("I keep bees.", user_id="alice")
        m.purge()  # the memories are now in a segment file
    segment = sorted(n for n in os.listdir(store) if n.endswith(".sst"))[-1]
    path = os.path.join(store, segment)
    os.truncate(path, os.path.getsize(path) // 2)
    with pytest.raises(memforest.CorruptStoreError) as e:
        memforest.Memory(store)
    message = str(e.value)
    assert segment in message and "memforest.repair(path) rebuilds" in message, message
    assert "salvage" not in message and "no longer read" in message, message


def test_the_open_report_names_a_stray_segment_file_the_open_set_aside(store):
    with memforest.Memory(store) as m:
        m.add("I keep bees.", user_id="alice")
        assert m.open_report()["quarantined"] == []
    stray = "00000000000000009999.sst"
    with open(os.path.join(store, stray), "wb") as f:
        f.write(b"not a segment file")
    with memforest.Memory(store) as m:
        report = m.open_report()
        assert report["quarantined"] == [stray + ".quarantine"], report
        [unlisted] = report["unlisted"]
        assert unlisted["name"] == stray and not unlisted["garbage"], report
        assert any("bees" in h["text"] for h in m.search("bees", user_id="alice"))
    with open(os.path.join(store, stray + ".quarantine"), "rb") as f:
        assert f.read() == b"not a segment file"  # set aside, not deleted


def test_repair_refuses_a_directory_that_is_no_store(tmp_path):
    with pytest.raises(memforest.InvalidInputError):
        memforest.repair(tmp_path)
    assert list(tmp_path.iterdir()) == []
