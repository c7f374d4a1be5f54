//! Summary embeddings through the OpenAI-compatible embedder, against a real HTTP server on
//! 127.0.0.1 serving `/v1/embeddings`: after `flush_summaries` every internal node has an
//! embedding row of the configured dimension; `drop_derived` removes them and
//! `embed_missing` brings them back (and drops the vectors of a tenant forgotten
//! while it waits on the embedder); nodes freed by a forget lose their rows; an embedder
//! error or a malformed reply leaves the node dirty and retried, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod llm_support;
#[path = "../../memforest/tests/memory_common/mod.rs"]
mod memory_common;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use llm_support::{embeddings_body, Reply, TestServer};
use memforest::lifecycle::Forget;
use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::session::{Role, Session, Turn};
use memforest::memory::stats::CallKind;
use memforest::{schema::Table, EngineNodeStore, Memory};
use memforest_benches::synth::SynthExtractor;
use memforest_engine::Durability;
use memforest_llm::{LlmConfig, OpenAiEmbedder};
use memforest_tree::{MemTree, NodeId, TreeId};
use memory_common::{tenant, trees, T0};

const DIMS: usize = 8;
/// Facts (one per turn, one turn per cell, so one fact-embedding call per cell).
const FACTS: usize = 40;

fn ok_reply(i: usize) -> Reply {
    let v: Vec<f32> = (0..DIMS).map(|d| ((i * 31 + d) % 7) as f32 + 1.0).collect();
    Reply::json(200, &embeddings_body(&[v]))
}

fn open(dir: &std::path::Path, server: &TestServer) -> Memory {
    let config = LlmConfig::new(server.base_url(), "embed-test").with_retries(
        0,
        Duration::from_millis(1),
        Duration::from_millis(1),
    );
    // One input per request, so every scripted reply carries one vector.
    let embedder = OpenAiEmbedder::new(config)
        .unwrap()
        .with_dimensions(DIMS)
        .with_batch_size(1);
    let mut o = memory_common::options(None);
    o.memory.extractor = Arc::new(SynthExtractor);
    o.memory.embedder = Some(Arc::new(embedder));
    o.memory.cells.max_turns = 1;
    o.memory.retry_backoff = Duration::from_millis(5);
    o.memory.max_backoff = Duration::from_millis(20);
    Memory::open_with(dir, o).unwrap()
}

/// One session of `FACTS` user facts.
fn ingest(db: &Memory) {
    let turns = (0..FACTS)
        .map(|i| Turn {
            time: Some(T0 + i as i64 * 60_000_000),
            ..Turn::new(
                Role::User,
                "Ann",
                format!("fact number q{i}x | | topic{}", i % 3),
            )
        })
        .collect();
    let session = Session {
        id: "s1".into(),
        start: T0,
        turns,
    };
    let r = db.ingest_session(&tenant(), &session).unwrap();
    assert_eq!(r.facts_added, FACTS as u64);
}

/// A store at `dir` with [`ingest`]'s session in it and every summary made (and embedded).
fn summarized(dir: &std::path::Path, server: &TestServer) -> Memory {
    let db = open(dir, server);
    ingest(&db);
    db.flush_summaries().unwrap();
    db
}

/// Every internal node (tree, node) of every tree.
fn internal_nodes(db: &Memory) -> BTreeSet<(u64, u64)> {
    let store = EngineNodeStore::new(db.db(), tenant(), Durability::Buffered);
    let mut out = BTreeSet::new();
    for (id, _) in trees(db) {
        let tree = MemTree::open(&store, TreeId(id)).unwrap();
        let mut stack: Vec<NodeId> = tree.meta().root.iter().map(|r| r.id).collect();
        while let Some(n) = stack.pop() {
            let node = tree.node(&store, n).unwrap();
            assert!(
                node.summary.is_some(),
                "node {n:?} of tree {id} has no summary"
            );
            stack.extend(node.children().iter().map(|c| c.id));
            out.insert((id, n.0));
        }
    }
    out
}

/// The embedding rows: (tree, node) -> dimension.
/// The rows of `table` of the test tenant.
fn rows(db: &Memory, table: Table) -> usize {
    db.db()
        .scan(
            &tenant(),
            table.into(),
            Bound::Unbounded,
            Bound::Unbounded,
            None,
        )
        .unwrap()
        .count()
}

fn embeddings(db: &Memory) -> Vec<((u64, u64), usize)> {
    db.db()
        .scan(
            &tenant(),
            Table::Embeddings.into(),
            Bound::Unbounded,
            Bound::Unbounded,
            None,
        )
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            assert_eq!(v.len() % 4, 0);
            (
                (
                    u64::from_be_bytes(k[..8].try_into().unwrap()),
                    u64::from_be_bytes(k[8..16].try_into().unwrap()),
                ),
                v.len() / 4,
            )
        })
        .collect()
}

fn assert_every_node_embedded(db: &Memory) -> usize {
    let nodes = internal_nodes(db);
    let rows = embeddings(db);
    let keys: BTreeSet<(u64, u64)> = rows.iter().map(|r| r.0).collect();
    assert_eq!(keys, nodes, "embedding rows must match the internal nodes");
    assert!(rows.iter().all(|r| r.1 == DIMS));
    nodes.len()
}

