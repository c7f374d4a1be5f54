//! A chat model whose every summary is unusable (a header only, which the summarizer strips
//! to nothing), behind a real HTTP server on 127.0.0.1: `flush_summaries` still returns,
//! each node that needed the model gets the extractive summary after
//! `MemoryOptions::summary_attempts` failed calls, and the fallbacks are counted.
#![allow(clippy::unwrap_used, reason = "test code")]

mod llm_support;
#[path = "../../memforest/tests/memory_common/mod.rs"]
mod memory_common;

use std::sync::Arc;
use std::time::Duration;

use llm_support::{chat_body, Reply, TestServer};
use memforest::memory::stats::CallKind;
use memforest::Memory;
use memforest_llm::{LlmConfig, OpenAiSummarizer};
use memory_common::{assert_summaries_current, root_summaries, session, tenant};

#[test]
fn a_model_that_only_ever_replies_with_a_header_cannot_keep_summaries_waiting() {
    header_only_replies(1);
}

#[test]
fn batched_summaries_that_are_never_usable_cannot_keep_summaries_waiting() {
    header_only_replies(8);
}

/// Every summary call answered with a header only, `summary_batch` nodes per call.
fn header_only_replies(summary_batch: usize) {
    let header_only = chat_body("[Aug 2029 - Sep 2029 | i'll]", None);
    let server = TestServer::start(vec![Reply::json(200, &header_only); 400]);
    let config = LlmConfig::new(server.base_url(), "header-only").with_retries(
        0,
        Duration::from_millis(1),
        Duration::from_millis(1),
    );
    let mut o = memory_common::options(Some(Arc::new(OpenAiSummarizer::new(config).unwrap())));
    o.memory.retry_backoff = Duration::from_millis(5);
    o.memory.max_backoff = Duration::from_millis(20);
    o.memory.summary_batch = summary_batch;
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), o).unwrap();
    for i in 0..4 {
        let a = format!("I swam {i} laps at the Riverside pool with Maya.");
        let b = format!("My sister Maya ran {i} miles along the river.");
        db.ingest_session(&tenant(), &session(&format!("s{i}"), i, &[&a, &b]))
            .unwrap();
    }
    db.flush_summaries().unwrap();

    assert!(assert_summaries_current(&db) > 0);
    let stats = db.memory_stats();
    let usage = stats.usage["t"][&CallKind::Summary];
    assert_eq!(usage.calls, 0, "no reply was usable");
    assert!(stats.summary_fallbacks > 0);
    assert_eq!(usage.errors, 4 * stats.summary_fallbacks);
    // Each request failed every node it carried.
    let requests = server.requests().len() as u64;
    if summary_batch == 1 {
        assert_eq!(requests, usage.errors);
    } else {
        assert!(
            requests > 0 && requests < usage.errors,
            "{requests} {usage:?}"
        );
    }
    let texts = root_summaries(&db);
    assert!(
        texts.iter().any(|t| t.contains("Riverside pool")),
        "{texts:?}"
    );
    db.close().unwrap();
}
