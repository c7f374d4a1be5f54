"""The README's Python quickstart: Alice moves from Paris to Berlin, then is forgotten."""

import datetime as dt
import tempfile

import memforest

path = tempfile.mkdtemp() + "/memory"
date = lambda month, day: dt.datetime(2024, month, day, tzinfo=dt.timezone.utc)  # noqa: E731

with memforest.Memory(path) as memory:  # offline defaults: no model server, no network
    for when, said, answer in [
        (date(1, 10), "I live in Paris.", "Paris is lovely."),
        (date(2, 14), "My sister Emma is a nurse.", "Noted."),
        (date(4, 2), "I live in Berlin now.", "Welcome!"),
    ]:  # one exchange at a time
        memory.add([{"role": "user", "content": said, "name": "Alice"},
                    {"role": "assistant", "content": answer}],
                   user_id="alice", timestamp=when)
    for hit in memory.search("Where does Alice live?", user_id="alice", limit=3):
        print(hit["id"], f"{hit['score']:.2f}", hit["text"], "current" if hit["current"]
              else f"until {hit['valid_until']:%Y-%m-%d}")  # Berlin current, Paris until April
    print(memory.context("Where does Alice live?", user_id="alice", max_tokens=200))
    memory.delete_all(user_id="alice")
    memory.purge()  # their bytes leave every file (the user id stays: the delete's bounds)

with memforest.Memory(path) as memory:  # durable: a reopen gives the same answers
    print("after delete_all and reopen:", len(memory.get_all(user_id="alice")), "memories")
