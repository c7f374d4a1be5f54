//! Write-through of the read path's latest-state caches of term postings
//! ([`PostingsCache`]) and fact vectors ([`VectorCache`]): a commit that changes them bumps
//! their generations and, once it is durable, applies its changes to the lists and
//! matrices cached at the generation just before, so a query after a write finds them
//! current instead of reloading a whole posting list or vector matrix (O(facts) engine
//! reads for a frequent term or a large tenant).
//!
//! Both steps run in `memory::store::Staged::commit`, under the memory layer's forest
//! lock, which every commit holds and under which a query reads its generations and its
//! seqno: no query sees a generation between the bump and the application.

use std::collections::BTreeMap;
use std::sync::Arc;

use memforest_engine::TenantId;

use crate::memory::record;
use crate::recall::index::{self, Posting};
use crate::recall::postings::{self, PostingsCache};
use crate::recall::vector_cache::{self, VectorCache};
use crate::schema::Table;

/// The caches a commit keeps current (shared with the read path's `RecallState`).
#[derive(Debug, Clone, Default)]
pub struct Caches {
    /// Decoded posting lists.
    pub postings: Arc<PostingsCache>,
    /// Fact vectors per tenant.
    pub vectors: Arc<VectorCache>,
}

/// A term's changes: `fact -> Some(posting)` put, `None` deleted, in fact order; `None`
/// when a put does not decode (the cached list is then left at its old generation, which
/// the next query refuses).
type TermChanges = Option<Vec<(u64, Option<Posting>)>>;

/// Vector rows changed: `id -> Some(row)` put, `None` deleted.
type VectorChanges<'a> = Vec<(u64, Option<&'a [u8]>)>;

/// One commit's changes to the cached tables, with the generations their bumps returned.
#[derive(Debug, Default)]
pub struct Changes<'a> {
    terms: BTreeMap<&'a str, (u64, TermChanges)>,
    vectors: Option<(u64, VectorChanges<'a>)>,
}

impl<'a> Changes<'a> {
    /// Bumps the generation of every term and of the vectors that `writes` (`(table, key)
    /// -> value`, `None` a delete, in key order) change in `tenant`, and keeps what they
    /// change. Call under the forest lock, before the commit.
    pub fn bump<I>(tenant: &TenantId, writes: I) -> Self
    where
        I: IntoIterator<Item = (Table, &'a [u8], Option<&'a [u8]>)>,
    {
        let mut out = Self::default();
        for (table, key, value) in writes {
            match table {
                Table::Postings => {
                    let Some((term, fact)) = index::term_posting_key(key) else {
                        continue;
                    };
                    let (_, changes) = out
                        .terms
                        .entry(term)
                        .or_insert_with(|| (postings::bump(tenant, term), Some(Vec::new())));
                    let posting = value.map(|v| index::posting(fact, v));
                    match (changes.as_mut(), posting) {
                        (Some(list), Some(Some(p))) => list.push((fact, Some(p))),
                        (Some(list), None) => list.push((fact, None)),
                        _ => *changes = None,
                    }
                }
                Table::FactVectors => {
                    let Some(id) = record::be_u64(key) else {
                        continue;
                    };
                    out.vectors
                        .get_or_insert_with(|| (vector_cache::bump(tenant), Vec::new()))
                        .1
                        .push((id, value));
                }
                _ => {}
            }
        }
        out
    }

    /// Applies the changes, now committed, to `caches`. Call under the forest lock.
    pub fn apply(&self, tenant: &TenantId, caches: &Caches) {
        for (term, (before, changes)) in &self.terms {
            if let Some(changes) = changes {
                caches.postings.apply(tenant, term, *before, changes);
            }
        }
        if let Some((before, changes)) = &self.vectors {
            caches.vectors.apply(tenant, *before, changes);
        }
    }
}
