//! [`Memory::add`]: one exchange (or a whole session) into a user's memory.

use serde::Serialize;

use crate::api::{user, MemoryId, Message};
use crate::memory::ingest::{check_numbered_ids, Numbering};
use crate::memory::limits::check_session;
use crate::memory::record;
use crate::memory::session::Session;
use crate::memory::MemoryError;
use crate::Memory;

/// What [`Memory::add`] stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Added {
    /// Messages newly stored (durable when `add` returns).
    pub messages: u64,
    /// Messages skipped because their id was already stored with the same content.
    pub duplicates: u64,
    /// Messages skipped because their id was already stored with other content (the stored
    /// one is kept), as `"{id}"`.
    pub conflicts: Vec<String>,
    /// The memories (facts) the new messages created or gave a new occurrence, in order,
    /// each once.
    pub memories: Vec<MemoryId>,
    /// Parts (MemCells) of the messages whose memories are not committed yet: extracted in
    /// the background (see [`AddOptions::wait`]), or failed and retried there. The
    /// messages are stored either way; `Memory::flush_summaries` waits for them.
    pub pending: u64,
}

/// How [`Memory::add_with`] adds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddOptions {
    /// The agent the session belongs to (Mem0's `agent_id`; 1..=1024 bytes, no NUL): set
    /// by the session's first add that names one, then fixed. Searches and lists can be
    /// scoped to an agent's sessions.
    pub agent: Option<String>,
    /// Whether `add` waits for the extraction of the new messages when the extractor (or
    /// the embedder) calls a model. Default false: `add` returns as soon as the messages
    /// are durable and searchable, the model calls run on the background pool, and
    /// [`Added::memories`] is empty (with [`Added::pending`] counting the parts still to
    /// extract). True: `add` returns after the model has answered and the memories are
    /// committed, and lists them; a part whose model call failed is counted in
    /// [`Added::pending`] instead (its messages are stored, it is retried in the background,
    /// and [`Memory::flush_summaries`] reports the error once it keeps failing). An
    /// extractor that calls no model (`Extractor::is_local`,
    /// the default one) runs in the call either way, with an in-process embedder (the
    /// default one) or none, so with the defaults `add` always lists the memories.
    pub wait: bool,
}

impl Memory {
    /// [`Memory::add_with`] with the default [`AddOptions`] (no agent).
    ///
    /// # Errors
    /// As [`Memory::add_with`].
    pub fn add(
        &self,
        user: &str,
        session: &str,
        messages: &[Message],
    ) -> Result<Added, MemoryError> {
        self.add_with(user, session, messages, &AddOptions::default())
    }

    /// Adds `messages` to session `session` of `user`: appended after the messages the
    /// session already holds (a new session id starts a session), durable in the WAL
    /// before anything else happens, then extracted into memories; summaries are
    /// regenerated in the background. A message with an id already stored in the session
    /// is skipped, so retrying an `add` that gave ids never stores twice; messages without
    /// an id are numbered after the stored ones. A message without a time gets the time of
    /// the call. Each message's metadata is stored with it ([`Memory::messages`] returns
    /// it). With [`AddOptions::agent`], the session is recorded as the agent's first. With
    /// a model extractor the model is off this call's path unless [`AddOptions::wait`];
    /// either way a crash loses nothing: a part not yet extracted is extracted at the next
    /// open.
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad user (empty, only whitespace, over 1 KiB, holding
    /// NUL) or agent; [`MemoryError::Input`] for a session id or message over the limits
    /// (`memory::limits`: a session id that is only whitespace, a speaker holding NUL;
    /// nothing stored);
    /// [`MemoryError::AgentConflict`] for a session of another agent (nothing stored);
    /// [`MemoryError::ReservedId`] for a new message id of the form `{session}#turn_{n}`
    /// (the ids of messages sent without one) with `n` not below the number of messages
    /// the session holds after this add, which a later message without an id could be
    /// given (nothing stored; the ids [`Memory::messages`] returns can be sent back); [`MemoryError::ReservedSession`] for session
    /// [`UPDATES_SESSION`](crate::api::UPDATES_SESSION) (nothing stored);
    /// [`MemoryError::Engine`] for storage errors (`Error::ReadOnly` on a read-only store).
    pub fn add_with(
        &self,
        user: &str,
        session: &str,
        messages: &[Message],
        options: &AddOptions,
    ) -> Result<Added, MemoryError> {
        let tenant = user::writer_tenant(user)?;
        let now = crate::api::version::now_micros();
        // Messages without an id are numbered when committed, after the turns the session
        // holds then.
        let turns = messages
            .iter()
            .map(|m| m.turn(m.id.clone(), m.time.map_or(now, |t| t.timestamp_micros())))
            .collect::<Vec<_>>();
        let start = turns.first().and_then(|t| t.time).unwrap_or(now);
        let session = Session {
            id: session.to_owned(),
            start,
            turns,
        };
        // Before the agent's claim, for ids of the numbered form: the commit checks them
        // again against the session's turns then.
        let ids = || messages.iter().filter_map(|m| m.id.as_deref());
        if ids().any(|id| record::default_turn_number(&session.id, id).is_some()) {
            check_session(&session)?;
            let stored = self.session_record(&tenant, &session.id)?;
            let count = u64::from(stored.map_or(0, |r| r.turns));
            let count = count.saturating_add(messages.len() as u64);
            check_numbered_ids(&session.id, count, ids())?;
        }
        if let Some(agent) = &options.agent {
            check_session(&session)?;
            self.claim_session(&tenant, &session.id, agent)?;
        }
        let receipt = self.ingest(&tenant, &session, Numbering::AfterStored, options.wait)?;
        let mut memories: Vec<MemoryId> = Vec::with_capacity(receipt.facts.len());
        for fact in receipt.facts {
            let id = MemoryId::from_fact(fact);
            if !memories.contains(&id) {
                memories.push(id);
            }
        }
        Ok(Added {
            messages: receipt.turns,
            duplicates: receipt.turns_duplicate,
            conflicts: receipt.conflicts,
            memories,
            pending: receipt.cells_pending,
        })
    }
}
