"""Type stubs of the memforest package (the native `Memory` and the exceptions)."""

import datetime
import os
from types import TracebackType
from typing import Any, Callable, Literal, Optional, Sequence, TypedDict, Union

__version__: str

class MemForestError(Exception): ...
class CorruptStoreError(MemForestError): ...
class LockedError(MemForestError): ...
class InvalidInputError(MemForestError, ValueError): ...
class NotFoundError(MemForestError, KeyError): ...
class ModelCallError(MemForestError): ...
class ClosedError(MemForestError): ...

class _MessageRequired(TypedDict):
    role: Literal["user", "assistant", "system"]
    content: str

class MessageDict(_MessageRequired, total=False):
    """One message given to `Memory.add`. `content` is a text string: an OpenAI-style list of
    content parts (`[{"type": "text", "text": ...}]`) is refused (`TypeError`); join its text
    first."""

    name: str
    id: str
    timestamp: datetime.datetime

class Source(TypedDict):
    """Where a memory was said: a session and its message ids."""

    session: str
    messages: list[str]

class MemoryDict(TypedDict):
    """One stored memory (`get`, `get_all`, `history`)."""

    id: str
    text: str
    start: Optional[datetime.datetime]
    end: Optional[datetime.datetime]
    current: bool
    valid_until: Optional[datetime.datetime]
    sources: list[Source]

class HitDict(MemoryDict):
    """One memory a search found."""

    score: float

class AddedDict(TypedDict):
    """What `add` stored."""

    messages: int
    duplicates: int
    conflicts: list[str]
    memories: list[str]
    pending: int

class DeletedDict(TypedDict):
    """What `delete` and `delete_all` removed."""

    messages: int
    memories: int
    memories_updated: int

class CurrentValueDict(TypedDict):
    subject: str
    attribute: str
    id: str
    text: str
    since: Optional[datetime.datetime]

class EntityDict(TypedDict):
    entity: str
    summary: str
    heat: float

class ProfileDict(TypedDict):
    """What the memory holds about a user now (`profile`)."""

    current: list[CurrentValueDict]
    user: Optional[str]
    entities: list[EntityDict]

class StatsDict(TypedDict):
    sessions: int
    messages: int
    memories: int
    trees: int
    dirty_summaries: int
    pending_extractions: int
    failed_extractions: int

class PurgeDict(TypedDict):
    files_before: int
    bytes_before: int
    files_after: int
    bytes_after: int
    wal_segments_removed: int

class WalDamageDict(TypedDict):
    segment: int
    offset: int
    reason: str
    seqnos: Optional[list[int]]  # [first, last]
    lost: Optional[list[int]]  # [first, last]
    lost_after: Optional[int]

class WalGapDict(TypedDict):
    first: int
    last: int
    first_seqno: int
    last_seqno: int

class UnlistedFileDict(TypedDict):
    name: str
    garbage: bool
    reason: str

class OpenReportDict(TypedDict):
    quarantined: list[str]
    unlisted: list[UnlistedFileDict]
    manifest_torn_tail: Optional[int]
    wal_missing: list[int]
    wal_quarantined: list[str]
    wal_skipped: list[WalDamageDict]
    wal_torn_tail: Optional[list[int]]  # [segment, offset]

class RepairDict(TypedDict):
    adopted: list[str]
    unquarantined: list[str]
    unreadable: list[list[str]]  # [file name, why]
    foreign: list[list[Any]]  # [file name, seqno]
    previous_manifest: Optional[str]
    wal_lost: list[int]
    segments_lost: list[str]
    wal_gaps: list[WalGapDict]
    wal_set_aside: list[str]
    wal_skipped: list[WalDamageDict]
    wal_segments: int
    entries: int

def repair(path: Union[str, os.PathLike[str]], *, salvage: bool = False) -> RepairDict:
    """Rebuild a store no `Memory` opens; `salvage=True` reads past a damaged log."""

# A list or a tuple (other sequences are refused with TypeError).
Messages = Union[
    str, MessageDict, list[Union[str, MessageDict]], tuple[Union[str, MessageDict], ...]
]
ExtractedItem = Union[str, dict[str, Any]]
# A reply of any other type (a `str` included) is a failed model call.
Extractor = Callable[
    [list[dict[str, Any]]], Union[list[ExtractedItem], tuple[ExtractedItem, ...]]
]
Embedder = Callable[[list[str]], Sequence[Sequence[float]]]
Summarizer = Callable[[list[str]], str]

