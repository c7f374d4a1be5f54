"""MemForest: durable long-term memory for AI agents.

Open a store with :class:`Memory`; ``help(memforest.Memory)`` lists its methods::

    import memforest

    with memforest.Memory("./memory") as m:
        m.add([{"role": "user", "content": "I live in Paris."},
               {"role": "assistant", "content": "Lovely city!"}], user_id="alice")
        for hit in m.search("Where does Alice live?", user_id="alice"):
            print(hit["text"], hit["start"])
"""

from memforest._errors import (
    ClosedError,
    CorruptStoreError,
    InvalidInputError,
    LockedError,
    MemForestError,
    ModelCallError,
    NotFoundError,
)
from memforest._memforest import Memory, __version__

__all__ = [
    "ClosedError",
    "CorruptStoreError",
    "InvalidInputError",
    "LockedError",
    "MemForestError",
    "Memory",
    "ModelCallError",
    "NotFoundError",
    "__version__",
]
