//! The refresh scheduler: one thread that retries pending cells and runs refresh passes
//! over the dirty trees of every tenant, bottom-up level by level; within a level the
//! summary calls go to the bounded summary pool. A result commits only if the node's input
//! hash is unchanged (`MemTree::apply_summary`); an unchanged input reuses its stored
//! summary without a call; a failed call leaves the node dirty and backs off.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use memforest_tree::refresh::{refresh_plan, SummaryInput};
use memforest_tree::{NodeId, TreeError};

use crate::key::{Table, TenantId};
use crate::memory::forest::TenantForest;
use crate::memory::record;
use crate::memory::stats::CallKind;
use crate::memory::store::Staged;
use crate::memory::summarize::{header, SummaryOutput, SummaryRequest};
use crate::memory::{apply, MemoryError, Shared};

/// A node to summarize: tenant, tree id, node.
type Item = (TenantId, u64, NodeId);

/// The scheduler thread's body; returns when the runtime stops.
pub fn run(shared: &Arc<Shared>) {
    loop {
        let stop = shared.stopping();
        retry_cells(shared);
        let summarize = !stop || shared.opts.summarize_on_shutdown && shared.summarize_on_stop();
        if summarize {
            loop {
                match refresh_pass(shared) {
                    Ok(true) => shared.notify(),
                    Ok(false) => break,
                    Err(e) => {
                        shared.set_error(e);
                        break;
                    }
                }
                if shared.stopping() && !stop {
                    break;
                }
            }
        }
        shared.notify();
        if stop {
            return;
        }
        shared.wait_work(Duration::from_millis(250));
    }
}

/// Re-runs extraction for pending cells whose retry time has come.
fn retry_cells(shared: &Shared) {
    for (tenant, cell) in shared.due_cells() {
        match apply::process(shared, &tenant, cell) {
            Ok(_) => shared.cell_done(&tenant, cell),
            Err(MemoryError::Model(_)) => shared.retry_cell(&tenant, cell),
            Err(e) => {
                shared.cell_done(&tenant, cell);
                shared.set_error(e);
            }
        }
    }
}

/// One refresh pass over a plan of every dirty node; false when there was nothing to do.
fn refresh_pass(shared: &Arc<Shared>) -> Result<bool, MemoryError> {
    let mut levels: BTreeMap<u8, Vec<Item>> = BTreeMap::new();
    {
        let forest = shared.forest.lock();
        for (tenant, tf) in &forest.tenants {
            let trees: Vec<_> = tf.dirty.iter().filter_map(|id| tf.trees.get(id)).collect();
            for level in refresh_plan(&trees).levels {
                let items = levels.entry(level.level).or_default();
                items.extend(
                    level
                        .nodes
                        .iter()
                        .map(|n| (tenant.clone(), n.tree.0, n.node)),
                );
            }
        }
    }
    let now = Instant::now();
    let mut did = false;
    for items in levels.into_values() {
        let items: Vec<Item> = items
            .into_iter()
            .filter(|i| shared.node_due(i, now))
            .collect();
        let (jobs, reused) = read_inputs(shared, &items)?;
        did |= !jobs.is_empty() || reused > 0;
        let (tx, rx) = unbounded();
        for (item, input) in jobs {
            let (s, tx) = (Arc::clone(shared), tx.clone());
            let submitted = shared.summary_pool.submit(move || {
                let result = summarize(&s, &item.0, &input);
                let _ = tx.send((item, input.hash, result));
            });
            if !submitted {
                return Err(MemoryError::Stopped);
            }
        }
        drop(tx);
        let results: Vec<_> = rx.into_iter().collect();
        apply_results(shared, results)?;
    }
    Ok(did)
}

/// Calls the summarizer (and the embedder) for one node.
fn summarize(
    shared: &Shared,
    tenant: &TenantId,
    input: &SummaryInput,
) -> Result<(SummaryOutput, Option<Vec<f32>>), MemoryError> {
    let name = String::from_utf8_lossy(tenant.name()).into_owned();
    let request = SummaryRequest {
        kind: input.kind,
        label: input.label.clone(),
        level: input.level,
        time: input.time,
        children: input.children.clone(),
    };
    let out = match shared.opts.summarizer.summarize(&request) {
        Ok(o) => {
            shared.counters.call(&name, CallKind::Summary, Ok(o.usage));
            o
        }
        Err(e) => {
            shared.counters.call(&name, CallKind::Summary, Err(()));
            return Err(MemoryError::Model(e.to_string()));
        }
    };
    let embedding = match &shared.opts.embedder {
        Some(emb) => match emb.embed(std::slice::from_ref(&out.text)) {
            Ok(e) => {
                shared
                    .counters
                    .call(&name, CallKind::Embedding, Ok(e.usage));
                e.vectors.into_iter().next()
            }
            Err(_) => {
                shared.counters.call(&name, CallKind::Embedding, Err(()));
                None
            }
        },
        None => None,
    };
    Ok((out, embedding))
}

