"""Every method of memforest.Memory, with the offline defaults."""

import asyncio
import datetime as dt

import pytest

import memforest
from conftest import UTC, exchange


def test_add_takes_a_string_a_dict_or_a_list_and_reports_what_it_stored(mem):
    added = mem.add("I play the cello.", user_id="alice")
    assert added["messages"] == 1 and added["duplicates"] == 0 and added["pending"] == 0
    assert len(added["memories"]) == 1 and len(added["memories"][0]) == 16
    one = mem.add({"role": "user", "content": "I have a dog named Rex."}, user_id="alice")
    assert one["messages"] == 1
    two = mem.add(exchange("I work as a nurse.", "A demanding job!"), user_id="alice")
    assert two["messages"] == 2 and two["conflicts"] == []
    assert mem.stats("alice")["messages"] == 4


def test_a_retried_add_with_message_ids_stores_nothing_twice(mem):
    msgs = [{"role": "user", "content": "I was born in Lyon.", "id": "m1"}]
    assert mem.add(msgs, user_id="alice", session_id="s1")["messages"] == 1
    again = mem.add(msgs, user_id="alice", session_id="s1")
    assert again["messages"] == 0 and again["duplicates"] == 1


def test_search_finds_the_memory_with_its_times_as_datetimes(mem):
    jan = dt.datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
    mem.add(exchange("I live in Paris and work as a nurse.", "Paris is lovely!"),
            user_id="alice", timestamp=jan)
    hits = mem.search("Where does Alice live?", user_id="alice", limit=5)
    assert 1 <= len(hits) <= 5
    top = hits[0]
    assert "Paris" in top["text"]
    assert top["start"] == jan and top["start"].tzinfo is not None
    assert top["current"] is True and top["valid_until"] is None
    assert isinstance(top["score"], float)
    assert top["sources"] == [{"session": "default", "messages": ["default#turn_0"]}]
    assert mem.search("Where does Alice live?", user_id="bob") == []


def test_search_time_window_and_session_scope(mem):
    mem.add("I visited Rome.", user_id="alice", run_id="trip1",
            timestamp=dt.datetime(2023, 5, 1, tzinfo=UTC))
    mem.add("I visited Oslo.", user_id="alice", run_id="trip2",
            timestamp=dt.datetime(2024, 5, 1, tzinfo=UTC))
    since = dt.datetime(2024, 1, 1, tzinfo=UTC)
    texts = [h["text"] for h in mem.search("Which city did I visit?", user_id="alice", since=since)]
    assert any("Oslo" in t for t in texts) and not any("Rome" in t for t in texts)
    texts = [h["text"] for h in mem.search("Which city did I visit?", user_id="alice", run_id="trip1")]
    assert any("Rome" in t for t in texts) and not any("Oslo" in t for t in texts)
    naive = dt.datetime(2024, 1, 1)  # read as UTC
    assert mem.search("Which city did I visit?", user_id="alice", since=naive) == \
        mem.search("Which city did I visit?", user_id="alice", since=since)


def test_search_and_context_keep_what_one_speaker_said(mem):
    mem.add([{"role": "user", "content": "I want to hike in the Alps.", "name": "Alice"},
             {"role": "user", "content": "I would rather hike in Norway.", "name": "Bob"}],
            user_id="alice")
    texts = [h["text"] for h in mem.search("Where to hike?", user_id="alice", speaker="bob")]
    assert texts == ["Bob: I would rather hike in Norway."]
    assert mem.search("Where to hike?", user_id="alice", speaker="Carol") == []
    assert "Alice: I want to hike in the Alps." in \
        mem.context("Where to hike?", user_id="alice", speaker="Alice")


def test_context_is_prompt_text_within_the_token_budget(mem):
    mem.add(exchange("I live in Paris.", "Nice!"), user_id="alice")
    text = mem.context("Where does Alice live?", user_id="alice", max_tokens=200)
    assert "Paris" in text and len(text) <= 4 * 200


def test_get_and_get_all_page_newest_first(mem):
    for month in (1, 2, 3):
        mem.add(f"In month {month} I bought a bike number {month}.", user_id="alice",
                timestamp=dt.datetime(2024, month, 1, tzinfo=UTC))
    everything = mem.get_all(user_id="alice")
    assert [r["start"].month for r in everything] == [3, 2, 1]
    assert mem.get_all(user_id="alice", limit=1, offset=1) == [everything[1]]
    record = mem.get(everything[0]["id"], user_id="alice")
    assert record == everything[0]
    assert set(record) == {"id", "text", "start", "end", "current", "valid_until", "sources"}
    assert mem.get(everything[0]["id"], user_id="bob") is None


