//! The refresh scheduler: one thread that retries pending cells and runs refresh passes
//! over the dirty trees of every tenant, bottom-up level by level; within a level the
//! summary calls go to the summary pool (its workers bound the concurrent calls), the
//! nodes of one tenant submitted together in groups of up to
//! `MemoryOptions::summary_batch`, each group one `Summarizer::summarize_batch` call. Inputs
//! are read at a snapshot, outside the forest lock that every tree change holds, so the
//! reads never block ingest. A result commits only if the node is unchanged since its
//! input was read (`MemTree::apply_summary` checks its `InputStamp`); an input whose hash
//! equals the stored summary's reuses that summary without a call; a failed call leaves the
//! node dirty and backs off, and after `MemoryOptions::summary_attempts` failures the node
//! gets the extractive summary, so no reply can keep a node dirty forever.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::unbounded;
use memforest_tree::refresh::{refresh_plan, SummaryInput};
use memforest_tree::{MemTree, NodeId, TreeError};
use parking_lot::MutexGuard;

use crate::memory::forest::TenantForest;
use crate::memory::limits::LEAF_TEXT_BUDGET;
use crate::memory::model::{guarded, ModelError};
use crate::memory::record;
use crate::memory::stats::CallKind;
use crate::memory::store::Staged;
use crate::memory::summarize::{
    header, ExtractiveSummarizer, Summarizer, SummaryOutput, SummaryRequest,
};
use crate::memory::{apply, MemoryError, Shared};
use crate::schema::Table;
use memforest_engine::TenantId;

/// A node to summarize: tenant, tree id, node.
type Item = (TenantId, u64, NodeId);

/// A node's summary work: its input, and its summary when copied from a single child
/// (then no summarizer call is made; it is embedded with the others).
type Job = (Item, SummaryInput, Option<String>);

/// The scheduler thread's body; returns when the runtime stops. After a refresh pass that
/// did work (ingest keeps dirtying nodes) the next starts `refresh_interval` later, or
/// sooner when hurried ([`Shared::hurry`]), stopping, or a cell retry falls due; after a
/// pass that found nothing the scheduler sleeps until woken.
pub fn run(shared: &Arc<Shared>) {
    loop {
        let stop = shared.stopping();
        let summarize = !stop || shared.opts.summarize_on_shutdown && shared.summarize_on_stop();
        loop {
            retry_cells(shared);
            if !summarize {
                break;
            }
            match refresh_pass(shared) {
                Ok(true) => shared.notify(),
                Ok(false) => break,
                Err(e) => {
                    shared.set_error(e);
                    break;
                }
            }
            // Returns at once when the runtime is stopping.
            shared.pace(Instant::now().checked_add(shared.opts.refresh_interval));
            if shared.stopping() && !stop {
                break;
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
        let result = apply::process(shared, &tenant, cell);
        shared.settle_cell(&tenant, cell, result);
    }
}

/// Set when the refresh pass that owns it returns: the summary jobs it queued and no
/// longer waits for (it returns early on an error, or at close) skip their model calls.
#[derive(Debug, Default)]
struct Abandon(Arc<AtomicBool>);

impl Abandon {
    fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0)
    }
}