/// Reads every item's summary input; applies reusable summaries at once (one batch per
/// tenant) and returns the rest as jobs.
fn read_inputs(
    shared: &Shared,
    items: &[Item],
) -> Result<(Vec<(Item, SummaryInput)>, u64), MemoryError> {
    let mut forest = shared.forest.lock();
    let mut jobs = Vec::new();
    let (mut reused, mut copied) = (0, 0);
    for (tenant, group) in by_tenant(items) {
        let Some(tf) = forest.tenants.get_mut(&tenant) else {
            continue;
        };
        let mut st = Staged::new(&shared.kv, tenant.clone());
        let ids: Vec<u64> = group.iter().map(|i| i.1).collect();
        let result = (|| {
            for item in group {
                let Some(tree) = tf.trees.get_mut(&item.1) else {
                    continue;
                };
                let input = match tree.summary_input(&st, item.2) {
                    Ok(i) => i,
                    Err(TreeError::ChildDirty { .. } | TreeError::UnknownNode { .. }) => continue,
                    Err(e) => return Err(MemoryError::from(e)),
                };
                match (&input.previous, input.children.as_slice()) {
                    (Some(prev), _) if prev.input_hash == input.hash => {
                        let text = prev.text.clone();
                        tree.apply_summary(&mut st, item.2, input.hash, &text)?;
                        reused += 1;
                    }
                    // One child: its text is the summary, no model call needed.
                    (_, [only]) => {
                        let text = format!("{} {}", header(input.time, &input.label), only.text);
                        tree.apply_summary(&mut st, item.2, input.hash, &text)?;
                        copied += 1;
                    }
                    _ => jobs.push((item.clone(), input)),
                }
            }
            clear_marks(&mut st, tf, &ids);
            Ok(())
        })();
        finish(shared, &mut forest.tenants, &tenant, st, result)?;
    }
    shared.counters.summaries(reused, 0);
    shared.counters.copied(copied);
    Ok((jobs, reused + copied))
}

type Outcome = (
    Item,
    u64,
    Result<(SummaryOutput, Option<Vec<f32>>), MemoryError>,
);

/// Applies summary results, one batch per tenant; stale ones are dropped.
fn apply_results(shared: &Shared, results: Vec<Outcome>) -> Result<(), MemoryError> {
    let mut forest = shared.forest.lock();
    let mut stale = 0;
    let mut groups: HashMap<TenantId, Vec<Outcome>> = HashMap::new();
    for r in results {
        groups.entry(r.0 .0.clone()).or_default().push(r);
    }
    for (tenant, group) in groups {
        let Some(tf) = forest.tenants.get_mut(&tenant) else {
            continue;
        };
        let mut st = Staged::new(&shared.kv, tenant.clone());
        let ids: Vec<u64> = group.iter().map(|r| r.0 .1).collect();
        let result = (|| {
            for (item, hash, outcome) in group {
                let (out, embedding) = match outcome {
                    Ok(x) => x,
                    Err(_) => {
                        shared.node_failed(&item);
                        continue;
                    }
                };
                shared.node_ok(&item);
                let Some(tree) = tf.trees.get_mut(&item.1) else {
                    continue;
                };
                match tree.apply_summary(&mut st, item.2, hash, &out.text) {
                    Ok(()) => {}
                    Err(
                        TreeError::StaleSummary { .. }
                        | TreeError::ChildDirty { .. }
                        | TreeError::UnknownNode { .. },
                    ) => {
                        stale += 1;
                        continue;
                    }
                    Err(e) => return Err(MemoryError::from(e)),
                }
                if let Some(v) = embedding {
                    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                    st.put(
                        Table::Embeddings,
                        &record::pair_key(item.1, item.2 .0),
                        bytes,
                    );
                }
            }
            clear_marks(&mut st, tf, &ids);
            Ok(())
        })();
        finish(shared, &mut forest.tenants, &tenant, st, result)?;
    }
    shared.counters.summaries(0, stale);
    shared.counters.dirty_now(forest.dirty_total() > 0);
    Ok(())
}

/// Deletes the dirty-mark rows of clean trees.
fn clear_marks(st: &mut Staged<'_>, tf: &mut TenantForest, ids: &[u64]) {
    for id in ids {
        if tf.trees.get(id).is_some_and(|t| t.dirty().is_empty()) && tf.dirty.remove(id) {
            st.delete(Table::DirtyMarks, &id.to_be_bytes());
        }
    }
}

/// Commits a tenant's batch; on any failure drops the tenant's cached trees (they may
/// have moved ahead of the store) so they reload.
fn finish(
    shared: &Shared,
    tenants: &mut HashMap<TenantId, TenantForest>,
    tenant: &TenantId,
    st: Staged<'_>,
    result: Result<(), MemoryError>,
) -> Result<(), MemoryError> {
    let committed =
        result.and_then(|()| st.commit(shared.opts.durability).map_err(MemoryError::from));
    if let Err(e) = committed {
        tenants.remove(tenant);
        return Err(e);
    }
    Ok(())
}

fn by_tenant(items: &[Item]) -> BTreeMap<TenantId, Vec<&Item>> {
    let mut out: BTreeMap<TenantId, Vec<&Item>> = BTreeMap::new();
    for i in items {
        out.entry(i.0.clone()).or_default().push(i);
    }
    out
}
