//! [`PostingsCache`]: decoded posting lists of the latest state, kept in memory (bounded
//! in bytes, least recently used evicted first), so a query reads a frequent term's
//! postings without an O(df) engine scan each time.
//!
//! Validity: every commit that changes a term's postings bumps the generation of the
//! term's stripe ([`bump`], called by `recall::write_through` under the memory layer's
//! forest lock, which every commit holds); a query reads its terms' generations and its
//! seqno under the same lock (so every change it sees bumped is committed at or before
//! that seqno), and a cached list is used only while its stripe's generation is the one it
//! was loaded under. After the commit, still under the lock, the committed changes are
//! applied to a list cached at the generation just before ([`PostingsCache::apply`]), so a
//! write does not cost the next query a reload of every posting list it touched. A failed
//! commit only causes a spurious reload. The generations are process-wide (2^12 stripes shared by every
//! open `Db`): a write elsewhere can only cost a reload, never serve a stale list. Queries
//! at an older snapshot bypass the cache.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::memory::MemoryError;
use crate::recall::index::{self, Posting};
use crate::recall::lru::ByteLru;
use crate::recall::reader::Reader;
use memforest_engine::TenantId;

/// Default capacity: 64 MiB of postings (16 bytes each).
pub const DEFAULT_POSTINGS_BYTES: usize = 64 << 20;
/// Generation stripes.
const STRIPES: usize = 1 << 12;
/// Bytes charged per cached list besides its postings and term.
const LIST_OVERHEAD: usize = 64;

static GENERATIONS: [AtomicU64; STRIPES] = [const { AtomicU64::new(0) }; STRIPES];

fn stripe(tenant: &TenantId, term: &str) -> Option<&'static AtomicU64> {
    let mut h = memforest_tree::hash::StableHasher::new();
    h.write(tenant.name());
    h.write(&[0]);
    h.write(term.as_bytes());
    GENERATIONS.get(usize::try_from(h.finish() % STRIPES as u64).ok()?)
}

/// Marks `tenant`'s postings of `term` changed (under the forest lock, with the commit);
/// returns the generation before.
pub fn bump(tenant: &TenantId, term: &str) -> u64 {
    stripe(tenant, term).map_or(0, |g| g.fetch_add(1, Ordering::SeqCst))
}

/// Marks every term of every tenant changed (a whole tenant dropped).
pub fn bump_all() {
    for g in &GENERATIONS {
        g.fetch_add(1, Ordering::SeqCst);
    }
}

/// The current generation of `tenant`'s `term` (read it under the forest lock).
#[must_use]
pub fn generation(tenant: &TenantId, term: &str) -> u64 {
    stripe(tenant, term).map_or(0, |g| g.load(Ordering::SeqCst))
}

/// A term's postings, by fact id.
pub type List = Arc<Vec<Posting>>;

/// Posting lists of the latest state, per tenant and term: `term -> (generation it was
/// loaded under, list)`.
#[derive(Debug)]
pub struct PostingsCache {
    lists: ByteLru<String, (u64, List)>,
}

impl Default for PostingsCache {
    fn default() -> Self {
        Self::new(DEFAULT_POSTINGS_BYTES)
    }
}

