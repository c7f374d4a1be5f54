"""MemForest: durable long-term memory for AI agents.

Open a store with :class:`Memory`; ``help(memforest.Memory)`` lists its methods::

    import memforest

    with memforest.Memory("./memory") as m:
        m.add([{"role": "user", "content": "I live in Paris."},
               {"role": "assistant", "content": "Lovely city!"}], user_id="alice")
        for hit in m.search("Where does Alice live?", user_id="alice"):
            print(hit["text"], hit["start"])

:class:`AsyncMemory` has the same methods as coroutines.
"""

import os

from memforest._errors import (
    ClosedError,
    CorruptStoreError,
    InvalidInputError,
    LockedError,
    MemForestError,
    ModelCallError,
    NotFoundError,
)
from memforest import _memforest
from memforest._memforest import Memory, __version__, repair
from memforest._async import AsyncMemory

__all__ = [
    "AsyncMemory",
    "ClosedError",
    "CorruptStoreError",
    "InvalidInputError",
    "LockedError",
    "MemForestError",
    "Memory",
    "ModelCallError",
    "NotFoundError",
    "__version__",
    "repair",
]

# A child forked while a store is open must not open stores (see Memory's docstring).
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_memforest._after_fork_in_child)