class Memory:
    """A MemForest memory store; see `help(memforest.Memory)`."""

    def __init__(
        self,
        path: Union[str, os.PathLike[str]],
        *,
        extractor: Union[Literal["heuristic", "openai"], Extractor, None] = None,
        summarizer: Union[Literal["extractive", "openai", "none"], Summarizer, None] = None,
        embedder: Union[Literal["static", "openai", "none"], Embedder, None] = None,
        llm_url: Optional[str] = None,
        llm_model: Optional[str] = None,
        embed_model: Optional[str] = None,
        api_key_env: Optional[str] = None,
        durability: Optional[Literal["buffered", "sync_data", "sync_all"]] = None,
        pool: Optional[int] = None,
        extract_batch: Optional[int] = None,
        summary_batch: Optional[int] = None,
        read_only: bool = False,
    ) -> None: ...
    def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        timestamp: Optional[datetime.datetime] = None,
        metadata: Optional[dict[str, str]] = None,
        wait: bool = False,
    ) -> AddedDict: ...
    def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 10,
        since: Optional[datetime.datetime] = None,
        until: Optional[datetime.datetime] = None,
        latest_only: bool = False,
        as_of: Optional[datetime.datetime] = None,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        speaker: Optional[str] = None,
    ) -> list[HitDict]:
        """The user's memories that best answer `query`, best first.

        Raises `InvalidInputError` for a bad user, session or agent name or a `limit`
        outside 1 to 1000; `TypeError` for an argument of the wrong type (a `bool` as `limit`,
        a time that is not a `datetime`); `ValueError` for a `run_id` and a `session_id`
        that differ; `ModelCallError` when the embedder fails on the query; `ClosedError`
        once closed.
        """
    def context(
        self,
        query: str,
        *,
        user_id: str,
        max_tokens: int = 1000,
        limit: int = 10,
        latest_only: bool = False,
        as_of: Optional[datetime.datetime] = None,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        speaker: Optional[str] = None,
    ) -> str:
        """A prompt-ready text for `query` from the user's memory.

        Raises as `search` does, and `InvalidInputError` for a negative `max_tokens`.
        """
    def get(self, memory_id: str, *, user_id: str) -> Optional[MemoryDict]: ...
    def get_all(
        self,
        *,
        user_id: str,
        limit: int = 100,
        offset: int = 0,
        since: Optional[datetime.datetime] = None,
        until: Optional[datetime.datetime] = None,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        latest_only: bool = False,
    ) -> list[MemoryDict]:
        """The user's memories newest first, `limit` of them after skipping `offset`.

        Raises `InvalidInputError` for a bad user, session or agent name or a negative
        `limit` or `offset`; `TypeError` for an argument of the wrong type (a `bool` as
        `limit` or `offset`, a time that is not a `datetime`); `ValueError` for a `run_id`
        and a `session_id` that differ; `ClosedError` once closed.
        """
    def update(self, memory_id: str, text: str, *, user_id: str) -> str: ...
    def delete(self, memory_id: str, *, user_id: str) -> DeletedDict: ...
    def delete_all(
        self, *, user_id: str, run_id: Optional[str] = None, session_id: Optional[str] = None
    ) -> DeletedDict: ...
    def history(self, memory_id: str, *, user_id: str) -> list[MemoryDict]: ...
    def profile(self, user_id: str) -> ProfileDict: ...
    def stats(self, user_id: str) -> StatsDict: ...
    def open_report(self) -> OpenReportDict: ...
    def purge(self) -> PurgeDict: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...
    def __enter__(self) -> "Memory": ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None: ...

class AsyncMemory:
    """`Memory` with coroutine methods, each run in a worker thread."""

    def __init__(
        self,
        path: Union[str, os.PathLike[str]],
        *,
        extractor: Union[Literal["heuristic", "openai"], Extractor, None] = None,
        summarizer: Union[Literal["extractive", "openai", "none"], Summarizer, None] = None,
        embedder: Union[Literal["static", "openai", "none"], Embedder, None] = None,
        llm_url: Optional[str] = None,
        llm_model: Optional[str] = None,
        embed_model: Optional[str] = None,
        api_key_env: Optional[str] = None,
        durability: Optional[Literal["buffered", "sync_data", "sync_all"]] = None,
        pool: Optional[int] = None,
        extract_batch: Optional[int] = None,
        summary_batch: Optional[int] = None,
        read_only: bool = False,
    ) -> None: ...
    async def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        timestamp: Optional[datetime.datetime] = None,
        metadata: Optional[dict[str, str]] = None,
        wait: bool = False,
    ) -> AddedDict: ...
    async def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 10,
        since: Optional[datetime.datetime] = None,
        until: Optional[datetime.datetime] = None,
        latest_only: bool = False,
        as_of: Optional[datetime.datetime] = None,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        speaker: Optional[str] = None,
    ) -> list[HitDict]: ...
    async def context(
        self,
        query: str,
        *,
        user_id: str,
        max_tokens: int = 1000,
        limit: int = 10,
        latest_only: bool = False,
        as_of: Optional[datetime.datetime] = None,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        speaker: Optional[str] = None,
    ) -> str: ...
    async def get(self, memory_id: str, *, user_id: str) -> Optional[MemoryDict]: ...
    async def get_all(
        self,
        *,
        user_id: str,
        limit: int = 100,
        offset: int = 0,
        since: Optional[datetime.datetime] = None,
        until: Optional[datetime.datetime] = None,
        agent_id: Optional[str] = None,
        run_id: Optional[str] = None,
        session_id: Optional[str] = None,
        latest_only: bool = False,
    ) -> list[MemoryDict]: ...
    async def update(self, memory_id: str, text: str, *, user_id: str) -> str: ...
    async def delete(self, memory_id: str, *, user_id: str) -> DeletedDict: ...
    async def delete_all(
        self, *, user_id: str, run_id: Optional[str] = None, session_id: Optional[str] = None
    ) -> DeletedDict: ...
    async def history(self, memory_id: str, *, user_id: str) -> list[MemoryDict]: ...
    async def profile(self, user_id: str) -> ProfileDict: ...
    async def stats(self, user_id: str) -> StatsDict: ...
    async def open_report(self) -> OpenReportDict: ...
    async def purge(self) -> PurgeDict: ...
    async def flush(self) -> None: ...
    async def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> str: ...
    async def __aenter__(self) -> "AsyncMemory": ...
    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None: ...
