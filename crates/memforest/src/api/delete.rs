//! [`Memory::delete`], [`Memory::delete_message`], [`Memory::delete_session`],
//! [`Memory::delete_user`]: forgetting through the API, with an error for what does not
//! exist.

use serde::Serialize;

use crate::api::{user, MemoryId, UPDATES_SESSION};
use crate::lifecycle::{Forget, ForgetReport};
use crate::memory::MemoryError;
use crate::Memory;

/// What a delete removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Deleted {
    /// Messages deleted.
    pub messages: u64,
    /// Memories removed (those only the deleted messages supported included).
    pub memories: u64,
    /// Memories that lost some sources but remain.
    pub memories_updated: u64,
}

impl From<ForgetReport> for Deleted {
    fn from(r: ForgetReport) -> Self {
        Self {
            messages: r.turns,
            memories: r.facts_removed,
            memories_updated: r.facts_updated,
        }
    }
}

impl Memory {
    /// Deletes memory `id` of `user`. The messages of conversations it was extracted from
    /// stay; the messages [`Memory::update`] stored its text in (session
    /// [`UPDATES_SESSION`]) are deleted with it, as they hold nothing else, in the same
    /// WAL batch (a crash keeps all of it or none). The bytes leave the files at the next
    /// [`Memory::purge`].
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when `user` has no memory `id` (nothing changed);
    /// [`MemoryError::Name`]; engine errors.
    pub fn delete(&self, user: &str, id: MemoryId) -> Result<Deleted, MemoryError> {
        let tenant = user::tenant(user)?;
        let Some(rec) = self.fact(&tenant, id.fact())? else {
            return Err(not_found("memory", id.to_string(), user));
        };
        let updates: Vec<&str> = rec
            .occurrences
            .iter()
            .filter(|o| o.session == UPDATES_SESSION)
            .flat_map(|o| o.turns.iter().map(String::as_str))
            .collect();
        let mut items = Vec::new();
        if !updates.is_empty() {
            let turns = self
                .stored_turns(&tenant, UPDATES_SESSION)?
                .unwrap_or_default();
            items.extend(
                turns
                    .iter()
                    .filter(|(_, t)| updates.contains(&t.id.as_str()))
                    .map(|(index, _)| Forget::Turn {
                        session: UPDATES_SESSION.to_owned(),
                        index: *index,
                    }),
            );
        }
        // Supported by conversation messages too (or by no update message found): the
        // memory itself, in the same batch (a no-op when the messages took it).
        items.push(Forget::Fact(id.fact()));
        Ok(self.forget_all(&tenant, &items)?.into())
    }

    /// Deletes message `message` (its id, as given to or numbered by [`Memory::add`]) of
    /// session `session` of `user`: the message, its metadata, and the memories only it
    /// supported; memories it shared with other messages lose it as a source. O(messages
    /// in the session) to find it.
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when `user` has no such session or message; as
    /// [`Memory::delete`].
    pub fn delete_message(
        &self,
        user: &str,
        session: &str,
        message: &str,
    ) -> Result<Deleted, MemoryError> {
        let tenant = user::tenant(user)?;
        let turns = self
            .stored_turns(&tenant, session)?
            .ok_or_else(|| not_found("session", session.to_owned(), user))?;
        let index = turns
            .iter()
            .find(|(_, t)| t.id == message)
            .map(|(i, _)| *i)
            .ok_or_else(|| not_found("message", message.to_owned(), user))?;
        let what = Forget::Turn {
            session: session.to_owned(),
            index,
        };
        Ok(self.forget(&tenant, &what)?.into())
    }

    /// Deletes session `session` of `user`: its messages and the memories only they
    /// supported.
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when `user` has no such session; as [`Memory::delete`].
    pub fn delete_session(&self, user: &str, session: &str) -> Result<Deleted, MemoryError> {
        let tenant = user::tenant(user)?;
        let r = self.forget(&tenant, &Forget::Session(session.to_owned()))?;
        if r.seqno == 0 {
            return Err(not_found("session", session.to_owned(), user));
        }
        Ok(r.into())
    }

    /// Deletes everything of `user`, and only of `user`.
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when `user` holds nothing; as [`Memory::delete`].
    pub fn delete_user(&self, user: &str) -> Result<Deleted, MemoryError> {
        let tenant = user::tenant(user)?;
        if !self.tenants()?.contains(&tenant) {
            return Err(not_found("user", user.to_owned(), user));
        }
        Ok(self.forget(&tenant, &Forget::Tenant)?.into())
    }
}

/// The [`MemoryError::NotFound`] for `what` `id` of `user`.
pub(crate) fn not_found(what: &'static str, id: String, user: &str) -> MemoryError {
    MemoryError::NotFound {
        what,
        id,
        user: user.to_owned(),
    }
}
