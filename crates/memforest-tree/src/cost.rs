//! The cost model behind the paper's Fig. 6a: summarizer calls per inserted fact when
//! refreshing eagerly (after every insert) versus in batches of `B` inserts.
//!
//! Deterministic: it runs real trees over a [`MemNodeStore`] with a stand-in summarizer and
//! counts the calls [`refresh_all`] makes, so a test and the benchmark report print the same
//! table.

use crate::config::{Branching, TreeConfig};
use crate::error::TreeError;
use crate::key::{LeafKey, Payload, TimeRange};
use crate::kind::{TreeKind, USER_ENTITY};
use crate::node::TreeId;
use crate::refresh::refresh_all;
use crate::store::MemNodeStore;
use crate::tree::MemTree;

/// Summary calls for one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshCost {
    /// Branching factor.
    pub k: u16,
    /// Inserts per refresh in the batched run.
    pub batch: usize,
    /// Facts inserted (and counted) after the warm-up.
    pub facts: u64,
    /// Calls when refreshing after every insert.
    pub eager_calls: u64,
    /// Calls when refreshing after every `batch` inserts (and once at the end).
    pub batched_calls: u64,
}

impl RefreshCost {
    /// Eager calls per inserted fact.
    #[must_use]
    pub fn eager_per_fact(&self) -> f64 {
        self.eager_calls as f64 / self.facts as f64
    }

    /// Batched calls per inserted fact.
    #[must_use]
    pub fn batched_per_fact(&self) -> f64 {
        self.batched_calls as f64 / self.facts as f64
    }
}

/// Builds an `entity:user` tree with `base` time-ordered facts, refreshes it fully, then
/// appends `facts` more in time order, once refreshing after every insert and once after every
/// `batch` inserts, and counts summarizer calls (reused summaries are not calls).
///
/// # Errors
/// [`TreeError::Config`] for an invalid `k`; any tree error (none expected).
pub fn refresh_cost(k: u16, batch: usize, base: u64, facts: u64) -> Result<RefreshCost, TreeError> {
    let eager_calls = run(k, 1, base, facts)?;
    let batched_calls = run(k, batch.max(1), base, facts)?;
    Ok(RefreshCost {
        k,
        batch,
        facts,
        eager_calls,
        batched_calls,
    })
}

fn run(k: u16, batch: usize, base: u64, facts: u64) -> Result<u64, TreeError> {
    let config = TreeConfig {
        entity: Branching::new(k)?,
        ..TreeConfig::default()
    };
    let mut store = MemNodeStore::new();
    let mut tree = MemTree::create(
        &mut store,
        TreeId(1),
        TreeKind::Entity,
        USER_ENTITY,
        &config,
    )?;
    let summarize = |input: &crate::refresh::SummaryInput| format!("summary {:016x}", input.hash);
    for i in 0..base {
        tree.insert(&mut store, fact(i), "fact")?;
    }
    refresh_all(&mut [&mut tree], &mut store, summarize)?;
    let mut calls = 0;
    for (n, i) in (base..base + facts).enumerate() {
        tree.insert(&mut store, fact(i), "fact")?;
        if (n + 1) % batch == 0 {
            calls += refresh_all(&mut [&mut tree], &mut store, summarize)?.calls;
        }
    }
    calls += refresh_all(&mut [&mut tree], &mut store, summarize)?.calls;
    Ok(calls)
}

/// Fact `i`, one second after fact `i - 1`.
fn fact(i: u64) -> LeafKey {
    let t = i64::try_from(i)
        .unwrap_or(i64::MAX)
        .saturating_mul(1_000_000);
    LeafKey {
        time: TimeRange { start: t, end: t },
        payload: Payload::fact(i),
    }
}