impl Drop for Abandon {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One refresh pass over a plan of every dirty node; false when there was nothing to do.
///
/// Levels are barriers per tree, not across trees: a tree's level-`l + 1` nodes are read and
/// submitted as soon as that tree's level-`l` results are applied, so the pool never idles
/// while a level of other trees drains (the paper's level-by-level order holds within each
/// tree, which is all a node's input depends on). Results are applied as they arrive, in
/// whatever batches the channel holds.
fn refresh_pass(shared: &Arc<Shared>) -> Result<bool, MemoryError> {
    let mut plans: HashMap<(TenantId, u64), BTreeMap<u8, Vec<NodeId>>> = HashMap::new();
    {
        let forest = shared.forest.lock();
        let mut nodes = 0u64;
        for (tenant, tf) in &forest.tenants {
            let trees: Vec<_> = tf.dirty.iter().filter_map(|id| tf.trees.get(id)).collect();
            for level in refresh_plan(&trees).levels {
                nodes += level.nodes.len() as u64;
                for n in level.nodes {
                    plans
                        .entry((tenant.clone(), n.tree.0))
                        .or_default()
                        .entry(level.level)
                        .or_default()
                        .push(n.node);
                }
            }
        }
        shared.set_dirty_estimate(nodes);
    }
    let now = Instant::now();
    let abandoned = Abandon::default();
    let (tx, rx) = unbounded();
    let mut outstanding: HashMap<(TenantId, u64), usize> = HashMap::new();
    let mut did = false;
    let mut ready: Vec<(TenantId, u64)> = plans.keys().cloned().collect();
    loop {
        // Submit the next level of every tree whose previous level is done (a level with
        // no model call is done at once, so loop until each tree waits on a call).
        while !ready.is_empty() {
            let mut items = Vec::new();
            for key in ready.drain(..) {
                let Some(levels) = plans.get_mut(&key) else {
                    continue;
                };
                let Some(level) = levels.keys().next().copied() else {
                    continue;
                };
                let nodes = levels.remove(&level).unwrap_or_default();
                items.extend(
                    nodes
                        .into_iter()
                        .map(|n| (key.0.clone(), key.1, n))
                        .filter(|i| shared.node_due(i, now)),
                );
                outstanding.insert(key, 0);
            }
            let (jobs, reused) = read_inputs(shared, &items)?;
            did |= !jobs.is_empty() || reused > 0;
            for group in groups(shared, jobs) {
                for (item, _, _) in &group {
                    *outstanding.entry((item.0.clone(), item.1)).or_default() += 1;
                }
                let (s, tx, gone) = (Arc::clone(shared), tx.clone(), abandoned.flag());
                let submitted = shared.summary_pool.submit(move || {
                    if gone.load(Ordering::Relaxed) {
                        return;
                    }
                    for outcome in summarize_group(&s, group) {
                        let _ = tx.send(outcome);
                    }
                });
                if !submitted {
                    return Err(MemoryError::Stopped);
                }
            }
            ready.extend(
                outstanding
                    .iter()
                    .filter(|(k, n)| **n == 0 && plans.get(*k).is_some_and(|l| !l.is_empty()))
                    .map(|(k, _)| k.clone()),
            );
            outstanding.retain(|_, n| *n > 0);
        }
        if outstanding.is_empty() {
            return Ok(did);
        }
        let Ok(first) = rx.recv() else {
            return Err(MemoryError::Stopped);
        };
        let mut results = vec![first];
        results.extend(rx.try_iter());
        for r in &results {
            let key = (r.0 .0.clone(), r.0 .1);
            if let Some(n) = outstanding.get_mut(&key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    outstanding.remove(&key);
                    ready.push(key);
                }
            }
        }
        embed_summaries(shared, &mut results);
        apply_results(shared, results)?;
    }
}

/// A node's new summary, and its embedding once [`embed_summaries`] has run.
#[derive(Debug)]
struct Summarized {
    out: SummaryOutput,
    embedding: Option<Vec<f32>>,
    /// The model failed on the node's last try: `out` is the extractive summary.
    fell_back: bool,
    /// This was the node's last try (`MemoryOptions::summary_attempts`).
    last_try: bool,
}

/// `jobs` in the groups that go to the summarizer together: a node whose summary is
/// copied from a single child alone (no call), the others per tenant in groups of up to
/// `MemoryOptions::summary_batch` (and the summarizer's `max_batch`).
fn groups(shared: &Shared, jobs: Vec<Job>) -> Vec<Vec<Job>> {
    let limit = shared
        .opts
        .summary_batch
        .min(shared.opts.summarizer.max_batch())
        .max(1);
    let mut out = Vec::new();
    let mut by_tenant: BTreeMap<TenantId, Vec<Job>> = BTreeMap::new();
    for job in jobs {
        if job.2.is_some() || limit == 1 {
            out.push(vec![job]);
        } else {
            by_tenant.entry(job.0 .0.clone()).or_default().push(job);
        }
    }
    for (_, mut tenant_jobs) in by_tenant {
        while !tenant_jobs.is_empty() {
            let rest = tenant_jobs.split_off(limit.min(tenant_jobs.len()));
            out.push(std::mem::replace(&mut tenant_jobs, rest));
        }
    }
    out
}

