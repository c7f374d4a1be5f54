//! [`Memory::update`] and [`Memory::history`]: a memory's versions. An update stores the new
//! text as a new memory that supersedes the old one; the old one stays, with its validity
//! ending where the new one starts. Versions are linked by a knowledge-update slot (the
//! same machinery that lets a newer fact about the same thing supersede an older one,
//! `recall::update`): every version carries the version key `memforest:version:<first id>`
//! and the first version's entities.

use memforest_engine::TenantId;

use crate::api::delete::not_found;
use crate::api::record::MemoryRecord;
use crate::api::{user, MemoryId};
use crate::memory::extract::ExtractedItem;
use crate::memory::record::{self, FactRecord};
use crate::memory::session::{Role, Session, Turn};
use crate::memory::store::Staged;
use crate::memory::text::normalize;
use crate::memory::MemoryError;
use crate::recall::index;
use crate::recall::reader::Reader;
use crate::schema::Table;
use crate::Memory;

/// The session that holds the text of every update of a user.
pub const UPDATES_SESSION: &str = "memforest:updates";

/// Start of the key that links a memory's versions.
const VERSION_KEY: &str = "memforest:version:";

/// Start of the id of the message an update stores its text in:
/// `update:<id of the memory it replaces>:<time>`.
const UPDATE_TURN: &str = "update:";

/// The memory (its id's text form) that the update whose message is `turn_id` replaced;
/// `None` for a message no update wrote.
pub(crate) fn replaced_by_update(turn_id: &str) -> Option<&str> {
    turn_id.strip_prefix(UPDATE_TURN)?.split(':').next()
}

impl Memory {
    /// Replaces memory `id` of `user` by `text`: a new memory (returned) that supersedes it
    /// from now on. The old one stays, in [`Memory::history`] and in searches that do not
    /// ask for `latest_only`, with its validity ending now. The text is stored as a message
    /// of the user's session `memforest:updates`, said by the old memory's first
    /// participant (`update` when it has none), so the new memory has the old one's
    /// participants. The same update sent again (a retry) gives the same memory, which
    /// then has both messages as sources; a text that normalizes to the memory's own
    /// changes nothing and returns `id`.
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad user (as [`Memory::add`]);
    /// [`MemoryError::NotFound`] when `user` has no memory `id`; [`MemoryError::Input`] for
    /// a text over the limits; [`MemoryError::EmbedderMismatch`] when the user's memories
    /// were embedded by another embedder (nothing written); [`MemoryError::Model`] when
    /// the embedder fails (nothing is written); engine errors. The message and the new
    /// version are written in one batch; the version link on the old memory is written
    /// just before, and alone changes nothing a read shows.
    pub fn update(&self, user: &str, id: MemoryId, text: &str) -> Result<MemoryId, MemoryError> {
        let tenant = user::writer_tenant(user)?;
        if text.trim().is_empty() {
            return Err(MemoryError::Name(memforest_engine::InputError::Empty {
                field: "update text",
            }));
        }
        let old = self
            .fact(&tenant, id.fact())?
            .ok_or_else(|| not_found("memory", id.to_string(), user))?;
        if normalize(text) == old.norm {
            return Ok(id);
        }
        let shared = self.memory_shared()?;
        crate::recall::vectors::check_writer(&shared.kv, &tenant, shared.opts.embedder.as_deref())?;
        let key = version_key(&old).unwrap_or_else(|| format!("{VERSION_KEY}{id}"));
        // The new version also joins the old one's knowledge-update slots (`subject/
        // attribute`), so it supersedes there too: the profile and `latest_only` see it.
        let mut keys = vec![key.clone()];
        keys.extend(old.keys.iter().filter(|k| k.contains('/')).take(1).cloned());
        if !old.keys.contains(&key) && !self.add_key(&tenant, id.fact(), &key)? {
            return Err(not_found("memory", id.to_string(), user));
        }
        let now = now_micros().max(old.time.1.saturating_add(1));
        let turn_id = format!("{UPDATE_TURN}{id}:{now}");
        let item = ExtractedItem {
            fact_text: text.to_owned(),
            participants: old.participants.clone(),
            origin: Some(old.origin),
            semantic_role: Some(old.role),
            entities: old.entities.clone(),
            topics: old.topics.clone(),
            attribute_keys: keys,
            source_turns: vec![turn_id.clone()],
            ..ExtractedItem::default()
        };
        // The update's turn is said in the name of the memory's first participant: a
        // turn's speaker joins its facts' participants, and "update" names no one.
        let speaker = old.participants.first().map_or("update", String::as_str);
        let session = Session {
            id: UPDATES_SESSION.to_owned(),
            start: now,
            turns: vec![Turn {
                time: Some(now),
                id: Some(turn_id.clone()),
                ..Turn::new(Role::User, speaker, text)
            }],
        };
        // The message and the new version are one batch: an update that failed, or a
        // crash before it returned, leaves no message to be extracted later as a memory
        // of its own, unlinked.
        let receipt = self.ingest_stated(&tenant, &session, vec![item])?;
        receipt
            .facts
            .first()
            .map(|&f| MemoryId::from_fact(f))
            .ok_or(MemoryError::Invariant("an update stored no memory"))
    }

