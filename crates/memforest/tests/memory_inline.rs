//! Extractors that run inline (`Extractor::runs_inline`): their calls are made on the
//! ingesting thread instead of the extraction pool (unless an embedder is set), and store
//! exactly the memory the pooled calls store.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

#[path = "memory_common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::*;
use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::extract::{Extraction, ExtractionInput, Extractor, HeuristicExtractor};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::summarize::{
    ExtractiveSummarizer, Summarizer, SummaryOutput, SummaryRequest,
};
use memforest::{EngineNodeStore, Memory, Options};
use memforest_benches::synth::SynthExtractor;
use memforest_engine::Durability;
use memforest_tree::{MemTree, NodeId, TreeId};

/// Names of the threads a model was called on.
#[derive(Debug, Default)]
struct Threads(Mutex<BTreeSet<String>>);

impl Threads {
    fn note(&self) {
        let name = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_owned();
        self.0.lock().unwrap().insert(name);
    }

    fn names(&self) -> BTreeSet<String> {
        self.0.lock().unwrap().clone()
    }
}

/// The default extractor, inline or not as told, noting where it runs.
#[derive(Debug)]
struct Extract {
    inline: bool,
    threads: Threads,
}

impl Extractor for Extract {
    fn name(&self) -> &str {
        "heuristic"
    }
    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        self.threads.note();
        HeuristicExtractor.extract(input)
    }
    fn runs_inline(&self) -> bool {
        self.inline
    }
}

/// The extractive summarizer, noting where it runs.
#[derive(Debug)]
struct Summarize {
    threads: Threads,
}

impl Summarizer for Summarize {
    fn name(&self) -> &str {
        "extractive"
    }
    fn summarize(&self, r: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        self.threads.note();
        ExtractiveSummarizer::default().summarize(r)
    }
}

/// Every node's summary text, by tree and node.
fn summaries(db: &Memory) -> Vec<(u64, u64, String)> {
    let store = EngineNodeStore::new(db.db(), tenant(), Durability::Buffered);
    let mut out = Vec::new();
    for (id, _) in trees(db) {
        let tree = MemTree::open(&store, TreeId(id)).unwrap();
        let mut stack: Vec<NodeId> = tree.meta().root.map(|r| r.id).into_iter().collect();
        while let Some(n) = stack.pop() {
            let node = tree.node(&store, n).unwrap();
            stack.extend(node.children().iter().map(|c| c.id));
            out.push((id, n.0, node.summary.map(|s| s.text).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

/// What one ingest stored and where its models ran.
struct Outcome {
    facts: Vec<String>,
    summaries: Vec<(u64, u64, String)>,
    extract_threads: BTreeSet<String>,
    summary_threads: BTreeSet<String>,
}

/// A local embedder: one short vector per text from its length and first byte.
#[derive(Debug)]
struct Embed;

impl Embedder for Embed {
    fn name(&self) -> &str {
        "local"
    }
    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        let vectors = texts
            .iter()
            .map(|t| {
                vec![
                    t.len() as f32,
                    f32::from(t.bytes().next().unwrap_or(0)),
                    1.0,
                ]
            })
            .collect();
        Ok(Embeddings {
            vectors,
            usage: Usage::default(),
        })
    }
}

/// Ingests the same sessions with the extractor inline or pooled (and with an embedder
/// when `embed`).
fn ingest(inline: bool, embed: bool) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let extract = Arc::new(Extract {
        inline,
        threads: Threads::default(),
    });
    let summarize = Arc::new(Summarize {
        threads: Threads::default(),
    });
    let mut opts: Options = options(Some(Arc::clone(&summarize) as Arc<dyn Summarizer>));
    opts.memory.extractor = Arc::clone(&extract) as Arc<dyn Extractor>;
    if embed {
        opts.memory.embedder = Some(Arc::new(Embed));
    }
    let db = Memory::open_with(dir.path(), opts).unwrap();
    for i in 0..40 {
        let a = format!("I ran {i} km with Jordan around the Central Park loop today.");
        let b = format!("My sister Maya moved to Lisbon in year {}.", 2000 + i);
        let c = "We booked a table at the Italian place on Fifth for Friday.";
        let texts: [&str; 6] = [&a, "Nice pace.", &b, "Lovely city.", c, "Enjoy it."];
        db.ingest_session(&tenant(), &session(&format!("s{i}"), i, &texts))
            .unwrap();
    }
    db.flush_summaries().unwrap();
    assert!(assert_summaries_current(&db) > 0);
    let out = Outcome {
        facts: facts(&db).into_iter().map(|(_, f)| f.text).collect(),
        summaries: summaries(&db),
        extract_threads: extract.threads.names(),
        summary_threads: summarize.threads.names(),
    };
    db.close().unwrap();
    out
}

/// Asserts every extraction ran on an extraction worker and every summary on a summary
/// worker.
fn assert_pooled(out: &Outcome) {
    let all = |names: &BTreeSet<String>, prefix: &str| {
        !names.is_empty() && names.iter().all(|n| n.starts_with(prefix))
    };
    assert!(
        all(&out.extract_threads, "mf-extract-"),
        "{:?}",
        out.extract_threads
    );
    assert!(
        all(&out.summary_threads, "mf-summary-"),
        "{:?}",
        out.summary_threads
    );
}

#[test]
fn an_inline_extractor_runs_on_the_calling_thread_and_stores_the_same_memory() {
    let inline = ingest(true, false);
    let pooled = ingest(false, false);
    assert!(inline.facts.len() >= 40, "{} facts", inline.facts.len());
    assert_eq!(inline.facts, pooled.facts);
    assert!(inline.summaries.iter().any(|s| !s.2.is_empty()));
    assert_eq!(inline.summaries, pooled.summaries);

    let caller = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned();
    assert_eq!(inline.extract_threads, BTreeSet::from([caller]));
    assert!(inline
        .summary_threads
        .iter()
        .all(|n| n.starts_with("mf-summary-")));
    assert_pooled(&pooled);
}

#[test]
fn with_an_embedder_an_inline_extractor_still_goes_to_the_pool() {
    let out = ingest(true, true);
    assert!(!out.facts.is_empty());
    assert_pooled(&out);
}

#[test]
fn only_the_synthetic_extractor_runs_inline() {
    assert!(SynthExtractor.runs_inline());
    // Measured only with it; the default keeps its parallel pool.
    assert!(!HeuristicExtractor.runs_inline());
}