/// Summarizes a group of [`groups`]: one node through [`summarize`], several (of one
/// tenant) in one `Summarizer::summarize_batch` call. A node the batched reply leaves out
/// or answers with nothing usable counts as a failed summary call, as does a failure of
/// the whole call for each node.
fn summarize_group(shared: &Shared, group: Vec<Job>) -> Vec<Outcome> {
    let last_try = |item: &Item| shared.node_failures(item) + 1 >= shared.opts.summary_attempts;
    if group.len() == 1 {
        return group
            .into_iter()
            .map(|(item, input, copied)| {
                let result = summarize(shared, &item.0, &input, copied.as_deref(), last_try(&item));
                (item, input, result)
            })
            .collect();
    }
    let Some(tenant) = group.first().map(|j| j.0 .0.clone()) else {
        return Vec::new();
    };
    let name = String::from_utf8_lossy(tenant.name()).into_owned();
    let requests: Vec<SummaryRequest> = group.iter().map(|j| request_of(&j.1)).collect();
    let answers: Vec<Result<SummaryOutput, ModelError>> = match guarded("summarizer", || {
        shared.opts.summarizer.summarize_batch(&requests)
    }) {
        Ok(b) if b.nodes.len() == requests.len() => {
            shared.counters.call(&name, CallKind::Summary, Ok(b.usage));
            b.nodes
        }
        result => {
            let why = match result {
                Err(e) => e.to_string(),
                Ok(b) => format!(
                    "summarizer returned {} summaries for {} nodes",
                    b.nodes.len(),
                    requests.len()
                ),
            };
            requests
                .iter()
                .map(|_| Err(ModelError::Backend(why.clone().into())))
                .collect()
        }
    };
    group
        .into_iter()
        .zip(requests)
        .zip(answers)
        .map(|(((item, input, _), request), answer)| {
            let result = settle_call(shared, &name, &request, answer, last_try(&item));
            (item, input, result)
        })
        .collect()
}

/// The summarizer's request for a node's input.
fn request_of(input: &SummaryInput) -> SummaryRequest {
    SummaryRequest {
        kind: input.kind,
        label: input.label.clone(),
        level: input.level,
        time: input.time,
        children: input.children.clone(),
    }
}

/// Calls the summarizer for one node (unless its summary is `copied` from a single
/// child); a failure leaves the node dirty for a retry, except on its `last_try`, which
/// gives the extractive summary instead.
fn summarize(
    shared: &Shared,
    tenant: &TenantId,
    input: &SummaryInput,
    copied: Option<&str>,
    last_try: bool,
) -> Result<Summarized, MemoryError> {
    let name = String::from_utf8_lossy(tenant.name()).into_owned();
    let request = request_of(input);
    let answer = match copied {
        Some(text) => {
            return Ok(Summarized {
                out: SummaryOutput {
                    text: text.to_owned(),
                    ..SummaryOutput::default()
                },
                embedding: None,
                fell_back: false,
                last_try,
            })
        }
        None => guarded("summarizer", || shared.opts.summarizer.summarize(&request)),
    };
    if let Ok(o) = &answer {
        shared.counters.call(&name, CallKind::Summary, Ok(o.usage));
    }
    settle_call(shared, &name, &request, answer, last_try)
}

/// A node's summary from the summarizer's `answer`: a failure (counted as a failed call),
/// or a summary over [`LEAF_TEXT_BUDGET`] bytes, leaves the node dirty for a retry, except
/// on its `last_try`, which gives the extractive summary instead.
fn settle_call(
    shared: &Shared,
    tenant: &str,
    request: &SummaryRequest,
    answer: Result<SummaryOutput, ModelError>,
    last_try: bool,
) -> Result<Summarized, MemoryError> {
    let mut fell_back = false;
    // A summary must fit a tree page with the headers stacked over it, as a leaf must.
    let answer = answer.and_then(|o| match o.text.len() {
        len if len > LEAF_TEXT_BUDGET => Err(ModelError::Malformed {
            offset: LEAF_TEXT_BUDGET,
            what: format!("summary of {len} bytes, over the {LEAF_TEXT_BUDGET}-byte budget"),
        }),
        _ => Ok(o),
    });
    let out = match answer {
        Ok(o) => o,
        Err(e) => {
            shared.counters.call(tenant, CallKind::Summary, Err(()));
            if !last_try {
                return Err(MemoryError::Model(e.to_string()));
            }
            fell_back = true;
            ExtractiveSummarizer::default()
                .summarize(request)
                .map_err(|e| MemoryError::Model(e.to_string()))?
        }
    };
    Ok(Summarized {
        out,
        embedding: None,
        fell_back,
        last_try,
    })
}

