//! [`MemoryError`]: what the memory layer fails with (`Memory::ingest_session`,
//! `Memory::flush_summaries`).

use memforest_tree::TreeError;

use crate::memory::limits::SessionInputError;

/// Memory-layer failures. New variants may be added in a minor release: a `match` on it
/// needs a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// An engine read or write failed.
    #[error(transparent)]
    Engine(#[from] memforest_engine::Error),
    /// A MemTree operation failed (corrupt page, store error).
    #[error("memtree: {0}")]
    Tree(#[from] TreeError),
    /// A stored record failed to decode.
    #[error("corrupt {what} record: {detail}")]
    Corrupt {
        /// Which record.
        what: &'static str,
        /// The decoder's message (with its byte offset).
        detail: String,
    },
    /// The session given to `Memory::ingest_session` breaks an input limit
    /// (`memory::limits`); nothing was written.
    #[error("invalid input: {0}")]
    Input(#[from] SessionInputError),
    /// A user, session or other name given to the `Memory` API is empty, too long or holds
    /// NUL, or another argument is empty or too long (an update's text, a search's
    /// question); nothing was written. The message names the field and the limit.
    #[error("invalid input: {0}")]
    Name(#[from] memforest_engine::InputError),
    /// A string given as a memory id is not one.
    #[error(transparent)]
    BadId(#[from] crate::api::BadMemoryId),
    /// What a `Memory` call names does not exist (a memory id, a session, a user); nothing
    /// was changed.
    #[error("no {what} {id:?}{}", if *what == "user" { String::new() } else { format!(" for user {user:?}") })]
    NotFound {
        /// What kind of thing (`"memory"`, `"message"`, `"session"`, `"user"`).
        what: &'static str,
        /// Its id as given.
        id: String,
        /// The user it was looked up for.
        user: String,
    },
    /// `Memory::add_with` named an agent for a session that belongs to another agent;
    /// nothing was stored.
    #[error("session {session:?} belongs to agent {stored:?}, not {given:?}; nothing was stored")]
    AgentConflict {
        /// The session id.
        session: String,
        /// The agent it belongs to.
        stored: String,
        /// The agent given.
        given: String,
    },
    /// `Memory::add` was given a new message id of the form `{session}#turn_{n}`, which
    /// the messages without an id are given, with `n` not below the number of messages
    /// the session holds after the add: a later message without an id could be given it.
    /// Nothing was stored.
    #[error("message id {id:?} has the form {session}#turn_N of the ids messages without one are given, and N is not below the number of messages the session would hold, so a later message could be given it; choose another id (nothing was stored)")]
    ReservedId {
        /// The session.
        session: String,
        /// The id given.
        id: String,
    },
    /// `Memory::add` was given the session that holds `Memory::update`'s texts
    /// (`api::UPDATES_SESSION`); nothing was stored.
    #[error("session {0:?} is reserved for the texts of Memory::update; choose another session id (nothing was stored)")]
    ReservedSession(String),
    /// A record failed to encode (or is over the record size limit).
    #[error("encode: {0}")]
    Encode(String),
    /// An internal invariant did not hold (a bug, reported instead of a panic).
    #[error("memory invariant: {0}")]
    Invariant(&'static str),
    /// A model (extractor, summarizer, embedder) call failed; the work stays queued.
    #[error("model call failed: {0}")]
    Model(String),
    /// A query would compare vectors of two embedders: the user's fact vectors were made
    /// by `stored`, the store is open with `configured`. Open it with the embedder that
    /// made them, or with none (lexical search); or, to switch embedders, drop the
    /// vectors (`Memory::drop_derived`) and embed again (`Memory::embed_missing`).
    #[error("user {user:?}: memories were embedded by {stored:?}, the store is open with {configured:?}; open it with that embedder, or switch embedders with drop_derived and embed_missing")]
    EmbedderMismatch {
        /// The user (tenant) name.
        user: String,
        /// The embedder that made the stored vectors.
        stored: String,
        /// The embedder the store is open with.
        configured: String,
    },
    /// The memory runtime has stopped (the database is closing).
    #[error("the memory runtime has stopped")]
    Stopped,
    /// A read as of `seqno` (`Query::snapshot`) without a live snapshot at that seqno: hold
    /// the `Db::snapshot()` whose seqno you pass while reading at it.
    #[error("no live snapshot at seqno {seqno}: its versions may already be compacted away")]
    SnapshotNotHeld {
        /// The seqno asked for.
        seqno: u64,
    },
}

impl MemoryError {
    /// What a repair does about this error, when it is damage on disk
    /// ([`memforest_engine::Error::repair_hint`]).
    #[must_use]
    pub fn repair_hint(&self) -> Option<memforest_engine::RepairHint> {
        match self {
            Self::Engine(e) => e.repair_hint(),
            _ => None,
        }
    }
}
