//! `Memory::profile`: the long-term profile (MemoryOS "long-term persona"): the root summary
//! of `entity:user` and of the hottest entity trees.

use memforest_tree::{TreeKind, USER_ENTITY};

use crate::memory::record::{self, TreeRecord};
use crate::memory::MemoryError;
use crate::recall::reader::Reader;
use crate::schema::Table;
use crate::Memory;
use memforest_engine::TenantId;

/// Entity trees in a profile.
pub const PROFILE_ENTITIES: usize = 5;

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

impl Memory {
    /// What is known about `user`: the summary of `entity:user` and of the
    /// [`PROFILE_ENTITIES`] hottest entity trees. Summaries of nodes still waiting for
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
