"""Bad arguments raise clear exceptions and store nothing."""

import datetime as dt
import os
import re

import pytest

import memforest


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add("hi", user_id=5),
        lambda m: m.add(5, user_id="alice"),
        lambda m: m.add([5], user_id="alice"),
        lambda m: m.add({"role": "user", "content": 7}, user_id="alice"),
        lambda m: m.add("hi", user_id="alice", timestamp="2024-01-01"),
        lambda m: m.add("hi", user_id="alice", metadata={"k": 1}),
        lambda m: m.add([{"role": "user", "content": "hi", "timestamp": 3}], user_id="alice"),
        lambda m: m.search(b"bytes", user_id="alice"),
        lambda m: m.search("q", user_id="alice", limit="ten"),
        lambda m: m.search("q", user_id="alice", since=1700000000),
        lambda m: m.get(123, user_id="alice"),
    ],
)
def test_wrong_types_raise_type_error(mem, call):
    with pytest.raises(TypeError):
        call(mem)
    assert mem.get_all(user_id="alice") == []


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda m: m.add("hi", user_id="alice", limit=1), TypeError),
        (lambda m: m.add([], user_id="alice"), ValueError),
        (lambda m: m.add({"role": "robot", "content": "hi"}, user_id="alice"), ValueError),
        (lambda m: m.add({"content": "hi"}, user_id="alice"), ValueError),
        (lambda m: m.add("hi", user_id="alice", run_id="a", session_id="b"), ValueError),
    ],
)
def test_malformed_arguments_raise_value_errors(mem, call, error):
    with pytest.raises(error):
        call(mem)
    assert mem.get_all(user_id="alice") == []


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add("hi", user_id=""),
        lambda m: m.add("hi", user_id="a\0b"),
        lambda m: m.add("hi", user_id="u" * 100_000),
        lambda m: m.add("x" * 10_000_000, user_id="alice"),
        lambda m: m.add("", user_id="alice"),
        lambda m: m.add("hi", user_id="alice", agent_id=""),
        lambda m: m.add("hi", user_id="alice", metadata={"k" * 1000: "v"}),
        lambda m: m.get("not-an-id", user_id="alice"),
        lambda m: m.delete("zz" * 8, user_id="alice"),
        lambda m: m.search("q", user_id=""),
        lambda m: m.search("q", user_id="alice", limit=0),
        lambda m: m.search("q", user_id="alice", limit=10**9),
        lambda m: m.search("q", user_id="alice", limit=2**64 - 1),
        lambda m: m.context("q", user_id="alice", limit=10**12),
    ],
)
def test_inputs_over_the_limits_raise_invalid_input(mem, call):
    with pytest.raises(memforest.InvalidInputError) as e:
        call(mem)
    assert isinstance(e.value, ValueError) and str(e.value)
    assert mem.get_all(user_id="alice") == []


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda m: m.add("lone \ud800 surrogate", user_id="alice"), "messages[0]: "),
        (lambda m: m.add("hi", user_id="al\udcffice"), ""),
        (lambda m: m.add(["ok", {"role": "user", "content": "x\udfff"}], user_id="alice"),
         "messages[1].content: "),
        (lambda m: m.add({"role": "user", "content": "x", "name": "\ud800"}, user_id="alice"),
         "messages[0].name: "),
        (lambda m: m.search("q\ud800", user_id="alice"), ""),
    ],
)
def test_lone_surrogates_raise_value_errors_naming_the_message(mem, call, named):
    with pytest.raises(ValueError) as e:
        call(mem)
    assert str(e.value).startswith(named) and "surrogate" in str(e.value), str(e.value)
    assert mem.get_all(user_id="alice") == []


