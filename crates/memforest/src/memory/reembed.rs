//! `Memory::embed_missing`: regenerates the summary embeddings and fact vectors (derived
//! data) that `Memory::drop_derived` removed, or that were never made because the embedder
//! was configured later. Summaries and facts themselves are not touched.

use memforest_tree::{NodeId, NodeStore};

use crate::memory::embed::Embedder;
use crate::memory::forest::open_tree;
use crate::memory::record::{self, FactRecord};
use crate::memory::stats::CallKind;
use crate::memory::store::Staged;
use crate::memory::{MemoryError, Shared};
use crate::recall::vectors;
use crate::schema::Table;
use crate::Memory;
use memforest_engine::TenantId;

/// Texts embedded per embedder call.
const BATCH: usize = 64;

impl Memory {
    /// Embeds every internal-node summary (in every tree of every tenant) that has no row in
    /// `Embeddings`, committing one batch per tree, and every fact without a vector
    /// (`FactVectors`), one batch per 64 facts, with the configured embedder.
    /// Returns the number of vectors written (0 without an embedder). Cost: one read of
    /// every tree page and every fact.
    ///
    /// # Errors
    /// [`MemoryError::Model`] when the embedder fails (rows written for earlier trees stay;
    /// calling again resumes); [`MemoryError::Stopped`]; engine and tree errors.
    pub fn embed_missing(&self) -> Result<u64, MemoryError> {
        let shared = self.memory_shared()?;
        let Some(embedder) = shared.opts.embedder.clone() else {
            return Ok(0);
        };
        let mut written = 0;
        for tenant in self.tenants()? {
            let name = String::from_utf8_lossy(tenant.name()).into_owned();
            for (k, _) in shared.kv.scan_prefix(&tenant, Table::Trees, &[])? {
                let id = record::be_u64(&k).ok_or(MemoryError::Invariant("short tree key"))?;
                let missing = {
                    let snapshot = shared.kv.snapshot();
                    let pages = shared.kv.pages_at(&tenant, &snapshot);
                    missing(&pages, &Staged::new(&shared.kv, tenant.clone()), id)?
                };
                let mut embedded = Vec::with_capacity(missing.len());
                for chunk in missing.chunks(BATCH) {
                    let texts: Vec<String> = chunk.iter().map(|m| m.1.clone()).collect();
                    let e = match crate::memory::embed::checked(embedder.as_ref(), &texts) {
                        Ok(e) => e,
                        Err(e) => {
                            shared.counters.call(&name, CallKind::Embedding, Err(()));
                            return Err(MemoryError::Model(e.to_string()));
                        }
                    };
                    shared
                        .counters
                        .call(&name, CallKind::Embedding, Ok(e.usage));
                    embedded.extend(chunk.iter().cloned().zip(e.vectors));
                }
                written += store(&shared, &tenant, id, embedded)?;
            }
            written += embed_facts(&shared, &tenant, &name, embedder.as_ref())?;
        }
        Ok(written)
    }
}

/// Embeds `tenant`'s facts that have no vector, [`BATCH`] per call, and commits each
/// batch under the forest lock, skipping facts forgotten or rewritten meanwhile. Returns
/// the vectors written.
fn embed_facts(
    shared: &Shared,
    tenant: &TenantId,
    name: &str,
    embedder: &dyn Embedder,
) -> Result<u64, MemoryError> {
    let mut todo: Vec<(Vec<u8>, String)> = Vec::new();
    for (k, v) in shared.kv.scan_prefix(tenant, Table::Facts, &[])? {
        if shared.kv.get(tenant, Table::FactVectors, &k)?.is_none() {
            let rec: FactRecord = record::decode(&v, "fact")?;
            todo.push((k.to_vec(), rec.text));
        }
    }
    let mut written = 0;
    for chunk in todo.chunks(BATCH) {
        let texts: Vec<String> = chunk.iter().map(|c| c.1.clone()).collect();
        let e = crate::memory::embed::checked(embedder, &texts).map_err(|e| {
            shared.counters.call(name, CallKind::Embedding, Err(()));
            MemoryError::Model(e.to_string())
        })?;
        shared.counters.call(name, CallKind::Embedding, Ok(e.usage));
        let _forest = shared.forest.lock();
        let mut st = Staged::new(&shared.kv, tenant.clone());
        for ((key, text), v) in chunk.iter().zip(&e.vectors) {
            let same = match st.get(Table::Facts, key)? {
                Some(b) => record::decode::<FactRecord>(&b, "fact")?.text == *text,
                None => false,
            };
            if let (true, Some(id)) = (same, record::be_u64(key)) {
                vectors::put(&mut st, id, v);
                written += 1;
            }
        }
        vectors::record_embedder(&mut st, embedder.name())?;
        st.commit(shared.opts.durability)?;
    }
    Ok(written)
}

/// Commits the embeddings of tree `id` whose node still holds the summary they were made
/// from, under the forest lock (so a forget or a new summary cannot interleave: a vector of
/// a summary that changed or of a node that is gone is dropped, not stored where no later
/// forget would find it). Returns the rows written.
fn store(
    shared: &Shared,
    tenant: &TenantId,
    id: u64,
    embedded: Vec<((NodeId, String), Vec<f32>)>,
) -> Result<u64, MemoryError> {
    let _forest = shared.forest.lock();
    let mut st = Staged::new(&shared.kv, tenant.clone());
    let Some(tree) = open_tree(&st, id)? else {
        return Ok(0);
    };
    let mut written = 0;
    for ((node, text), v) in embedded {
        let current = match tree.node(&st, node) {
            Ok(n) => n.summary.map(|s| s.text),
            Err(memforest_tree::TreeError::UnknownNode { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        if current.as_deref() == Some(text.as_str()) {
            st.put(
                Table::Embeddings,
                &record::pair_key(id, node.0),
                record::vector_bytes(&v),
            );
            written += 1;
        }
    }
    st.commit(shared.opts.durability)?;
    Ok(written)
}

/// The internal nodes of tree `id` with a summary and no embedding row, with their text:
/// the tree read from `pages` (a snapshot, so ingest may rewrite it meanwhile), the rows
/// from `rows`.
fn missing(
    pages: &impl NodeStore,
    rows: &Staged<'_>,
    id: u64,
) -> Result<Vec<(NodeId, String)>, MemoryError> {
    let Some(tree) = open_tree(pages, id)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut stack: Vec<NodeId> = tree.meta().root.iter().map(|r| r.id).collect();
    while let Some(n) = stack.pop() {
        let node = tree.node(pages, n)?;
        stack.extend(node.children().iter().map(|c| c.id));
        let Some(summary) = node.summary else {
            continue;
        };
        if rows
            .get(Table::Embeddings, &record::pair_key(id, n.0))?
            .is_none()
        {
            out.push((n, summary.text));
        }
    }
    Ok(out)
}
