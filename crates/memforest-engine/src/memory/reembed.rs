//! `Db::embed_missing_summaries`: regenerates the summary embeddings (derived data) that
//! `Db::drop_derived` removed, or that were never made because the embedder was configured
//! later. Summaries themselves live in the tree pages and are not touched.

use memforest_tree::{MemTree, NodeId, TreeId};

use crate::db::Db;
use crate::key::Table;
use crate::memory::record;
use crate::memory::stats::CallKind;
use crate::memory::store::Staged;
use crate::memory::MemoryError;

/// Texts embedded per embedder call.
const BATCH: usize = 64;

impl Db {
    /// Embeds every internal-node summary (in every tree of every tenant) that has no row in
    /// `Embeddings`, with the configured embedder, committing one batch per tree. Returns
    /// the number of embeddings written (0 without an embedder). Cost: one read of every
    /// tree page.
    ///
    /// # Errors
    /// [`MemoryError::Model`] when the embedder fails (rows written for earlier trees stay;
    /// calling again resumes); [`MemoryError::Stopped`]; engine and tree errors.
    pub fn embed_missing_summaries(&self) -> Result<u64, MemoryError> {
        let shared = self.memory_shared()?;
        let Some(embedder) = shared.opts.embedder.clone() else {
            return Ok(0);
        };
        let mut written = 0;
        for tenant in self.tenants()? {
            let name = String::from_utf8_lossy(tenant.name()).into_owned();
            for (k, _) in shared.kv.scan_prefix(&tenant, Table::Trees, &[])? {
                let id = record::be_u64(&k).ok_or(MemoryError::Invariant("short tree key"))?;
                let mut st = Staged::new(&shared.kv, tenant.clone());
                let missing = missing(&st, id)?;
                for chunk in missing.chunks(BATCH) {
                    let texts: Vec<String> = chunk.iter().map(|m| m.1.clone()).collect();
                    let e = match embedder.embed(&texts) {
                        Ok(e) => e,
                        Err(e) => {
                            shared.counters.call(&name, CallKind::Embedding, Err(()));
                            return Err(MemoryError::Model(e.to_string()));
                        }
                    };
                    shared
                        .counters
                        .call(&name, CallKind::Embedding, Ok(e.usage));
                    if e.vectors.len() != chunk.len() {
                        return Err(MemoryError::Model(
                            "embedder returned a different number of vectors".into(),
                        ));
                    }
                    for ((node, _), v) in chunk.iter().zip(e.vectors) {
                        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                        st.put(Table::Embeddings, &record::pair_key(id, node.0), bytes);
                        written += 1;
                    }
                }
                st.commit(shared.opts.durability)?;
            }
        }
        Ok(written)
    }
}

/// The internal nodes of tree `id` with a summary and no embedding row, with their text.
fn missing(st: &Staged<'_>, id: u64) -> Result<Vec<(NodeId, String)>, MemoryError> {
    let tree = match MemTree::open(st, TreeId(id)) {
        Ok(t) => t,
        Err(memforest_tree::TreeError::MissingPage { .. }) => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    let mut stack: Vec<NodeId> = tree.meta().root.iter().map(|r| r.id).collect();
    while let Some(n) = stack.pop() {
        let node = tree.node(st, n)?;
        stack.extend(node.children().iter().map(|c| c.id));
        let Some(summary) = node.summary else {
            continue;
        };
        if st
            .get(Table::Embeddings, &record::pair_key(id, n.0))?
            .is_none()
        {
            out.push((n, summary.text));
        }
    }
    Ok(out)
}
