//! Ingesting a [`Dataset`] into a store: one `Db::ingest_session` per session, a progress
//! bar on stderr, then `flush_summaries`, and a [`IngestSummary`].

use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use memforest_engine::{Db, Table, TenantId};
use serde::Serialize;

use crate::error::{CliError, Result};
use crate::import::Dataset;

/// What an ingest run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IngestSummary {
    /// Tenants ingested.
    pub tenants: u64,
    /// Sessions ingested.
    pub sessions: u64,
    /// Turns newly stored.
    pub turns: u64,
    /// New canonical facts.
    pub facts: u64,
    /// Occurrences merged into existing facts.
    pub facts_merged: u64,
    /// Cells whose extraction failed and stay pending (retried in the background).
    pub cells_pending: u64,
    /// Trees in the ingested tenants after the run.
    pub trees: u64,
    /// Extractor, summarizer and embedder calls that succeeded (LLM requests with the
    /// `openai` choices; local calls with `heuristic` / `extractive`).
    pub llm_calls: u64,
    /// Model calls that failed (and were retried).
    pub llm_errors: u64,
    /// Prompt + completion tokens (reported or estimated).
    pub llm_tokens: u64,
    /// Defects tolerated by the importer.
    pub warnings: u64,
    /// Wall time of ingest, summaries included, seconds.
    pub seconds: f64,
    /// Of which waiting for summaries (`flush_summaries`), seconds.
    pub summary_seconds: f64,
    /// Turns per second over `seconds`.
    pub turns_per_sec: f64,
}

fn tenant_id(name: &str) -> Result<TenantId> {
    TenantId::new(name).map_err(CliError::from)
}

/// Ingests every session of `data` into `db`, then waits for the summaries. `progress`
/// shows a bar on stderr (hidden when stderr is not a terminal).
///
/// # Errors
/// Engine and memory-layer errors; an invalid tenant name.
pub fn run(db: &Db, data: &Dataset, progress: bool) -> Result<IngestSummary> {
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(
        Some(data.turn_count() as u64),
        if progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} ingest [{elapsed_precise}] {bar:40} {pos}/{len} turns ({per_sec}, eta {eta}) {msg}",
    ) {
        bar.set_style(style);
    }
    let mut s = IngestSummary::default();
    for t in &data.tenants {
        let tenant = tenant_id(&t.name)?;
        bar.set_message(t.name.clone());
        for session in &t.sessions {
            let r = db.ingest_session(&tenant, session)?;
            s.sessions += 1;
            s.turns += r.turns;
            s.facts += r.facts_added;
            s.facts_merged += r.facts_merged;
            s.cells_pending += r.cells_pending;
            bar.inc(session.turns.len() as u64);
        }
        s.tenants += 1;
    }
    bar.set_message("summaries");
    let summaries = Instant::now();
    db.flush_summaries()?;
    s.summary_seconds = summaries.elapsed().as_secs_f64();
    bar.finish_and_clear();
    for t in &data.tenants {
        let tenant = tenant_id(&t.name)?;
        for kv in db.scan_prefix(&tenant, Table::Trees, &[], None)? {
            kv?;
            s.trees += 1;
        }
    }
    let stats = db.memory_stats();
    for k in stats.usage.values().flat_map(|m| m.values()) {
        s.llm_calls += k.calls;
        s.llm_errors += k.errors;
        s.llm_tokens += k.prompt_tokens + k.completion_tokens;
    }
    s.warnings = data.warnings.total();
    s.seconds = started.elapsed().as_secs_f64();
    s.turns_per_sec = if s.seconds > 0.0 {
        s.turns as f64 / s.seconds
    } else {
        0.0
    };
    Ok(s)
}
