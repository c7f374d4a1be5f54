//! `demo`: the README's main job. Ingests the bundled LongMemEval oracle file (MIT, see
//! `data/README.md`) into a fresh store, waits for the summaries, runs every question
//! through MemForest and the flat BM25 baseline, and shows two example queries with their
//! rendered context.

use std::path::{Path, PathBuf};
use std::time::Instant;

use memforest_engine::TenantId;
use serde::Serialize;

use crate::error::{CliError, Result};
use crate::eval::{self, EvalReport};
use crate::import::{self, Dataset, Format};
use crate::ingest::{self, IngestSummary};
use crate::{retrieve, store};

/// `data/longmemeval_oracle.json.zst`, compiled in so the demo needs no download.
pub const BUNDLED: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../data/longmemeval_oracle.json.zst"
));

/// The text output shows at most this many characters of each example's context (the JSON
/// output has all of it).
const SHOWN_CONTEXT_CHARS: usize = 2500;

/// Question types the two examples are taken from (first instance of each).
const EXAMPLE_TYPES: [&str; 2] = ["multi-session", "temporal-reasoning"];

/// One example query.
#[derive(Debug, Clone, Serialize)]
pub struct Example {
    /// Tenant (question instance).
    pub tenant: String,
    /// Question type.
    pub category: String,
    /// The question.
    pub question: String,
    /// The gold answer.
    pub answer: String,
    /// Evidence turns found among the top k / all evidence turns.
    pub evidence_found: (usize, usize),
    /// The rendered context MemForest returned.
    pub context: String,
}

/// What the demo measured.
#[derive(Debug, Clone, Serialize)]
pub struct DemoReport {
    /// The store it wrote.
    pub db: PathBuf,
    /// Question instances used (tenants).
    pub instances: usize,
    /// Ingest throughput.
    pub ingest: IngestSummary,
    /// Retrieval quality against the baseline.
    pub eval: EvalReport,
    /// Two example queries.
    pub examples: Vec<Example>,
    /// Wall time of the whole demo, seconds.
    pub seconds: f64,
}

/// The bundled dataset, the first `limit` instances when given.
///
/// # Errors
/// [`CliError`] when the bundled bytes do not decode (a broken build).
pub fn dataset(limit: Option<usize>) -> Result<Dataset> {
    let path = Path::new("<bundled>/longmemeval_oracle.json.zst");
    let bytes = zstd::stream::decode_all(BUNDLED).map_err(CliError::io("decompress", path))?;
    let mut d = import::parse(Format::Longmemeval, path, &bytes)?;
    if let Some(n) = limit {
        d.truncate(n);
    }
    Ok(d)
}

/// Runs the demo into `db` (must be absent or empty), `k` for turn recall, session recall
/// at 5.
///
/// # Errors
/// [`CliError::Usage`] for a non-empty `db`; ingest, retrieval and engine errors.
pub fn run(db: &Path, limit: Option<usize>, k: usize, progress: bool) -> Result<DemoReport> {
    let started = Instant::now();
    if std::fs::read_dir(db).is_ok_and(|mut d| d.next().is_some()) {
        return Err(CliError::Usage(format!(
            "{} is not empty; the demo writes a fresh store",
            db.display()
        )));
    }
    let data = dataset(limit)?;
    let mut opts = store::ModelArgs {
        pool: 4,
        ..Default::default()
    }
    .options()?;
    opts.memory.summarize_on_shutdown = true;
    let handle = store::open(db, opts)?;
    let summary = ingest::run(&handle, &data, progress)?;
    let report = eval::run(&handle, &data, &eval::Settings::top(k))?;
    let mut examples = Vec::new();
    for ty in EXAMPLE_TYPES {
        let Some(q) = data
            .questions
            .iter()
            .find(|q| q.category == ty && !q.evidence_turns.is_empty())
        else {
            continue;
        };
        let tenant = TenantId::new(&q.tenant)?;
        let r = retrieve::query(&handle, &tenant, &q.text, q.time, retrieve::Ask::top(k))?;
        let top: Vec<&String> = r.turns.iter().take(k).collect();
        let found = q.evidence_turns.iter().filter(|e| top.contains(e)).count();
        examples.push(Example {
            tenant: q.tenant.clone(),
            category: q.category.clone(),
            question: q.text.clone(),
            answer: q.answer.clone(),
            evidence_found: (found, q.evidence_turns.len()),
            context: r.context,
        });
    }
    handle.close()?;
    Ok(DemoReport {
        db: db.to_path_buf(),
        instances: data.tenants.len(),
        ingest: summary,
        eval: report,
        examples,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The report as text.
#[must_use]
pub fn render(r: &DemoReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let i = &r.ingest;
    let _ = writeln!(
        s,
        "MemForest demo: {} LongMemEval oracle instances into {}",
        r.instances,
        r.db.display()
    );
    let _ = writeln!(
        s,
        "ingest: {} turns, {} sessions, {} facts, {} trees in {:.1} s ({:.0} turns/s; summaries {:.1} s; {} extractor, summarizer and embedder calls, all in process)",
        i.turns, i.sessions, i.facts, i.trees, i.seconds, i.turns_per_sec, i.summary_seconds, i.llm_calls
    );
    s.push_str(&eval::render(&r.eval));
    for e in &r.examples {
        let _ = writeln!(
            s,
            "\n[{}] {} ({})\nQ: {}\ngold answer: {}\nevidence turns in top {}: {}/{}\ncontext:\n{}",
            e.category,
            e.tenant,
            r.db.display(),
            e.question,
            e.answer,
            r.eval.k,
            e.evidence_found.0,
            e.evidence_found.1,
            shorten(&e.context)
        );
    }
    let _ = writeln!(s, "\ndemo finished in {:.1} s", r.seconds);
    s
}

/// `text` cut to whole lines within [`SHOWN_CONTEXT_CHARS`] characters (at a space when
/// its first line is longer), with a note of what was left out.
fn shorten(text: &str) -> String {
    let Some((limit, _)) = text.char_indices().nth(SHOWN_CONTEXT_CHARS) else {
        return text.to_owned();
    };
    let head = text.get(..limit).unwrap_or(text);
    let at = head
        .rfind('\n')
        .or_else(|| head.rfind(char::is_whitespace))
        .unwrap_or(limit);
    format!(
        "{}\n[... {} more characters; --json prints all]",
        text.get(..at).unwrap_or(text).trim_end(),
        text.len() - at
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_cuts_at_a_line_or_word_boundary() {
        let line = format!("{}\n", "word ".repeat(100));
        let text = line.repeat(20);
        let short = shorten(&text);
        let (kept, note) = short.rsplit_once('\n').unwrap_or_default();
        assert!(
            kept.lines().all(|l| l.trim_end() == line.trim_end()),
            "{kept}"
        );
        assert!(note.starts_with("[... ") && note.ends_with("more characters; --json prints all]"));
        let one_line = "word ".repeat(1000);
        let short = shorten(&one_line);
        let (kept, _) = short.rsplit_once('\n').unwrap_or_default();
        assert!(
            kept.ends_with("word") && kept.len() <= SHOWN_CONTEXT_CHARS,
            "{kept}"
        );
        assert_eq!(shorten("short"), "short");
    }
}
