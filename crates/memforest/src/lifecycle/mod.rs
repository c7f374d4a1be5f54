//! Forgetting and purging (`Memory::forget`, `Memory::purge`).
//!
//! A forget stages, in one WAL batch under the memory layer's forest lock: tombstones for
//! the forgotten turns, cells and session; the removal of every occurrence they sourced;
//! the removal of facts left with no occurrence (orphans) from every tree (B-tree
//! rebalancing; each changed node and its ancestors are marked dirty, so the scheduler
//! regenerates their summaries), from the time index, the postings and the router state;
//! and the deletion of trees left empty. Once it returns no read path returns the text:
//! the rows are gone, the page cache forgets the tenant, and summaries of nodes still
//! waiting for re-summarization are never served. `Memory::purge` then makes the bytes
//! disappear from the directory.

pub mod fact;
pub mod purge;
pub mod session;
pub mod tree;

pub use purge::PurgeReport;

use crate::memory::store::Staged;
use crate::memory::MemoryError;
use crate::schema::Table;
use crate::Memory;
use memforest_engine::TenantId;

/// What to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forget {
    /// One fact (its source turns stay).
    Fact(u64),
    /// One turn of a session, by index (facts it alone sourced go too).
    Turn {
        /// Session id.
        session: String,
        /// Turn index within the session.
        index: u32,
    },
    /// A session: its turns, cells, session tree, and the facts it alone sourced.
    Session(String),
    /// Everything of the tenant.
    Tenant,
}

/// What a forget removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForgetReport {
    /// Turns deleted.
    pub turns: u64,
    /// Facts removed (orphans included).
    pub facts_removed: u64,
    /// Facts that lost some occurrences but remain.
    pub facts_updated: u64,
    /// Leaves removed from trees (session-tree cells included).
    pub leaves_removed: u64,
    /// Seqno of the forget's batch (0 when nothing was written).
    pub seqno: u64,
}

impl Memory {
    /// Forgets `what` of `tenant` (see the module docs); wakes the scheduler to regenerate
    /// the affected summaries.
    ///
    /// # Errors
    /// [`MemoryError::Engine`] (nothing is applied); corrupt records or pages;
    /// [`MemoryError::Stopped`] while closing.
    pub fn forget(&self, tenant: &TenantId, what: &Forget) -> Result<ForgetReport, MemoryError> {
        self.forget_all(tenant, std::slice::from_ref(what))
    }

    /// Forgets every item of `what` of `tenant` in one WAL batch: a crash keeps all of
    /// them or none. Items are applied in order, each seeing what the ones before it
    /// staged (an item already forgotten by an earlier one is a no-op); one
    /// [`Forget::Tenant`] makes the others moot. The report sums the items'.
    ///
    /// # Errors
    /// As [`Memory::forget`]; nothing is applied.
    pub fn forget_all(
        &self,
        tenant: &TenantId,
        what: &[Forget],
    ) -> Result<ForgetReport, MemoryError> {
        let shared = self.runtime().ok_or(MemoryError::Stopped)?.shared();
        let mut report = ForgetReport::default();
        let mut forest = shared.forest.lock();
        if what.contains(&Forget::Tenant) {
            // One range delete removes everything; count first, so the report says what.
            let count = |table: Table| -> Result<u64, MemoryError> {
                let mut n = 0u64;
                for kv in self.db.scan_prefix(tenant, table.into(), &[], None)? {
                    kv?;
                    n += 1;
                }
                Ok(n)
            };
            report.turns = count(Table::Turns)?;
            report.facts_removed = count(Table::Facts)?;
            forest.tenants.remove(tenant);
            crate::recall::postings::bump_all();
            crate::recall::vector_cache::bump_all();
            report.seqno = self.db.drop_tenant(tenant, shared.opts.durability)?;
            drop(forest);
            self.recall_state().forget_tenant(tenant);
            self.recall_state().heat.forget(tenant, None);
            return Ok(report);
        }
        let kv = &shared.kv;
        let mut st = Staged::new(kv, tenant.clone());
        let tf = forest.tenants.entry(tenant.clone()).or_default();
        let config = shared.opts.trees;
        let result = what.iter().try_for_each(|item| match item {
            Forget::Fact(id) => session::forget_fact(kv, &mut st, tf, *id, &mut report),
            Forget::Turn { session, index } => {
                session::forget_turn(kv, &mut st, tf, session, *index, &config, &mut report)
            }
            Forget::Session(s) => session::forget_session(kv, &mut st, tf, s, &mut report),
            Forget::Tenant => Ok(()),
        });
        let committed = result.and_then(|()| Ok(st.commit(shared.opts.durability)?));
        match committed {
            Ok(seqno) => report.seqno = seqno,
            Err(e) => {
                forest.tenants.remove(tenant);
                return Err(e);
            }
        }
        drop(forest);
        self.recall_state().forget_tenant(tenant);
        shared.hurry();
        Ok(report)
    }
}
