"""The Paris -> Berlin knowledge update with the default (heuristic) extractor, one exchange
at a time."""

import datetime as dt

from conftest import UTC, exchange


def test_a_later_move_supersedes_the_earlier_residence(mem):
    mem.add(exchange("I live in Paris.", "Paris is lovely!"), user_id="alice",
            timestamp=dt.datetime(2024, 1, 10, tzinfo=UTC))
    mem.add(exchange("I live in Berlin now.", "Berlin is great!"), user_id="alice",
            timestamp=dt.datetime(2024, 6, 10, tzinfo=UTC))
    hits = mem.search("Where does Alice live?", user_id="alice")
    paris = next(h for h in hits if "Paris." in h["text"])
    berlin = next(h for h in hits if "Berlin now" in h["text"])
    assert berlin["current"] and not paris["current"]
    assert paris["valid_until"] == dt.datetime(2024, 6, 10, tzinfo=UTC)
    latest = [h["text"] for h in mem.search("Where does Alice live?", user_id="alice",
                                            latest_only=True)]
    assert any("Berlin now" in t for t in latest)
    assert not any("I live in Paris" in t for t in latest)
    residence = [c for c in mem.profile("alice")["current"] if c["attribute"] == "residence"]
    assert [c["text"] for c in residence] == ["Alice: I live in Berlin now."]
    # As of March, Paris was current.
    march = mem.search("Where does Alice live?", user_id="alice", latest_only=True,
                       as_of=dt.datetime(2024, 3, 1, tzinfo=UTC))
    assert any("Paris" in h["text"] for h in march)
    assert not any("Berlin" in h["text"] for h in march)