    /// Every version of memory `id` of `user`, oldest first, each valid until the next one
    /// starts (`MemoryRecord::valid_until`; the last is current): the versions [`Memory::update`] linked, else the memories of its
    /// knowledge-update slot with the most memories (what extraction keyed as the same
    /// subject and attribute, e.g. where the user lives); a memory in neither is its only
    /// version.
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when `user` has no memory `id`; engine errors.
    pub fn history(&self, user: &str, id: MemoryId) -> Result<Vec<MemoryRecord>, MemoryError> {
        let tenant = user::tenant(user)?;
        let rec = self
            .fact(&tenant, id.fact())?
            .ok_or_else(|| not_found("memory", id.to_string(), user))?;
        // The versions an update linked, else the knowledge-update slot (`subject/
        // attribute` keys found by extraction) with the most memories in it.
        let reader = Reader::new(&self.db, &tenant, None, &self.recall)?;
        let slots = index::slots(&rec);
        let mut members = match version_key(&rec) {
            Some(key) => {
                let slot = slots
                    .iter()
                    .find(|s| s.ends_with(&format!("\0{}", normalize(&key))))
                    .ok_or(MemoryError::Invariant(
                        "a versioned memory has no version slot",
                    ))?;
                index::slot_members(&reader, slot)?
            }
            None => {
                let mut best = Vec::new();
                for slot in &slots {
                    let members = index::slot_members(&reader, slot)?;
                    if members.len() > best.len() {
                        best = members;
                    }
                }
                best
            }
        };
        if members.is_empty() {
            return Ok(vec![MemoryRecord::new(id.fact(), rec, None)]);
        }
        members.sort_by_key(|&(fact, start)| (start, fact));
        let mut out = Vec::with_capacity(members.len());
        for (i, &(fact, _)) in members.iter().enumerate() {
            if let Some(f) = self.fact(&tenant, fact)? {
                let next = members.get(i + 1).map(|&(_, start)| start);
                out.push(MemoryRecord::new(fact, f, next));
            }
        }
        Ok(out)
    }

    /// Adds version key `key` to fact `id`, re-indexing it, in one batch; false when the
    /// fact is gone. The record is read under the forest lock: an ingest may have merged
    /// an occurrence into it since the caller read it, and writing that older copy back
    /// would lose the occurrence.
    fn add_key(&self, tenant: &TenantId, id: u64, key: &str) -> Result<bool, MemoryError> {
        let shared = self.memory_shared()?;
        let _forest = shared.forest.lock();
        let Some(bytes) = shared.kv.get(tenant, Table::Facts, &id.to_be_bytes())? else {
            return Ok(false);
        };
        let old: FactRecord = record::decode(&bytes, "fact")?;
        if old.keys.iter().any(|k| k == key) {
            return Ok(true);
        }
        let mut st = Staged::new(&shared.kv, tenant.clone());
        index::remove_fact(&mut st, id, &old)?;
        let mut new = old;
        new.keys.push(key.to_owned());
        st.put(Table::Facts, &id.to_be_bytes(), record::encode(&new)?);
        index::add_fact(&mut st, id, &new)?;
        st.commit(shared.opts.durability)?;
        Ok(true)
    }
}

/// Whether a normalized slot attribute is a version key (the link [`Memory::update`]
/// writes, not something said).
pub(crate) fn is_version_attribute(attribute: &str) -> bool {
    attribute.starts_with(&normalize(VERSION_KEY))
}

/// The version key `rec` carries, if any.
fn version_key(rec: &FactRecord) -> Option<String> {
    version_key_in(&rec.keys).map(str::to_owned)
}

/// The version key among a fact's or an extracted item's `keys`, if any.
pub(crate) fn version_key_in(keys: &[String]) -> Option<&str> {
    keys.iter()
        .map(String::as_str)
        .find(|k| k.starts_with(VERSION_KEY))
}

/// The current time in microseconds since the Unix epoch (0 before it).
pub(crate) fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}