EAST = dt.timezone(dt.timedelta(hours=5))
WEST = dt.timezone(dt.timedelta(hours=-5))


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda m: m.add("x", user_id="alice",
                         timestamp=dt.datetime(1, 1, 1, 1, tzinfo=EAST)), "timestamp"),
        (lambda m: m.add({"role": "user", "content": "x",
                          "timestamp": dt.datetime(9999, 12, 31, 23, tzinfo=WEST)}, user_id="alice"),
         "messages[0].timestamp"),
        (lambda m: m.search("x", user_id="alice",
                            since=dt.datetime(9999, 12, 31, 23, tzinfo=WEST)), "since"),
        (lambda m: m.get_all(user_id="alice",
                             until=dt.datetime(1, 1, 1, 1, tzinfo=EAST)), "until"),
    ],
)
def test_a_datetime_out_of_range_in_utc_raises_value_error_naming_it(mem, call, what):
    with pytest.raises(ValueError, match=rf"^{re.escape(what)}: out of range in UTC"):
        call(mem)
    assert mem.get_all(user_id="alice") == []


def test_missing_things_raise_not_found(mem):
    with pytest.raises(memforest.NotFoundError) as e:
        mem.history("00000000000000ff", user_id="alice")
    assert isinstance(e.value, KeyError) and "00000000000000ff" in str(e.value)
    with pytest.raises(memforest.NotFoundError):
        mem.delete_all(user_id="nobody")
    assert mem.get("00000000000000ff", user_id="alice") is None


def test_bad_options_raise_before_anything_is_opened(tmp_path):
    path = str(tmp_path / "m")
    with pytest.raises(ValueError):
        memforest.Memory(path, durability="sometimes")
    with pytest.raises(ValueError):
        memforest.Memory(path, pool=0)
    with pytest.raises(ValueError, match="extract_batch"):
        memforest.Memory(path, extract_batch=0)
    with pytest.raises(ValueError, match="summary_batch"):
        memforest.Memory(path, summary_batch=0)
    with pytest.raises(ValueError):
        memforest.Memory(path, embedder="word2vec")
    with pytest.raises(TypeError):
        memforest.Memory(path, embedder=42)
    with pytest.raises(memforest.InvalidInputError):
        memforest.Memory(path, extractor="openai")
    with pytest.raises(memforest.InvalidInputError):
        memforest.Memory(path, embedder="openai", llm_url="http://127.0.0.1:9/v1")
    with pytest.raises(TypeError):
        memforest.Memory(path, unknown_option=1)
    # A mistyped pool size starts no thread (each pool starts all of its threads).
    threads = len(os.listdir("/proc/self/task"))
    with pytest.raises(memforest.InvalidInputError,
                       match=r"^pool may have at most 1024 workers, got 100000$"):
        memforest.Memory(path, pool=100_000)
    assert len(os.listdir("/proc/self/task")) <= threads + 1
    assert not os.path.exists(path), "nothing created"


def test_a_directory_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(memforest.MemForestError):
        memforest.Memory(str(tmp_path))
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_timestamps_in_other_timezones_are_converted_to_utc(mem):
    paris = dt.timezone(dt.timedelta(hours=1))
    mem.add("I woke at seven.", user_id="alice", timestamp=dt.datetime(2024, 1, 1, 8, tzinfo=paris))
    (record,) = mem.get_all(user_id="alice")
    assert record["start"] == dt.datetime(2024, 1, 1, 7, tzinfo=dt.timezone.utc)


class _Plus2(dt.tzinfo):
    """A custom fixed-offset tzinfo (UTC+2), not a `datetime.timezone`."""

    def utcoffset(self, d):
        return dt.timedelta(hours=2)

    def dst(self, d):
        return dt.timedelta(0)

    def tzname(self, d):
        return "PLUS2"