#[test]
fn every_node_summary_gets_an_embedding_and_a_rebuild_restores_them() {
    let server = TestServer::start((0..400).map(ok_reply).collect());
    let dir = tempfile::tempdir().unwrap();
    let db = summarized(dir.path(), &server);
    // entity:user (40 leaves, k = 16: 3 level-1 nodes and a root), the session tree, and
    // the scenes: several internal nodes, each with a vector.
    let nodes = assert_every_node_embedded(&db);
    assert!(nodes >= 6, "only {nodes} internal nodes");

    db.drop_derived(Durability::Buffered).unwrap();
    assert!(embeddings(&db).is_empty());
    let written = db.embed_missing().unwrap();
    let facts = rows(&db, Table::Facts);
    assert!(facts > 0);
    assert_eq!(written, (nodes + facts) as u64);
    assert_eq!(rows(&db, Table::FactVectors), facts);
    assert_every_node_embedded(&db);
    // Nothing missing any more: a second call embeds nothing.
    assert_eq!(db.embed_missing().unwrap(), 0);
}

#[test]
fn embedder_errors_leave_nodes_dirty_and_are_retried() {
    // The fact embeddings of the ingest come first (one call per cell, all before the
    // commit that dirties the trees); the first summary embeddings then meet a 500, a
    // truncated body and a reply with no vector.
    let mut script: Vec<Reply> = (0..FACTS).map(ok_reply).collect();
    script.push(Reply::json(500, &serde_json::json!({"error": "boom"})));
    script.push(Reply::body(
        200,
        "{\"object\": \"list\", \"data\": [{\"embedd",
    ));
    script.push(Reply::json(200, &embeddings_body(&[])));
    script.extend((0..400).map(ok_reply));
    let server = TestServer::start(script);
    let dir = tempfile::tempdir().unwrap();
    let db = summarized(dir.path(), &server);
    assert_every_node_embedded(&db);
    let stats = db.memory_stats();
    let usage = &stats.usage["t"][&CallKind::Embedding];
    assert_eq!(usage.errors, 3, "{usage:?}");
    assert!(stats.dirty_by_level.iter().all(|d| *d == 0));
}

/// Blocks every call while shut.
#[derive(Debug, Default)]
struct GatedEmbedder {
    shut: Mutex<bool>,
    cv: Condvar,
    started: AtomicUsize,
}

impl GatedEmbedder {
    fn set_shut(&self, shut: bool) {
        *self.shut.lock().unwrap() = shut;
        self.cv.notify_all();
    }
}

impl Embedder for GatedEmbedder {
    fn name(&self) -> &str {
        "gated"
    }
    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let mut shut = self.shut.lock().unwrap();
        while *shut {
            shut = self.cv.wait(shut).unwrap();
        }
        Ok(Embeddings {
            vectors: texts.iter().map(|_| vec![1.0; DIMS]).collect(),
            usage: Usage::default(),
        })
    }
}

/// A tenant forgotten while `embed_missing` waits on the embedder: the vectors
/// of its summaries come back after the forget and must not be stored (no later forget
/// would remove them).
#[test]
fn embeddings_of_a_tenant_forgotten_during_the_rebuild_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(GatedEmbedder::default());
    let mut o = memory_common::options(None);
    o.memory.extractor = Arc::new(SynthExtractor);
    o.memory.embedder = Some(Arc::clone(&gate) as Arc<dyn Embedder>);
    let db = Memory::open_with(dir.path(), o).unwrap();
    ingest(&db);
    db.flush_summaries().unwrap();
    assert!(!embeddings(&db).is_empty());
    db.drop_derived(Durability::Buffered).unwrap();
    assert!(embeddings(&db).is_empty());

    gate.set_shut(true);
    let before = gate.started.load(Ordering::SeqCst);
    std::thread::scope(|s| {
        let rebuild = s.spawn(|| db.embed_missing());
        let t0 = Instant::now();
        while gate.started.load(Ordering::SeqCst) == before {
            assert!(t0.elapsed() < Duration::from_secs(20), "no embedding call");
            std::thread::sleep(Duration::from_millis(5));
        }
        db.forget(&tenant(), &Forget::Tenant).unwrap();
        gate.set_shut(false);
        assert_eq!(rebuild.join().unwrap().unwrap(), 0);
    });
    assert_eq!(embeddings(&db), Vec::new());
    db.close().unwrap();
}

/// Forgetting most of a session's turns rebalances its trees and frees internal nodes:
/// their summary embeddings (vectors of text that may now be forgotten) go with their
/// pages, so every row still belongs to a live internal node.
#[test]
fn freed_nodes_lose_their_embeddings() {
    let server = TestServer::start((0..400).map(ok_reply).collect());
    let dir = tempfile::tempdir().unwrap();
    let db = summarized(dir.path(), &server);
    let before = assert_every_node_embedded(&db);
    for index in 0..30 {
        let turn = Forget::Turn {
            session: "s1".into(),
            index,
        };
        db.forget(&tenant(), &turn).unwrap();
    }
    db.flush_summaries().unwrap();
    let after = assert_every_node_embedded(&db);
    assert!(after < before, "{after} internal nodes of {before} left");
}
