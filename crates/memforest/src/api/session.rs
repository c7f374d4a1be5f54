//! Sessions as the API sees them: the agent a session belongs to (Mem0's `agent_id`; the
//! session itself plays Mem0's `run_id`), [`Memory::messages`] (a session's stored
//! messages with their metadata), and the sessions a search or list scope stands for.

use std::collections::{BTreeMap, BTreeSet};

use chrono::DateTime;
use memforest_engine::{check_name, TenantId};

use crate::api::delete::not_found;
use crate::api::{user, Message};
use crate::memory::limits::{check_not_blank, MAX_ID_BYTES};
use crate::memory::record::{self, SessionRecord, TurnRecord, AGENT_PREFIX, SESSION_PREFIX};
use crate::memory::store::Staged;
use crate::memory::MemoryError;
use crate::schema::Table;
use crate::Memory;

impl Memory {
    /// The messages stored in session `session` of `user`, in order, each with its id,
    /// time and metadata as stored (a forgotten message is absent).
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad user; [`MemoryError::NotFound`] for a session the
    /// user does not have; engine read errors; a corrupt record.
    pub fn messages(&self, user: &str, session: &str) -> Result<Vec<Message>, MemoryError> {
        let tenant = user::tenant(user)?;
        let turns = self
            .stored_turns(&tenant, session)?
            .ok_or_else(|| not_found("session", session.to_owned(), user))?;
        let mut out = Vec::with_capacity(turns.len());
        for (i, t) in turns {
            let metadata = match self.db.get(
                &tenant,
                Table::Sessions.into(),
                &record::metadata_key(session, i),
            )? {
                Some(b) => record::decode::<BTreeMap<String, String>>(&b, "turn metadata")?,
                None => BTreeMap::new(),
            };
            out.push(Message {
                role: t.role,
                speaker: t.speaker,
                text: t.text,
                time: DateTime::from_timestamp_micros(t.time),
                id: Some(t.id),
                metadata,
            });
        }
        Ok(out)
    }

    /// The record of session `session` of `tenant`, if it exists.
    pub(crate) fn session_record(
        &self,
        tenant: &TenantId,
        session: &str,
    ) -> Result<Option<SessionRecord>, MemoryError> {
        let key = record::prefixed(SESSION_PREFIX, session.as_bytes());
        self.db
            .get(tenant, Table::Sessions.into(), &key)?
            .map(|b| record::decode(&b, "session"))
            .transpose()
    }

    /// The stored turns of session `session` of `tenant` with their indexes, in order (a
    /// forgotten turn is absent); `None` when there is no such session.
    pub(crate) fn stored_turns(
        &self,
        tenant: &TenantId,
        session: &str,
    ) -> Result<Option<Vec<(u32, TurnRecord)>>, MemoryError> {
        let Some(srec) = self.session_record(tenant, session)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(usize::try_from(srec.turns).unwrap_or(0));
        for i in 0..srec.turns {
            let key = record::turn_key(session, i);
            if let Some(b) = self.db.get(tenant, Table::Turns.into(), &key)? {
                out.push((i, record::decode(&b, "turn")?));
            }
        }
        Ok(Some(out))
    }

    /// The agent session `session` of `tenant` belongs to, if it was added with one.
    pub(crate) fn session_agent(
        &self,
        tenant: &TenantId,
        session: &str,
    ) -> Result<Option<String>, MemoryError> {
        self.db
            .get(tenant, Table::Sessions.into(), &record::agent_key(session))?
            .map(|b| record::decode(&b, "session agent"))
            .transpose()
    }

    /// Records that `session` of `tenant` belongs to `agent` (durable on return), unless it
    /// already does.
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad agent name (as a session id's, whitespace only
    /// included); [`MemoryError::AgentConflict`] when the
    /// session belongs to another agent (nothing is written).
    pub(crate) fn claim_session(
        &self,
        tenant: &TenantId,
        session: &str,
        agent: &str,
    ) -> Result<(), MemoryError> {
        check_name("agent", agent.as_bytes(), MAX_ID_BYTES)?;
        check_not_blank("agent", agent.as_bytes())?;
        let shared = self.memory_shared()?;
        let _forest = shared.forest.lock();
        match self.session_agent(tenant, session)? {
            Some(stored) if stored == agent => Ok(()),
            Some(stored) => Err(MemoryError::AgentConflict {
                session: session.to_owned(),
                stored,
                given: agent.to_owned(),
            }),
            None => {
                let mut st = Staged::new(&shared.kv, tenant.clone());
                st.put(
                    Table::Sessions,
                    &record::agent_key(session),
                    record::encode(&agent)?,
                );
                st.commit(shared.opts.durability)?;
                Ok(())
            }
        }
    }

    /// The sessions a scope of `session` and `agent` stands for: `None` (every session)
    /// when neither is given; `session` alone when it belongs to `agent` (or no agent is
    /// given); otherwise every session of `agent` (O(sessions with an agent)).
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a `session` or `agent` no write accepts (empty, only
    /// whitespace, over [`MAX_ID_BYTES`], holding NUL): a filter that can match nothing is a caller's
    /// mistake, not an empty answer. Engine errors.
    pub(crate) fn scope_sessions(
        &self,
        tenant: &TenantId,
        session: Option<&str>,
        agent: Option<&str>,
    ) -> Result<Option<BTreeSet<String>>, MemoryError> {
        if let Some(s) = session {
            check_name("session id", s.as_bytes(), MAX_ID_BYTES)?;
            check_not_blank("session id", s.as_bytes())?;
        }
        if let Some(a) = agent {
            check_name("agent", a.as_bytes(), MAX_ID_BYTES)?;
            check_not_blank("agent", a.as_bytes())?;
        }
        match (session, agent) {
            (None, None) => Ok(None),
            (Some(s), None) => Ok(Some(BTreeSet::from([s.to_owned()]))),
            (Some(s), Some(a)) => Ok(Some(
                (self.session_agent(tenant, s)?.as_deref() == Some(a))
                    .then(|| s.to_owned())
                    .into_iter()
                    .collect(),
            )),
            (None, Some(a)) => {
                let mut out = BTreeSet::new();
                for kv in
                    self.db
                        .scan_prefix(tenant, Table::Sessions.into(), &[AGENT_PREFIX], None)?
                {
                    let (k, v) = kv?;
                    if record::decode::<String>(&v, "session agent")? == a {
                        let id = k.get(1..).unwrap_or_default();
                        out.insert(String::from_utf8_lossy(id).into_owned());
                    }
                }
                Ok(Some(out))
            }
        }
    }
}