def test_zoneinfo_and_custom_tzinfo_datetimes_are_converted_to_utc(mem):
    zoneinfo = pytest.importorskip("zoneinfo")
    paris = zoneinfo.ZoneInfo("Europe/Paris")
    utc = dt.timezone.utc
    # Paris is UTC+1 in January, UTC+2 in July.
    mem.add("I woke at eight.", user_id="alice",
            timestamp=dt.datetime(2024, 1, 15, 9, tzinfo=paris))
    mem.add({"role": "user", "content": "I swam at noon.",
             "timestamp": dt.datetime(2024, 7, 15, 14, tzinfo=_Plus2())}, user_id="bob")
    mem.add([{"role": "user", "content": "I ran at six.",
              "timestamp": dt.datetime(2024, 7, 15, 8, tzinfo=paris)}], user_id="carol")
    (a,) = mem.get_all(user_id="alice")
    assert a["start"] == dt.datetime(2024, 1, 15, 8, tzinfo=utc)
    (b,) = mem.get_all(user_id="bob")
    assert b["start"] == dt.datetime(2024, 7, 15, 12, tzinfo=utc)
    (c,) = mem.get_all(user_id="carol")
    assert c["start"] == dt.datetime(2024, 7, 15, 6, tzinfo=utc)
    # since/until/as_of take them too, converted the same way.
    start = dt.datetime(2024, 1, 15, 9, tzinfo=paris)
    assert [r["id"] for r in mem.get_all(user_id="alice", since=start, until=start)] == [a["id"]]
    assert mem.get_all(user_id="alice", since=dt.datetime(2024, 1, 15, 9, 1, tzinfo=paris)) == []
    hits = mem.search("woke", user_id="alice", since=start, until=start,
                      as_of=dt.datetime(2030, 1, 1, tzinfo=_Plus2()))
    assert [h["id"] for h in hits] == [a["id"]]
    assert mem.context("woke", user_id="alice", as_of=dt.datetime(2030, 1, 1, tzinfo=paris))


def test_naive_datetimes_are_read_as_utc(mem):
    mem.add("I woke at seven.", user_id="alice", timestamp=dt.datetime(2024, 1, 1, 7))
    (record,) = mem.get_all(user_id="alice", since=dt.datetime(2024, 1, 1, 7),
                            until=dt.datetime(2024, 1, 1, 7))
    assert record["start"] == dt.datetime(2024, 1, 1, 7, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    "call, what, got",
    [
        (lambda m: m.add("hi", user_id="alice", timestamp="2024-01-01"), "timestamp", "str"),
        (lambda m: m.add("hi", user_id="alice", timestamp=dt.date(2024, 1, 1)), "timestamp",
         "date"),
        (lambda m: m.search("q", user_id="alice", since=1700000000), "since", "int"),
        (lambda m: m.search("q", user_id="alice", until=1.5), "until", "float"),
        (lambda m: m.get_all(user_id="alice", until="now"), "until", "str"),
        (lambda m: m.context("q", user_id="alice", as_of=b"x"), "as_of", "bytes"),
    ],
)
def test_a_time_that_is_not_a_datetime_names_the_type_it_got(mem, call, what, got):
    with pytest.raises(TypeError) as e:
        call(mem)
    assert str(e.value) == f"{what}: expected a datetime.datetime, got {got}"


