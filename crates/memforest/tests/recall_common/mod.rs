//! Helpers shared by the read-path and lifecycle tests.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::sync::Arc;

use memforest::memory::extract::{ExtractedItem, Extraction, ExtractionInput, Extractor, Origin};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::session::{Role, Session, Turn};
use memforest::memory::summarize::{Summarizer, SummaryOutput, SummaryRequest};
use memforest::memory::MemoryOptions;
use memforest::recall::{Query, QueryResult};
use memforest::schema::Table;
use memforest::{Memory, Options};
use memforest_engine::TenantId;
use memforest_tree::TimeRange;

pub const DAY: i64 = 86_400_000_000;
/// A time filter that every fact passes: it makes a lexical query browse its trees.
pub const ALL_TIME: TimeRange = TimeRange {
    start: i64::MIN,
    end: i64::MAX,
};
/// 2023-03-01 00:00 UTC in microseconds.
pub const T0: i64 = 1_677_628_800_000_000;

/// One fact per turn: the turn text up to `||` is the fact; after it, `entity|attribute`
/// (optional) names the knowledge-update slot, and after a second `||`, space-separated
/// topics (scene routing). Deterministic.
#[derive(Debug)]
pub struct TurnExtractor;

impl Extractor for TurnExtractor {
    fn name(&self) -> &str {
        "turn"
    }

    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        let items = input
            .turns
            .iter()
            .map(|t| {
                let (text, rest) = t.text.split_once("||").unwrap_or((&t.text, ""));
                let (tag, topics) = rest.split_once("||").unwrap_or((rest, ""));
                let (entity, attr) = tag.split_once('|').unwrap_or(("", ""));
                ExtractedItem {
                    fact_text: text.trim().to_owned(),
                    origin: Some(if t.role == Role::User {
                        Origin::User
                    } else {
                        Origin::Assistant
                    }),
                    entities: if entity.is_empty() {
                        Vec::new()
                    } else {
                        vec![entity.to_owned()]
                    },
                    attribute_keys: if attr.is_empty() {
                        Vec::new()
                    } else {
                        vec![attr.to_owned()]
                    },
                    topics: topics.split_whitespace().map(str::to_owned).collect(),
                    time_start: Some(t.time),
                    time_end: Some(t.time),
                    source_turns: vec![t.turn_id.clone()],
                    ..ExtractedItem::default()
                }
            })
            .collect();
        Ok(Extraction {
            items,
            usage: Usage::default(),
        })
    }
}

/// A summarizer that always fails: nodes stay dirty, no summary is ever written.
#[derive(Debug)]
pub struct NeverSummarizer;

impl Summarizer for NeverSummarizer {
    fn name(&self) -> &str {
        "never"
    }

    fn summarize(&self, _: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        Err(ModelError::Timeout(std::time::Duration::from_secs(1)))
    }
}

/// Options with small pools; `turn` selects [`TurnExtractor`] (else the heuristic one).
pub fn options(turn: bool, summarizer: Option<Arc<dyn Summarizer>>) -> Options {
    let mut memory = MemoryOptions {
        extract_pool: 2,
        summary_pool: 2,
        ..MemoryOptions::default()
    };
    if turn {
        memory.extractor = Arc::new(TurnExtractor);
    }
    if let Some(s) = summarizer {
        memory.summarizer = s;
    }
    Options {
        memory,
        ..Options::default()
    }
}

/// A session of user turns one minute apart, starting `day` days after [`T0`].
pub fn session(id: &str, day: i64, texts: &[&str]) -> Session {
    Session {
        id: id.into(),
        start: T0 + day * DAY,
        turns: texts
            .iter()
            .enumerate()
            .map(|(i, t)| Turn {
                time: Some(T0 + day * DAY + i as i64 * 60_000_000),
                ..Turn::new(Role::User, "Alice", *t)
            })
            .collect(),
    }
}

/// The vocabulary of [`text`].
pub const WORDS: [&str; 16] = [
    "garden", "piano", "soda", "habit", "hike", "river", "painting", "dog", "studio", "race",
    "candy", "friend", "moved", "signed", "bakery", "concert",
];

/// Turn `i` of session `s`: three or four sentences over [`WORDS`], so cells hold
/// several turns and turns several facts that share words with other sessions.
pub fn text(s: usize, i: usize) -> String {
    let w = |j: usize| WORDS[(s * 7 + i * 3 + j * 5) % WORDS.len()];
    let mut t = format!("I like the {} and the {}. ", w(0), w(1));
    t += &format!("My {} was near the {} today. ", w(2), w(3));
    if (s + i).is_multiple_of(2) {
        t += &format!("Yesterday we talked about {} again.", w(4));
    }
    t
}

/// A store of `sessions` sessions of `turns` turns of [`text`], summaries flushed.
pub fn store(sessions: usize, turns: usize) -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let t = TenantId::new("t").unwrap();
    ingest(&db, &t, 0..sessions, turns);
    (dir, db, t)
}

/// Ingests sessions `sessions` of `turns` turns of [`text`] (session `s` on day `s`) and
/// flushes the summaries.
pub fn ingest(db: &Memory, t: &TenantId, sessions: std::ops::Range<usize>, turns: usize) {
    for s in sessions {
        let texts: Vec<String> = (0..turns).map(|i| text(s, i)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let day = i64::try_from(s).unwrap();
        db.ingest_session(t, &session(&format!("s{s}"), day, &refs))
            .unwrap();
    }
    db.flush_summaries().unwrap();
}

/// Two-word questions over [`WORDS`], one temporal.
pub fn questions() -> Vec<String> {
    let mut q: Vec<String> = (0..WORDS.len())
        .map(|i| {
            let a = WORDS[i];
            let b = WORDS[(i * 5 + 3) % WORDS.len()];
            format!("What about the {a} and the {b}?")
        })
        .collect();
    q.push("When did we talk about the river?".into());
    q.push("What habit with soda and candy?".into());
    q
}

/// `(id, score bits)` of every returned fact, in order.
pub fn ranking(r: &QueryResult) -> Vec<(u64, u32)> {
    r.facts.iter().map(|f| (f.id, f.score.to_bits())).collect()
}

/// The ranking of `q` over the latest state (through the read path's caches).
pub fn latest(db: &Memory, t: &TenantId, q: &str) -> Vec<(u64, u32)> {
    ranking(&db.query(t, &Query::new(q)).unwrap())
}

/// The ranking of `q` at a snapshot of the latest state, which bypasses every cache.
pub fn uncached(db: &Memory, t: &TenantId, q: &str) -> Vec<(u64, u32)> {
    let snap = db.snapshot();
    let query = Query {
        snapshot: Some(snap.seqno()),
        ..Query::new(q)
    };
    ranking(&db.query(t, &query).unwrap())
}

/// Every key of `t`'s `table` starting with `prefix`, with its value, in key order.
pub fn rows(db: &Memory, t: &TenantId, table: Table, prefix: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.db()
        .scan_prefix(t, table.into(), prefix, None)
        .unwrap()
        .map(|kv| {
            let (k, v) = kv.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}
