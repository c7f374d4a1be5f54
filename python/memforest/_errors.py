"""The exceptions MemForest raises. Every one is a ``MemForestError``."""


class MemForestError(Exception):
    """A MemForest call failed (the base class; the message says why)."""


class CorruptStoreError(MemForestError):
    """Stored bytes failed their checks; the message names the file and byte offset."""


class LockedError(MemForestError):
    """Another open ``Memory`` (in this or another process) holds the store's lock."""


class InvalidInputError(MemForestError, ValueError):
    """An argument breaks a limit (an empty or too long name, a message over the size
    limit, a malformed memory id, a session of another agent); nothing was stored."""


class NotFoundError(MemForestError, KeyError):
    """The memory, session or user named does not exist; nothing was changed."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ModelCallError(MemForestError):
    """An extractor, summarizer or embedder call failed (the work stays queued)."""


class ClosedError(MemForestError):
    """The ``Memory`` is closed, or was opened by the parent of this forked process."""
