//! `Memory::profile`: the long-term profile (MemoryOS "long-term persona"): the current
//! value of every knowledge-update slot (what is true now, per subject and attribute), the
//! root summary of `entity:user` and of the hottest entity trees.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use memforest_tree::{TreeKind, USER_ENTITY};

use crate::api::MemoryId;
use crate::memory::time::to_datetime;
use crate::recall::index::{self, SLOT_PREFIX};

use crate::memory::record::{self, TreeRecord};
use crate::memory::MemoryError;
use crate::recall::reader::Reader;
use crate::schema::Table;
use crate::Memory;
use memforest_engine::TenantId;

/// Entity trees in a profile.
pub const PROFILE_ENTITIES: usize = 5;
/// Current values in a profile, at most.
pub const PROFILE_VALUES: usize = 200;

/// The current value of one knowledge-update slot: the newest memory about a subject's
/// attribute.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CurrentValue {
    /// Whom it is about (`user`, a speaker's or person's name, a relation such as
    /// `sister`), normalized.
    pub subject: String,
    /// What about them (`residence`, `job`, `dog name`, ...), normalized.
    pub attribute: String,
    /// The memory that says it.
    pub id: MemoryId,
    /// Its text.
    pub text: String,
    /// Since when it holds: the start of its event time.
    pub since: Option<DateTime<Utc>>,
}

/// One entity's profile line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EntityProfile {
    /// Entity key (the tree label).
    pub entity: String,
    /// Root summary of its tree.
    pub summary: String,
    /// Its heat.
    pub heat: f64,
}

/// What `Memory::profile` returns.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Profile {
    /// The current value of each slot, the subject with the most values first, then by
    /// subject and attribute (at most [`PROFILE_VALUES`]).
    pub current: Vec<CurrentValue>,
    /// Root summary of `entity:user` (`None` before its first summary).
    pub user: Option<String>,
    /// The hottest entity trees with a summary, hottest first.
    pub entities: Vec<EntityProfile>,
}

fn root_summary(r: &Reader<'_>, tree: u64, heat: f64) -> Result<Option<String>, MemoryError> {
    let Some(meta) = r.tree_meta(tree)? else {
        return Ok(None);
    };
    let Some(root) = meta.root else {
        return Ok(None);
    };
    let n = r.node(tree, root.id, root.crc, heat)?;
    Ok(n.clean_summary().map(str::to_owned))
}

/// The newest memory of every slot (`recall::index` slot entries), ordered as
/// [`Profile::current`] says.
fn current_values(r: &Reader<'_>) -> Result<Vec<CurrentValue>, MemoryError> {
    let mut newest: BTreeMap<String, (i64, u64)> = BTreeMap::new();
    for (slot, fact, start) in index::slot_entries(r, &[SLOT_PREFIX])? {
        let e = newest.entry(slot).or_insert((start, fact));
        *e = (*e).max((start, fact));
    }
    let mut per_subject: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (slot, (start, fact)) in newest {
        let Some((subject, attribute)) = slot.split_once('\0') else {
            continue;
        };
        if crate::api::is_version_attribute(attribute) {
            continue;
        }
        let Some(rec) = crate::recall::search::load_fact(r, fact)? else {
            continue;
        };
        *per_subject.entry(subject.to_owned()).or_default() += 1;
        out.push(CurrentValue {
            subject: subject.to_owned(),
            attribute: attribute.to_owned(),
            id: MemoryId::from_fact(fact),
            text: rec.text,
            since: to_datetime(start),
        });
    }
    let rank = |s: &str| std::cmp::Reverse(per_subject.get(s).copied().unwrap_or(0));
    out.sort_by(|a, b| {
        rank(&a.subject)
            .cmp(&rank(&b.subject))
            .then_with(|| a.subject.cmp(&b.subject))
            .then_with(|| a.attribute.cmp(&b.attribute))
    });
    out.truncate(PROFILE_VALUES);
    Ok(out)
}

impl Memory {
    /// What is known about `user`: the current value of each knowledge-update slot, the
    /// summary of `entity:user` and of the [`PROFILE_ENTITIES`] hottest entity trees. Summaries of nodes still waiting for
    /// re-summarization are left out (they may describe removed facts). A user with no
    /// memory gets an empty profile.
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a bad user; engine errors; corrupt records or pages.
    pub fn profile(&self, user: &str) -> Result<Profile, MemoryError> {
        self.profile_of(&TenantId::new(user)?)
    }

    /// [`Memory::profile`] of `tenant`.
    pub(crate) fn profile_of(&self, tenant: &TenantId) -> Result<Profile, MemoryError> {
        let state = self.recall_state();
        let r = Reader::new(&self.db, tenant, None, state)?;
        let user_id = record::tree_id(TreeKind::Entity, USER_ENTITY);
        let mut entities = Vec::new();
        for kv in r.scan_prefix(Table::Trees, &[])? {
            let (k, v) = kv?;
            let id = record::be_u64(&k).ok_or(MemoryError::Invariant("short tree key"))?;
            let rec: TreeRecord = record::decode(&v, "tree")?;
            if rec.kind != TreeKind::Entity.as_u8() || id == user_id {
                continue;
            }
            let Some(meta) = r.tree_meta(id)? else {
                continue;
            };
            entities.push((state.heat.heat(tenant, id, meta.items), id, rec.label));
        }
        entities.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut out = Profile {
            current: current_values(&r)?,
            user: root_summary(&r, user_id, 0.0)?,
            entities: Vec::new(),
        };
        for (heat, id, label) in entities {
            if out.entities.len() >= PROFILE_ENTITIES {
                break;
            }
            if let Some(summary) = root_summary(&r, id, heat)? {
                out.entities.push(EntityProfile {
                    entity: label,
                    summary,
                    heat,
                });
            }
        }
        Ok(out)
    }
}