/// Embeds the new summaries of `results` when the store has an embedder: one
/// `Embedder::embed` call per tenant for all of its summaries that arrived together,
/// across trees and levels (the embedder splits it into requests of its batch size).
/// When the call fails, each of those nodes stays dirty for a retry, except on its last
/// try: then it is applied without a vector (`Memory::embed_missing` fills it later).
/// Runs outside the forest lock.
fn embed_summaries(shared: &Shared, results: &mut [Outcome]) {
    let Some(embedder) = &shared.opts.embedder else {
        return;
    };
    let mut by_tenant: BTreeMap<TenantId, Vec<&mut Outcome>> = BTreeMap::new();
    for r in results.iter_mut().filter(|r| r.2.is_ok()) {
        by_tenant.entry(r.0 .0.clone()).or_default().push(r);
    }
    for (tenant, mut group) in by_tenant {
        let name = String::from_utf8_lossy(tenant.name()).into_owned();
        let texts: Vec<String> = group
            .iter()
            .filter_map(|r| r.2.as_ref().ok().map(|s| s.out.text.clone()))
            .collect();
        let vectors = match crate::memory::embed::checked(embedder.as_ref(), &texts) {
            Ok(e) => {
                shared
                    .counters
                    .call(&name, CallKind::Embedding, Ok(e.usage));
                Ok(e.vectors)
            }
            Err(e) => {
                shared.counters.call(&name, CallKind::Embedding, Err(()));
                Err(e.to_string())
            }
        };
        match vectors {
            Ok(vectors) => {
                for (r, v) in group.iter_mut().zip(vectors) {
                    if let Ok(s) = &mut r.2 {
                        s.embedding = Some(v);
                    }
                }
            }
            Err(why) => {
                for r in &mut group {
                    if r.2.as_ref().is_ok_and(|s| !s.last_try) {
                        r.2 = Err(MemoryError::Model(why.clone()));
                    }
                }
            }
        }
    }
}

/// Summaries settled without a model call in one [`read_inputs`].
#[derive(Debug, Default)]
struct Settled {
    /// The stored summary was made from the same input.
    reused: u64,
    /// Copied from a single child.
    copied: u64,
    /// The node changed after its input was read (another pass follows).
    stale: u64,
}

/// Reads every item's summary input and settles what needs no model call, one tenant at a
/// time: the inputs are read at a snapshot without the forest lock ([`read_at_snapshot`]),
/// then the summaries that need no call are applied under it ([`settle`]), so ingest
/// waits at most for one tenant's applications. Returns the rest as jobs, with the number
/// of items settled.
fn read_inputs(shared: &Shared, items: &[Item]) -> Result<(Vec<Job>, u64), MemoryError> {
    let mut jobs = Vec::new();
    let mut settled = Settled::default();
    for (tenant, group) in by_tenant(items) {
        let inputs = read_at_snapshot(shared, &tenant, &group)?;
        let trees: Vec<u64> = group.iter().map(|i| i.1).collect();
        settle(shared, &tenant, &trees, inputs, &mut jobs, &mut settled)?;
    }
    shared.counters.summaries(settled.reused, settled.stale);
    shared.counters.copied(settled.copied);
    Ok((jobs, settled.reused + settled.copied + settled.stale))
}

/// The summary inputs of `tenant`'s `items`, read at one snapshot. The forest lock is held
/// only to copy the items' tree handles (a tree's id, kind and label are all the reads
/// take from it) and to take the snapshot, so ingest is never blocked by these point
/// reads; the snapshot makes every node agree with the child pages it records, and
/// `MemTree::apply_summary` later rejects an input whose node changed since. Items whose
/// node is gone or whose children still need summaries are skipped.
fn read_at_snapshot(
    shared: &Shared,
    tenant: &TenantId,
    items: &[&Item],
) -> Result<Vec<(Item, SummaryInput)>, MemoryError> {
    // Purge waits for this guard, so it never compacts while a snapshot taken before its
    // forget is read here.
    let _reading = shared.snapshot_read();
    let (trees, snapshot) = {
        let forest = shared.forest.lock();
        let mut trees: HashMap<u64, MemTree> = HashMap::new();
        if let Some(tf) = forest.tenants.get(tenant) {
            for (_, id, _) in items {
                if let Some(tree) = tf.trees.get(id) {
                    trees.entry(*id).or_insert_with(|| tree.clone());
                }
            }
        }
        (trees, shared.kv.snapshot())
    };
    let pages = shared.kv.pages_at(tenant, &snapshot);
    let mut out = Vec::with_capacity(items.len());
    for &item in items {
        let Some(tree) = trees.get(&item.1) else {
            continue;
        };
        match tree.summary_input(&pages, item.2) {
            Ok(input) => out.push((item.clone(), input)),
            Err(TreeError::ChildDirty { .. } | TreeError::UnknownNode { .. }) => {}
            Err(e) => return Err(MemoryError::from(e)),
        }
    }
    Ok(out)
}

