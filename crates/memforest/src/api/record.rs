//! [`Memory::get`] and [`Memory::list`]: memories by id, and a user's memories newest first.

use chrono::{DateTime, Utc};
use memforest_engine::TenantId;
use serde::Serialize;

use crate::api::search::Source;
use crate::api::{user, MemoryId};
use crate::memory::record::{self, FactRecord};
use crate::memory::time::to_datetime;
use crate::memory::MemoryError;
use crate::recall::reader::Reader;
use crate::recall::update;
use crate::schema::Table;
use crate::Memory;

/// One stored memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryRecord {
    /// Its id.
    pub id: MemoryId,
    /// Its text.
    pub text: String,
    /// When what it says happened or was said: start.
    pub start: Option<DateTime<Utc>>,
    /// ... and end.
    pub end: Option<DateTime<Utc>>,
    /// False when a newer memory about the same thing supersedes it.
    pub current: bool,
    /// When the newer memory that supersedes it starts (the end of its validity).
    pub valid_until: Option<DateTime<Utc>>,
    /// Where it was said (every occurrence).
    pub sources: Vec<Source>,
}

impl MemoryRecord {
    /// Fact `id`, valid until `valid_until` (microseconds; `None`: current).
    pub(crate) fn new(id: u64, f: FactRecord, valid_until: Option<i64>) -> Self {
        Self {
            id: MemoryId::from_fact(id),
            text: f.text,
            start: to_datetime(f.time.0),
            end: to_datetime(f.time.1),
            current: valid_until.is_none(),
            valid_until: valid_until.and_then(to_datetime),
            sources: f
                .occurrences
                .into_iter()
                .map(|o| Source {
                    session: o.session,
                    messages: o.turns,
                })
                .collect(),
        }
    }
}

/// Which of a user's memories [`Memory::list`] returns, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOptions {
    /// At most this many (default 100).
    pub limit: usize,
    /// After skipping this many (default 0).
    pub offset: usize,
    /// Only memories whose event time starts at or after this.
    pub since: Option<DateTime<Utc>>,
    /// Only memories whose event time starts at or before this.
    pub until: Option<DateTime<Utc>>,
    /// Only memories said in this session (Mem0's `run_id`).
    pub session: Option<String>,
    /// Only memories said in sessions of this agent ([`crate::AddOptions::agent`]).
    pub agent: Option<String>,
    /// Only memories no newer memory about the same thing supersedes.
    pub latest_only: bool,
}

impl Default for ListOptions {
    fn default() -> Self {
        Self {
            limit: 100,
            offset: 0,
            since: None,
            until: None,
            session: None,
            agent: None,
            latest_only: false,
        }
    }
}

impl Memory {
    /// Memory `id` of `user`; `None` when the user has no such memory (another user's ids
    /// find nothing).
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad user; engine read errors; a corrupt record.
    pub fn get(&self, user: &str, id: MemoryId) -> Result<Option<MemoryRecord>, MemoryError> {
        let tenant = user::tenant(user)?;
        let Some(f) = self.fact(&tenant, id.fact())? else {
            return Ok(None);
        };
        let reader = Reader::new(&self.db, &tenant, None, &self.recall)?;
        let until = update::Supersession::new(&reader).until(id.fact(), &f, None)?;
        Ok(Some(MemoryRecord::new(id.fact(), f, until)))
    }

    /// `user`'s memories, newest first (by the start of their event time), paged and
    /// filtered by `options`. Reads the user's time index whole, and with a session,
    /// agent or `latest_only` scope every memory up to the page's end.
    ///
    /// # Errors
    /// As [`Memory::get`]; [`MemoryError::Name`] for a session or agent filter no write
    /// accepts (empty, over 1024 bytes, holding NUL).
    pub fn list(
        &self,
        user: &str,
        options: &ListOptions,
    ) -> Result<Vec<MemoryRecord>, MemoryError> {
        let tenant = user::tenant(user)?;
        let since = options.since.map_or(i64::MIN, |t| t.timestamp_micros());
        let until = options.until.map_or(i64::MAX, |t| t.timestamp_micros());
        let mut index = Vec::new();
        for kv in self
            .db
            .scan_prefix(&tenant, Table::FactTimeIndex.into(), &[], None)?
        {
            let (k, _) = kv?;
            let (Some(start), Some(id)) = (
                k.get(..8).and_then(record::be_u64),
                k.get(8..).and_then(record::be_u64),
            ) else {
                return Err(MemoryError::Corrupt {
                    what: "fact time index",
                    detail: format!("key {k:02x?} is not 16 bytes"),
                });
            };
            // The key stores the start with its sign bit flipped (`record::time_index_key`).
            let start = i64::from_be_bytes((start ^ (1 << 63)).to_be_bytes());
            if (since..=until).contains(&start) {
                index.push(id);
            }
        }
        let sessions = self.scope_sessions(
            &tenant,
            options.session.as_deref(),
            options.agent.as_deref(),
        )?;
        let reader = Reader::new(&self.db, &tenant, None, &self.recall)?;
        let mut supersession = update::Supersession::new(&reader);
        let mut out = Vec::new();
        // Unscoped, every indexed memory is on the page: skip by position.
        let (mut skip, first) = match (&sessions, options.latest_only) {
            (None, false) => (0, options.offset),
            _ => (options.offset, 0),
        };
        for &id in index.iter().rev().skip(first) {
            if out.len() >= options.limit {
                break;
            }
            let Some(f) = self.fact(&tenant, id)? else {
                continue;
            };
            let in_scope = sessions
                .as_ref()
                .is_none_or(|s| f.occurrences.iter().any(|o| s.contains(&o.session)));
            if !in_scope {
                continue;
            }
            let until = supersession.until(id, &f, None)?;
            if options.latest_only && until.is_some() {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            out.push(MemoryRecord::new(id, f, until));
        }
        Ok(out)
    }

    /// Fact `id` of `tenant`, if stored.
    pub(crate) fn fact(
        &self,
        tenant: &TenantId,
        id: u64,
    ) -> Result<Option<FactRecord>, MemoryError> {
        match self
            .db
            .get(tenant, Table::Facts.into(), &id.to_be_bytes())?
        {
            Some(bytes) => Ok(Some(record::decode(&bytes, "fact")?)),
            None => Ok(None),
        }
    }
}
