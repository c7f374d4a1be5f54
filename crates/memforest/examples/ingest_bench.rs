//! Ingest benchmark over real conversations (issue 6).
//!
//! `cargo run --release -p memforest-engine --example ingest_bench -- <data dir> [delay ms]`
//!
//! For LongMemEval oracle and LoCoMo (one tenant per history / conversation) it ingests
//! every session with the default extractor, then `flush_summaries()`, twice: with the
//! default extractive summarizer, and with that summarizer behind a fixed per-call delay
//! (default 50 ms) on a pool of 16. It prints turns/s, facts/s, summary calls per fact,
//! end-to-end time, and for the delayed run the wall time of the whole run and of the
//! final flush against the lower bound max(calls x delay / 16, tree height x delay).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs,
    reason = "bench binary"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use memforest::memory::dataset::{self, Conversation};
use memforest::memory::model::ModelError;
use memforest::memory::record::{self, TreeRecord};
use memforest::memory::stats::CallKind;
use memforest::memory::summarize::{
    ExtractiveSummarizer, Summarizer, SummaryOutput, SummaryRequest,
};
use memforest::{schema::Table, EngineNodeStore, Memory, Options};
use memforest_engine::{Durability, TenantId};
use memforest_tree::{MemTree, TreeId};

/// A dataset loader.
type Loader = fn(&Path) -> Result<Vec<Conversation>, dataset::DatasetError>;

#[derive(Debug)]
struct Delayed(Duration);

impl Summarizer for Delayed {
    fn name(&self) -> &str {
        "delayed-extractive"
    }
    fn summarize(&self, r: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        std::thread::sleep(self.0);
        ExtractiveSummarizer::default().summarize(r)
    }
}

fn max_height(db: &Memory, tenants: &[TenantId]) -> u8 {
    let mut h = 0;
    for t in tenants {
        let store = EngineNodeStore::new(db.db(), t.clone(), Durability::Buffered);
        for row in db
            .db()
            .scan_prefix(t, Table::Trees.into(), &[], None)
            .unwrap()
        {
            let (k, v) = row.unwrap();
            let _: TreeRecord = record::decode(&v, "tree").unwrap();
            let tree = MemTree::open(&store, TreeId(record::be_u64(&k).unwrap())).unwrap();
            h = h.max(tree.height());
        }
    }
    h
}

fn run(name: &str, convs: &[Conversation], delay: Option<Duration>) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    if let Some(d) = delay {
        options.memory.summarizer = Arc::new(Delayed(d));
    }
    let pool = options.memory.summary_pool;
    let db = Memory::open_with(dir.path(), options).unwrap();
    let start = Instant::now();
    let (mut turns, mut facts, mut merged) = (0u64, 0u64, 0u64);
    let mut tenants = Vec::new();
    for c in convs {
        let tenant = TenantId::new(&c.name).unwrap();
        for s in &c.sessions {
            let r = db.ingest_session(&tenant, s).unwrap();
            turns += r.turns;
            facts += r.facts_added;
            merged += r.facts_merged;
        }
        tenants.push(tenant);
    }
    let ingest = start.elapsed();
    let flush_start = Instant::now();
    db.flush_summaries().unwrap();
    let flush = flush_start.elapsed();
    let total = start.elapsed();
    let stats = db.memory_stats();
    let calls: u64 = stats
        .usage
        .values()
        .filter_map(|k| k.get(&CallKind::Summary))
        .map(|u| u.calls)
        .sum();
    let height = max_height(&db, &tenants);
    println!(
        "{name} [{}]: {turns} turns, {facts} facts (+{merged} merged), ingest {:.2} s ({:.0} turns/s, {:.0} facts/s), flush {:.2} s, end-to-end {:.2} s; {calls} summary calls ({:.3}/fact, {} reused), max tree height {height}",
        delay.map_or("extractive".to_owned(), |d| format!("extractive + {} ms/call, pool {pool}", d.as_millis())),
        ingest.as_secs_f64(),
        turns as f64 / ingest.as_secs_f64(),
        facts as f64 / ingest.as_secs_f64(),
        flush.as_secs_f64(),
        total.as_secs_f64(),
        calls as f64 / facts.max(1) as f64,
        stats.summaries_reused,
    );
    if let Some(d) = delay {
        let bound = (d * u32::try_from(calls).unwrap() / u32::try_from(pool).unwrap())
            .max(d * u32::from(height));
        println!(
            "  lower bound max(calls x {} ms / {pool}, height x {} ms) = {:.2} s; end-to-end / bound = {:.2}",
            d.as_millis(),
            d.as_millis(),
            bound.as_secs_f64(),
            total.as_secs_f64() / bound.as_secs_f64(),
        );
    }
    db.close().unwrap();
}

fn main() {
    let mut args = std::env::args().skip(1);
    let data = PathBuf::from(args.next().unwrap_or_else(|| "../shared/data".into()));
    let delay = Duration::from_millis(args.next().map_or(50, |a| a.parse().unwrap()));
    let sets: [(&str, Loader, &str); 2] = [
        (
            "longmemeval_oracle",
            dataset::longmemeval,
            "longmemeval/longmemeval_oracle.json",
        ),
        ("locomo10", dataset::locomo, "locomo/locomo10.json"),
    ];
    for (name, load, file) in sets {
        let convs = load(&data.join(file)).unwrap();
        run(name, &convs, None);
        run(name, &convs, Some(delay));
    }
}