/// Applies `tenant`'s summaries that need no call (reused when the input hash matches the
/// stored summary's, copied from a single child), as one batch under the forest lock, and
/// pushes the rest onto `jobs`; the dirty marks of `trees` left clean are deleted in the
/// same batch.
fn settle(
    shared: &Shared,
    tenant: &TenantId,
    trees: &[u64],
    inputs: Vec<(Item, SummaryInput)>,
    jobs: &mut Vec<Job>,
    settled: &mut Settled,
) -> Result<(), MemoryError> {
    let mut forest = shared.forest.lock();
    let Some(tf) = forest.tenants.get_mut(tenant) else {
        return Ok(());
    };
    let mut st = Staged::new(&shared.kv, tenant.clone());
    let result = (|| {
        for (item, input) in inputs {
            let Some(tree) = tf.trees.get_mut(&item.1) else {
                continue;
            };
            let (text, counter) = match (&input.previous, input.children.as_slice()) {
                (Some(prev), _) if prev.input_hash == input.hash => {
                    (prev.text.clone(), &mut settled.reused)
                }
                // One child: its text is the summary, no model call needed (but an
                // embedding call when an embedder is set).
                (_, [only]) => {
                    let text = format!("{} {}", header(input.time, &input.label), only.text);
                    if shared.opts.embedder.is_some() {
                        settled.copied += 1;
                        jobs.push((item, input, Some(text)));
                        continue;
                    }
                    (text, &mut settled.copied)
                }
                _ => {
                    jobs.push((item, input, None));
                    continue;
                }
            };
            match tree.apply_summary(&mut st, &input, &text) {
                Ok(()) => *counter += 1,
                Err(TreeError::StaleSummary { .. } | TreeError::UnknownNode { .. }) => {
                    settled.stale += 1;
                }
                Err(e) => return Err(MemoryError::from(e)),
            }
        }
        clear_marks(&mut st, tf, trees);
        Ok(())
    })();
    finish(shared, &mut forest.tenants, tenant, st, result)
}

type Outcome = (Item, SummaryInput, Result<Summarized, MemoryError>);

/// Applies summary results, one batch per tenant, yielding the forest lock to a waiting
/// writer between tenants; stale ones are dropped.
fn apply_results(shared: &Shared, results: Vec<Outcome>) -> Result<(), MemoryError> {
    let mut forest = shared.forest.lock();
    let mut stale = 0;
    let mut groups: HashMap<TenantId, Vec<Outcome>> = HashMap::new();
    for r in results {
        groups.entry(r.0 .0.clone()).or_default().push(r);
    }
    for (tenant, group) in groups {
        MutexGuard::bump(&mut forest);
        let Some(tf) = forest.tenants.get_mut(&tenant) else {
            continue;
        };
        let mut st = Staged::new(&shared.kv, tenant.clone());
        let ids: Vec<u64> = group.iter().map(|r| r.0 .1).collect();
        let result = (|| {
            for (item, input, outcome) in group {
                let Summarized {
                    out,
                    embedding,
                    fell_back,
                    ..
                } = match outcome {
                    Ok(x) => x,
                    Err(_) => {
                        shared.node_failed(&item);
                        continue;
                    }
                };
                shared.node_ok(&item);
                if fell_back {
                    shared.counters.summary_fallback();
                }
                let Some(tree) = tf.trees.get_mut(&item.1) else {
                    continue;
                };
                match tree.apply_summary(&mut st, &input, &out.text) {
                    Ok(()) => {}
                    Err(TreeError::StaleSummary { .. } | TreeError::UnknownNode { .. }) => {
                        stale += 1;
                        continue;
                    }
                    Err(e) => return Err(MemoryError::from(e)),
                }
                if let Some(v) = embedding {
                    st.put(
                        Table::Embeddings,
                        &record::pair_key(item.1, item.2 .0),
                        record::vector_bytes(&v),
                    );
                }
            }
            clear_marks(&mut st, tf, &ids);
            Ok(())
        })();
        finish(shared, &mut forest.tenants, &tenant, st, result)?;
    }
    shared.counters.summaries(0, stale);
    shared.counters.dirty_now(forest.any_dirty());
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
        // Recorded before the tenant's trees leave memory with their dirty marks: a
        // `flush_summaries` that then finds nothing dirty must find the error.
        let e = shared.record_error(e);
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
