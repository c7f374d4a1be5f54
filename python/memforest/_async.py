"""`AsyncMemory`: `Memory` for asyncio code, each call run in a worker thread."""

import asyncio
import functools

from memforest._memforest import Memory


def _in_thread(name):
    method = getattr(Memory, name)

    @functools.wraps(method)
    async def call(self, *args, **kwargs):
        return await asyncio.to_thread(method, self._memory, *args, **kwargs)

    return call


class AsyncMemory:
    """A :class:`Memory` whose methods are coroutines: each runs in a worker thread
    (``asyncio.to_thread``), and the store releases the GIL while it works, so the event
    loop keeps running. Same arguments, results and exceptions as :class:`Memory`; use
    ``async with``, or ``await close()``. The store is opened when the object is created
    (``AsyncMemory(path, **options)`` takes ``Memory``'s arguments)."""

    def __init__(self, path, **options):
        self._memory = Memory(path, **options)

    @property
    def closed(self):
        """True once closed."""
        return self._memory.closed

    @property
    def path(self):
        """The store's directory."""
        return self._memory.path

    add = _in_thread("add")
    search = _in_thread("search")
    context = _in_thread("context")
    get = _in_thread("get")
    get_all = _in_thread("get_all")
    update = _in_thread("update")
    delete = _in_thread("delete")
    delete_all = _in_thread("delete_all")
    history = _in_thread("history")
    profile = _in_thread("profile")
    stats = _in_thread("stats")
    open_report = _in_thread("open_report")
    purge = _in_thread("purge")
    flush = _in_thread("flush")
    close = _in_thread("close")

    async def __aenter__(self):
        # ClosedError once closed; in a thread, as it waits for a close in progress.
        await asyncio.to_thread(self._memory.__enter__)
        return self

    async def __aexit__(self, exc_type, exc, tb):
        if not self._memory.closed:
            await self.close()

    def __repr__(self):
        return repr(self._memory).replace("memforest.Memory", "memforest.AsyncMemory", 1)