BIG = "from 0 to 2**64-1"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.search("q", user_id="alice", limit=-1),
         "limit must be an int from 1 to 1000, got -1"),
        (lambda m: m.search("q", user_id="alice", limit=10**30),
         "limit must be an int from 1 to 1000, got " + str(10**30)),
        (lambda m: m.search("q", user_id="alice", limit=10**9),
         "limit must be an int from 1 to 1000, got 1000000000"),
        (lambda m: m.context("q", user_id="alice", limit=-3),
         "limit must be an int from 1 to 1000, got -3"),
        (lambda m: m.context("q", user_id="alice", max_tokens=-5),
         f"max_tokens must be an int {BIG}, got -5"),
        (lambda m: m.context("q", user_id="alice", max_tokens=2**64),
         f"max_tokens must be an int {BIG}, got {2**64}"),
        (lambda m: m.get_all(user_id="alice", offset=-1), f"offset must be an int {BIG}, got -1"),
        (lambda m: m.get_all(user_id="alice", limit=-1), f"limit must be an int {BIG}, got -1"),
        (lambda m: m.get_all(user_id="alice", limit=10**5000),
         f"limit must be an int {BIG}, got an int of 16610 bits"),
        (lambda m: m.get_all(user_id="alice", offset=-(10**5000)),
         f"offset must be an int {BIG}, got a negative int of 16610 bits"),
    ],
)
def test_integers_out_of_range_name_the_argument_and_its_range(mem, call, message):
    with pytest.raises(memforest.InvalidInputError, match=f"^{re.escape(message)}$"):
        call(mem)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda m: m.search("q", user_id="alice", limit=True), "limit"),
        (lambda m: m.context("q", user_id="alice", max_tokens=False), "max_tokens"),
        (lambda m: m.get_all(user_id="alice", offset=True), "offset"),
        (lambda m: m.get_all(user_id="alice", limit=2.0), "limit"),
        (lambda m: m.search("q", user_id="alice", limit="ten"), "limit"),
    ],
)
def test_integer_arguments_refuse_bools_and_other_types(mem, call, name):
    with pytest.raises(TypeError, match=f"^{name} must be an int, not "):
        call(mem)


def test_integer_arguments_take_objects_with_index(mem):
    class Three:
        def __index__(self):
            return 3

    mem.add("I live in Paris.", user_id="alice")
    assert len(mem.search("Paris", user_id="alice", limit=Three())) == 1
    assert len(mem.get_all(user_id="alice", limit=Three(), offset=Three())) == 0


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("pool", -1, "pool must be an int from 1 to 2**64-1, got -1"),
        ("extract_batch", 0, "extract_batch must be an int from 1 to 2**64-1, got 0"),
        ("summary_batch", 10**30, "summary_batch must be an int from 1 to 2**64-1, got "
         + str(10**30)),
    ],
)
def test_integer_options_out_of_range_name_the_option_and_its_range(tmp_path, option, value,
                                                                    message):
    with pytest.raises(memforest.InvalidInputError, match=f"^{re.escape(message)}$"):
        memforest.Memory(str(tmp_path / "m"), **{option: value})
    with pytest.raises(TypeError, match=f"^{option} must be an int, not bool$"):
        memforest.Memory(str(tmp_path / "m"), **{option: True})


@pytest.mark.parametrize(
    "messages, message",
    [
        ({"role": "user", "content": "hi", "name": {"x": 1}},
         "messages[0].name: expected str, got dict"),
        ({"role": "user", "content": "hi", "id": 5}, "messages[0].id: expected str, got int"),
        ({"role": "user", "content": 7}, "messages[0].content: expected str, got int"),
        ([{"role": 3, "content": "hi"}], "messages[0].role: expected str, got int"),
        (["hello", {"role": "user", "content": "hi", "timestamp": 3}],
         "messages[1].timestamp: expected a datetime.datetime, got int"),
        (["hello", 5], "messages[1]: expected str or dict, got int"),
        (["hello", {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}],
         "messages[1].content: expected str, got list (only text strings are accepted: join "
         "the text parts of a content list into one string)"),
    ],
)
def test_a_malformed_message_names_its_index_and_field(mem, messages, message):
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        mem.add(messages, user_id="alice")
    assert mem.get_all(user_id="alice") == []


@pytest.mark.parametrize(
    "messages, message",
    [
        ({"role": "robot", "content": "hi"},
         'messages[0].role: expected "user", "assistant" or "system", got "robot"'),
        (["hi", {"content": "hi"}], 'messages[1]: "role" is missing'),
        (["hi", {"role": "user", "content": None}], 'messages[1]: "content" is missing'),
    ],
)
def test_a_message_with_a_bad_value_names_its_index_and_field(mem, messages, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        mem.add(messages, user_id="alice")
    assert mem.get_all(user_id="alice") == []
