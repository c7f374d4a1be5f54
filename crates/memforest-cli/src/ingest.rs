//! Ingesting a [`Dataset`] into a store: every tenant name and session checked first
//! (nothing is stored when one is refused), then one `Memory::ingest_session` per session (a
//! session seen again appends its new turns; turns whose ids are stored are skipped and
//! counted), a progress bar on stderr, then `flush_summaries`, and a [`IngestSummary`].

use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use memforest::memory::limits::check_session;
use memforest::memory::MemoryError;
use memforest::schema::Table;
use memforest::Memory;
use memforest_engine::TenantId;
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
    /// Turns newly stored (appended to their sessions).
    pub turns: u64,
    /// Turns skipped because a turn with their id was already stored in the session (or
    /// came earlier in the input) with the same role, speaker and text.
    pub turns_duplicate: u64,
    /// Turns skipped because a turn with their id was already stored with a different
    /// role, speaker or text (the stored one is kept).
    pub turns_conflicting: u64,
    /// The first [`MAX_LISTED_CONFLICTS`] of those, as `tenant/session/turn id`.
    pub conflicts: Vec<String>,
    /// New canonical facts.
    pub facts: u64,
    /// Occurrences merged into existing facts.
    pub facts_merged: u64,
    /// Cells whose extraction failed and stay pending (retried in the background).
    pub cells_pending: u64,
    /// Cells given up as never extractable (their raw turns are stored; no facts).
    pub cells_failed: u64,
    /// Tree nodes given the extractive summary because the summarizer failed on every try
    /// (`MemoryStats::summary_fallbacks`).
    pub summary_fallbacks: u64,
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

/// Most conflicting turn ids an [`IngestSummary`] lists.
pub const MAX_LISTED_CONFLICTS: usize = 20;

fn tenant_id(name: &str) -> Result<TenantId> {
    TenantId::new(name).map_err(CliError::from)
}

/// Checks every tenant name and session of `data` as `Memory::ingest_session` will, before
/// anything is stored (the importers check while reading, naming the line; this covers a
/// [`Dataset`] built any other way).
fn check_all(data: &Dataset) -> Result<Vec<TenantId>> {
    let mut ids = Vec::with_capacity(data.tenants.len());
    for t in &data.tenants {
        ids.push(tenant_id(&t.name)?);
        for session in &t.sessions {
            check_session(session).map_err(MemoryError::from)?;
        }
    }
    Ok(ids)
}

/// Ingests every session of `data` into `db`, then waits for the summaries. `progress`
/// shows a bar on stderr (hidden when stderr is not a terminal). Skipped duplicate or
/// conflicting turns and failed cells are also reported on stderr ([`notices`]).
///
/// # Errors
/// An invalid tenant name or a session over the limits (before anything is stored);
/// engine and memory-layer errors.
pub fn run(db: &Memory, data: &Dataset, progress: bool) -> Result<IngestSummary> {
    let started = Instant::now();
    let tenants = check_all(data)?;
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
    for (t, tenant) in data.tenants.iter().zip(&tenants) {
        bar.set_message(t.name.clone());
        for session in &t.sessions {
            let r = db.ingest_session(tenant, session)?;
            s.sessions += 1;
            s.turns += r.turns;
            s.turns_duplicate += r.turns_duplicate;
            s.turns_conflicting += r.conflicts.len() as u64;
            let room = MAX_LISTED_CONFLICTS.saturating_sub(s.conflicts.len());
            s.conflicts.extend(
                r.conflicts
                    .iter()
                    .take(room)
                    .map(|id| format!("{}/{}/{id}", t.name, session.id)),
            );
            s.facts += r.facts_added;
            s.facts_merged += r.facts_merged;
            s.cells_pending += r.cells_pending;
            s.cells_failed += r.cells_failed;
            bar.inc(session.turns.len() as u64);
        }
        s.tenants += 1;
    }
    bar.set_message("summaries");
    let summaries = Instant::now();
    db.flush_summaries()?;
    s.summary_seconds = summaries.elapsed().as_secs_f64();
    bar.finish_and_clear();
    for tenant in &tenants {
        for kv in db
            .db()
            .scan_prefix(tenant, Table::Trees.into(), &[], None)?
        {
            kv?;
            s.trees += 1;
        }
    }
    let stats = db.memory_stats();
    s.summary_fallbacks = stats.summary_fallbacks;
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
    for line in notices(&s) {
        eprintln!("{line}");
    }
    Ok(s)
}

/// The lines that tell what an ingest skipped or gave up: duplicate turns, conflicting
/// turns (with the first ids), failed cells, summaries the model never gave. Empty when there is nothing to tell.
#[must_use]
pub fn notices(s: &IngestSummary) -> Vec<String> {
    let mut out = Vec::new();
    if s.turns_duplicate > 0 {
        out.push(format!(
            "note: {} turns skipped: their ids were already stored with the same text",
            s.turns_duplicate
        ));
    }
    if s.turns_conflicting > 0 {
        out.push(format!(
            "warning: {} turns skipped: their ids were already stored with different text (kept the stored turn): {}{}",
            s.turns_conflicting,
            s.conflicts.join(", "),
            if s.turns_conflicting > s.conflicts.len() as u64 { ", ..." } else { "" }
        ));
    }
    if s.cells_failed > 0 {
        out.push(format!(
            "warning: {} cells can never be extracted (raw turns kept, no facts)",
            s.cells_failed
        ));
    }
    if s.summary_fallbacks > 0 {
        out.push(format!(
            "warning: {} tree nodes got the extractive summary: the summarizer failed on every try (see the model calls that failed)",
            s.summary_fallbacks
        ));
    }
    out
}

/// The text summary of an ingest run: one line of counts, then [`notices`].
#[must_use]
pub fn render(s: &IngestSummary) -> String {
    let mut out = format!(
        "ingested {} turns ({} sessions, {} tenants; {} duplicate turns skipped, {} conflicting): {} facts, {} trees, {} model calls ({} failed), {:.1} s, {:.0} turns/s, {} warnings\n",
        s.turns,
        s.sessions,
        s.tenants,
        s.turns_duplicate,
        s.turns_conflicting,
        s.facts,
        s.trees,
        s.llm_calls,
        s.llm_errors,
        s.seconds,
        s.turns_per_sec,
        s.warnings
    );
    for line in notices(s) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}