impl PostingsCache {
    /// A cache of at most `capacity` bytes.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            lists: ByteLru::new(capacity),
        }
    }

    /// The postings of `term` read by `r`: from the cache when `generation` (the term's
    /// [`generation`] read with `r`'s seqno under the forest lock; `None` for a snapshot
    /// read) matches the cached list's, else scanned and, with a generation, cached.
    ///
    /// # Errors
    /// As [`index::postings`].
    pub fn fetch(
        &self,
        r: &Reader<'_>,
        term: &str,
        generation: Option<u64>,
    ) -> Result<List, MemoryError> {
        let Some(generation) = generation else {
            return Ok(Arc::new(index::postings(r, term)?));
        };
        if let Some(list) = self.get(r.tenant(), term, generation) {
            return Ok(list);
        }
        let list = Arc::new(index::postings(r, term)?);
        self.insert(r.tenant(), term, generation, &list);
        Ok(list)
    }

    /// Applies a commit's changes to `tenant`'s postings of `term` (`fact -> Some(posting)`
    /// put, `None` deleted, by fact id) to the list cached at generation `before`, the one
    /// the commit's [`bump`] returned, which then holds the generation after. Any other
    /// cached list of the term, or one a query holds, is dropped (the next query reloads
    /// it). Call under the forest lock, after the commit.
    pub fn apply(
        &self,
        tenant: &TenantId,
        term: &str,
        before: u64,
        changes: &[(u64, Option<Posting>)],
    ) {
        let Some((cached, mut list)) = self.lists.take(tenant, term) else {
            return;
        };
        let after = generation(tenant, term);
        if cached != before || after != before.wrapping_add(1) {
            return;
        }
        // A list a query is reading is dropped rather than copied (the next query reloads).
        let Some(postings) = Arc::get_mut(&mut list) else {
            return;
        };
        for &(fact, posting) in changes {
            match (postings.binary_search_by_key(&fact, |p| p.fact), posting) {
                (Ok(at), Some(p)) => {
                    if let Some(slot) = postings.get_mut(at) {
                        *slot = p;
                    }
                }
                (Ok(at), None) => {
                    postings.remove(at);
                }
                (Err(at), Some(p)) => postings.insert(at, p),
                (Err(_), None) => {}
            }
        }
        self.insert(tenant, term, after, &list);
    }

    fn get(&self, tenant: &TenantId, term: &str, generation: u64) -> Option<List> {
        self.lists
            .get_valid(tenant, term, |(g, _)| *g == generation)
            .map(|(_, list)| list)
    }

    fn insert(&self, tenant: &TenantId, term: &str, generation: u64, list: &List) {
        let bytes = list.len() * std::mem::size_of::<Posting>() + term.len() + LIST_OVERHEAD;
        self.lists.insert(
            tenant,
            term.to_owned(),
            (generation, Arc::clone(list)),
            bytes,
        );
    }

    /// Drops every list of `tenant`.
    pub fn forget_tenant(&self, tenant: &TenantId) {
        self.lists.forget_tenant(tenant);
    }

    /// Bytes held.
    #[must_use]
    pub fn used(&self) -> usize {
        self.lists.used()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(n: u64) -> List {
        Arc::new(
            (0..n)
                .map(|fact| Posting {
                    fact,
                    tf: 1,
                    len: 3,
                })
                .collect(),
        )
    }

    #[test]
    fn a_changed_generation_misses_and_the_least_recently_used_goes_first() {
        let t = TenantId::new("t").unwrap();
        let one = 16 + 1 + LIST_OVERHEAD;
        let c = PostingsCache::new(2 * one);
        c.insert(&t, "a", 1, &list(1));
        c.insert(&t, "b", 1, &list(1));
        assert!(c.get(&t, "a", 2).is_none(), "another generation");
        assert!(c.get(&t, "a", 1).is_none(), "the stale list was dropped");
        c.insert(&t, "a", 2, &list(1));
        assert_eq!(c.get(&t, "b", 1).map(|l| l.len()), Some(1));
        c.insert(&t, "c", 1, &list(1));
        assert!(c.get(&t, "a", 2).is_none(), "a was used least recently");
        assert!(c.get(&t, "b", 1).is_some() && c.get(&t, "c", 1).is_some());
        assert_eq!(c.used(), 2 * one);
        c.forget_tenant(&t);
        assert_eq!(c.used(), 0);
        assert!(c.get(&t, "b", 1).is_none());
    }

    #[test]
    fn bump_changes_only_its_stripe() {
        let t = TenantId::new("bump-test").unwrap();
        let (a, b) = (generation(&t, "alpha"), generation(&t, "beta"));
        bump(&t, "alpha");
        assert!(generation(&t, "alpha") > a);
        if stripe(&t, "alpha").map(std::ptr::from_ref) != stripe(&t, "beta").map(std::ptr::from_ref)
        {
            assert_eq!(generation(&t, "beta"), b);
        }
    }

    fn p(fact: u64, tf: u32) -> Posting {
        Posting { fact, tf, len: 3 }
    }

    #[test]
    fn a_commit_patches_the_list_cached_just_before_it_and_no_other() {
        let t = TenantId::new("apply-test").unwrap();
        let c = PostingsCache::new(1 << 20);
        let cached = Arc::new(vec![p(2, 1), p(5, 1), p(9, 1)]);
        c.insert(&t, "kayak", generation(&t, "kayak"), &cached);
        drop(cached); // a list no query holds is patched in place
        let during = bump(&t, "kayak");
        c.apply(
            &t,
            "kayak",
            during,
            &[
                (1, Some(p(1, 2))),
                (5, None),
                (7, Some(p(7, 1))),
                (9, Some(p(9, 4))),
                (12, Some(p(12, 1))),
            ],
        );
        let after = generation(&t, "kayak");
        assert_eq!(
            c.get(&t, "kayak", after).as_deref(),
            Some(&vec![p(1, 2), p(2, 1), p(7, 1), p(9, 4), p(12, 1)])
        );
        // A list cached at another generation is dropped, not patched.
        bump(&t, "kayak");
        let during = bump(&t, "kayak");
        c.apply(&t, "kayak", during, &[(3, Some(p(3, 1)))]);
        assert!(c.get(&t, "kayak", generation(&t, "kayak")).is_none());
        assert_eq!(c.used(), 0);
    }
}