def test_update_supersedes_and_history_keeps_both_versions(mem):
    mem.add(exchange("I live in Paris.", "Lovely."), user_id="alice",
            timestamp=dt.datetime(2024, 1, 10, tzinfo=UTC))
    paris = next(h["id"] for h in mem.search("Where do I live?", user_id="alice")
                 if "Paris" in h["text"])
    berlin = mem.update(paris, "Alice lives in Berlin.", user_id="alice")
    assert berlin != paris
    latest = mem.search("Where does Alice live?", user_id="alice", latest_only=True)
    ids = [h["id"] for h in latest]
    assert berlin in ids and paris not in ids
    versions = mem.history(berlin, user_id="alice")
    assert [v["id"] for v in versions] == [paris, berlin]
    assert versions[0]["valid_until"] is not None and versions[1]["valid_until"] is None
    assert mem.get(paris, user_id="alice")["current"] is False
    assert mem.get(berlin, user_id="alice")["current"] is True
    assert {m["id"] for m in mem.get_all(user_id="alice")} >= {paris, berlin}
    current = [m["id"] for m in mem.get_all(user_id="alice", latest_only=True)]
    assert berlin in current and paris not in current
    with pytest.raises(memforest.NotFoundError):
        mem.update(paris, "x", user_id="bob")


def test_delete_removes_one_memory(mem):
    added = mem.add("My locker code is 4417.", user_id="alice")
    (memory_id,) = added["memories"]
    deleted = mem.delete(memory_id, user_id="alice")
    assert deleted["memories"] == 1
    assert mem.get(memory_id, user_id="alice") is None
    with pytest.raises(memforest.NotFoundError):
        mem.delete(memory_id, user_id="alice")


def test_delete_all_of_a_session_or_a_user(mem):
    mem.add("I like tea.", user_id="alice", session_id="s1")
    mem.add("I like jazz.", user_id="alice", session_id="s2")
    assert mem.delete_all(user_id="alice", run_id="s1")["messages"] == 1
    texts = [r["text"] for r in mem.get_all(user_id="alice")]
    assert any("jazz" in t for t in texts) and not any("tea" in t for t in texts)
    assert mem.delete_all(user_id="alice")["messages"] == 1
    assert mem.get_all(user_id="alice") == []
    with pytest.raises(memforest.NotFoundError):
        mem.delete_all(user_id="alice")


def test_profile_names_the_current_values(mem):
    mem.add(exchange("I live in Paris.", "Nice."), user_id="alice")
    profile = mem.profile("alice")
    assert set(profile) == {"current", "user", "entities"}
    assert any("Paris" in c["text"] for c in profile["current"])


def test_flush_finishes_background_work(mem):
    mem.add(exchange("I run every morning.", "Great habit."), user_id="alice")
    mem.flush()
    stats = mem.stats("alice")
    assert stats["dirty_summaries"] == 0 and stats["pending_extractions"] == 0


def test_close_twice_and_use_after_close_raise(store):
    m = memforest.Memory(store)
    assert not m.closed and "open" in repr(m)
    m.close()
    assert m.closed and "closed" in repr(m)
    with pytest.raises(memforest.ClosedError):
        m.close()
    with pytest.raises(memforest.ClosedError):
        m.search("anything", user_id="alice")
    with pytest.raises(memforest.ClosedError):
        m.add("hello", user_id="alice")
    with pytest.raises(memforest.ClosedError):
        with m:
            pass

    async def enter_closed():
        a = memforest.AsyncMemory(store)
        await a.close()
        async with a:
            pass

    with pytest.raises(memforest.ClosedError):
        asyncio.run(enter_closed())


def test_context_manager_closes_and_tolerates_an_explicit_close(store):
    with memforest.Memory(store) as m:
        m.add("I like chess.", user_id="alice")
    assert m.closed
    with memforest.Memory(store) as m:
        m.close()
    assert m.closed


def test_results_are_json_ready_but_for_datetimes(mem):
    import json

    mem.add(exchange("I live in Paris.", "Nice."), user_id="alice")
    hits = mem.search("Paris", user_id="alice")
    assert json.loads(json.dumps(hits, default=lambda t: t.isoformat()))[0]["text"] == hits[0]["text"]


def test_read_only_open_reads_and_refuses_changes(store):
    with memforest.Memory(store) as m:
        m.add("I like chess.", user_id="alice")
    with memforest.Memory(store, read_only=True) as ro:
        assert any("chess" in h["text"] for h in ro.search("chess", user_id="alice"))
        with pytest.raises(memforest.MemForestError):
            ro.add("I like go.", user_id="alice")
        ro.flush()  # nothing runs in the background of a read-only store: nothing to wait for


def test_the_readme_lists_every_python_verb():
    import pathlib
    import re

    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    text = readme.read_text().split("with Mem0's verbs:", 1)[1].split("scoped by", 1)[0]
    listed = set(re.findall(r"`(\w+)`", text))
    verbs = {n for n in dir(memforest.Memory)
             if not n.startswith("_") and callable(getattr(memforest.Memory, n))}
    assert listed == verbs


@pytest.mark.parametrize("method", ["search", "get_all"])
def test_search_and_get_all_document_what_they_raise(method):
    doc = getattr(memforest.Memory, method).__doc__
    assert "Raises" in doc and "InvalidInputError" in doc and "TypeError" in doc
