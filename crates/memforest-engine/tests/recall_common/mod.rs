//! Helpers shared by the read-path and lifecycle tests.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::sync::Arc;

use memforest_engine::memory::extract::{
    ExtractedItem, Extraction, ExtractionInput, Extractor, Origin,
};
use memforest_engine::memory::model::{ModelError, Usage};
use memforest_engine::memory::session::{Role, Session, Turn};
use memforest_engine::memory::summarize::{Summarizer, SummaryOutput, SummaryRequest};
use memforest_engine::memory::MemoryOptions;
use memforest_engine::Options;

pub const DAY: i64 = 86_400_000_000;
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
