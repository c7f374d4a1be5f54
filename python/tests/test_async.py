"""AsyncMemory: the same methods as coroutines."""

import asyncio

import pytest

import memforest


def test_async_memory_adds_and_searches_concurrently(store):
    async def main():
        async with memforest.AsyncMemory(store) as m:
            await asyncio.gather(*[
                m.add(f"I keep jar number {i} of honey.", user_id="alice", session_id=f"s{i}")
                for i in range(10)
            ])
            hits, stats = await asyncio.gather(
                m.search("honey jar 7", user_id="alice"), m.stats("alice"))
            assert any("jar number 7" in h["text"] for h in hits)
            assert stats["messages"] == 10
            (record,) = [r for r in await m.get_all(user_id="alice") if "number 3 " in r["text"]]
            new_id = await m.update(record["id"], "I keep jar 3 of jam.", user_id="alice")
            assert len(await m.history(new_id, user_id="alice")) == 2
            await m.flush()
        assert m.closed and "AsyncMemory" in repr(m)
        with pytest.raises(memforest.ClosedError):
            await m.search("honey", user_id="alice")

    asyncio.run(main())
