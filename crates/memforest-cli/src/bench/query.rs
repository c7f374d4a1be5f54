//! `memforest bench query`: `Memory::query` latency (k = 10, beam 10), lexical and hybrid
//! (the default, with the bundled static embedder), at several facts-per-tenant sizes
//! against a flat in-memory BM25 ([`Bm25Index`]) over the same facts, in the same run. One
//! tenant, synthetic facts of [`crate::bench::synth`] (extraction excluded), the default
//! extractive summarizer; all summaries are made before timing. `--warmup` runs untimed
//! queries before each timed pass: the timed ones themselves (the caches then hold what
//! they touch, as far as their budgets allow) or as many others of the same workload (the
//! timed queries then find in the caches only what they share with others).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use memforest::recall::{Bm25Index, Mode, Query};
use memforest::{Memory, Options};
use memforest_engine::TenantId;
use memforest_tree::TimeRange;
use serde::Serialize;

use crate::bench::measure::{nanos, Percentiles};
use crate::bench::residency::ResidentArg;
use crate::bench::synth::{Corpus, Shape, SynthExtractor};

const DAY_MICROS: i64 = 86_400_000_000;

/// Settings of `bench query`.
#[derive(Debug, Clone, clap::Args)]
pub struct QueryArgs {
    /// Facts in the tenant, one store per size, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "10000")]
    pub sizes: Vec<u64>,
    /// Timed queries per size and engine.
    #[arg(long, default_value_t = 1000)]
    pub queries: usize,
    /// Facts per session.
    #[arg(long, default_value_t = 100)]
    pub per_session: usize,
    /// Directory for the stores (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
    /// Untimed queries before each timed pass.
    #[arg(long, value_enum, default_value_t)]
    pub warmup: Warmup,
    /// Each query also names the month in the middle of the corpus's time span ("... in
    /// May 2024"), so `Memory::query` adds that month's candidates to the ranking
    /// (`recall::intent`'s named time).
    #[arg(long)]
    pub named_time: bool,
    /// Each query is restricted to one session or one session's day (the sessions are
    /// taken in turn), as an agent searching its current conversation or yesterday does.
    /// The flat BM25 still searches every fact.
    #[arg(long, value_enum)]
    pub within: Option<Within>,
    /// `--resident-mib`.
    #[command(flatten)]
    pub resident: ResidentArg,
}

/// What runs, untimed, before each engine's and mode's timed queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Warmup {
    /// Nothing: the caches hold what building the store and the earlier passes left.
    #[default]
    None,
    /// The timed queries themselves, once.
    Seen,
    /// As many other queries of the same workload, never timed.
    Unseen,
}

/// What `--within` restricts each query to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Within {
    /// One session (`Query::sessions`).
    Session,
    /// One session's day: its start and the 24 hours after (`Query::time_range`).
    Day,
}

/// One size's latencies.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Facts in the tenant.
    pub facts: u64,
    /// Seconds to ingest and summarize them.
    pub build_seconds: f64,
    /// MemForest `Memory::query` latency, lexical.
    pub memforest: Percentiles,
    /// MemForest `Memory::query` latency, hybrid (the default mode).
    pub memforest_hybrid: Percentiles,
    /// The same without the trees (`Query::trees` false: no forest recall or browse).
    pub memforest_hybrid_flat: Percentiles,
    /// Flat BM25 latency.
    pub flat_bm25: Percentiles,
    /// memforest lexical p50 / flat p50 (> 1: memforest is slower).
    pub p50_ratio: f64,
    /// memforest lexical p99 / flat p99.
    pub p99_ratio: f64,
}

/// The `bench query` report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Timed queries per row and engine.
    pub queries: usize,
    /// What ran before each timed pass.
    pub warmup: Warmup,
    /// Whether each query named a month (`--named-time`).
    pub named_time: bool,
    /// What each query was restricted to (`--within`).
    pub within: Option<Within>,
    /// One row per size.
    pub rows: Vec<Row>,
}

/// A timed query: its text and the session it is restricted to (`--within`).
type Timed = (String, Option<Session>);

/// A session of the corpus: its id and start time.
type Session = (String, i64);

fn time(
    queries: &[Timed],
    mut f: impl FnMut(&Timed) -> anyhow::Result<usize>,
) -> anyhow::Result<Percentiles> {
    let mut lat = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        std::hint::black_box(f(q)?);
        lat.push(nanos(t.elapsed()));
    }
    Ok(Percentiles::of(&mut lat))
}

fn size(args: &QueryArgs, n: u64) -> anyhow::Result<Row> {
    let dir = super::measure::scratch_dir(args.dir.as_deref())?;
    let mut options = Options::default();
    options.memory.extractor = Arc::new(SynthExtractor);
    args.resident.apply(&mut options.engine);
    let db = Memory::open_with(dir.path(), options)?;
    let tenant = TenantId::new("bench")?;
    let mut corpus = Corpus::new(
        Shape {
            tenants: 1,
            per_session: args.per_session,
            late: 0.05,
            seed: n,
        },
        usize::try_from(n)?,
    );
    let started = Instant::now();
    let mut docs = Vec::new();
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    let mut sessions = Vec::new();
    for g in corpus.by_ref() {
        first = first.min(g.session.start);
        last = last.max(g.session.start);
        sessions.push((g.session.id.clone(), g.session.start));
        db.ingest_session(&tenant, &g.session)?;
        docs.extend(g.facts);
    }
    db.flush_summaries()?;
    db.db().flush()?;
    let build_seconds = started.elapsed().as_secs_f64();
    eprintln!("bench query: {n} facts built in {build_seconds:.1} s");
    let flat = Bm25Index::build((0u64..).zip(docs.iter().map(String::as_str)));
    let month = chrono::DateTime::from_timestamp_micros(first / 2 + last / 2)
        .filter(|_| args.named_time)
        .map(|d| d.format(" in %B %Y").to_string())
        .unwrap_or_default();
    let mut made = 0usize;
    let mut query = || {
        let scope = sessions
            .get(made % sessions.len().max(1))
            .filter(|_| args.within.is_some())
            .cloned();
        made += 1;
        (format!("{}{month}", corpus.query()), scope)
    };
    let queries: Vec<Timed> = (0..args.queries.max(1)).map(|_| query()).collect();
    let warm: Vec<Timed> = match args.warmup {
        Warmup::None => Vec::new(),
        Warmup::Seen => queries.clone(),
        Warmup::Unseen => (0..queries.len()).map(|_| query()).collect(),
    };
    let timed = |mode, trees| {
        let run = |(q, scope): &Timed| -> anyhow::Result<usize> {
            let query = Query {
                mode,
                trees,
                sessions: scope
                    .as_ref()
                    .filter(|_| args.within == Some(Within::Session))
                    .map(|(id, _)| BTreeSet::from([id.clone()])),
                time_range: scope
                    .as_ref()
                    .filter(|_| args.within == Some(Within::Day))
                    .map(|&(_, start)| TimeRange {
                        start,
                        end: start + DAY_MICROS,
                    }),
                ..Query::new(q.as_str())
            };
            Ok(db.query(&tenant, &query)?.facts.len())
        };
        for q in &warm {
            run(q)?;
        }
        time(&queries, run)
    };
    let memforest = timed(Mode::Lexical, true)?;
    let memforest_hybrid = timed(Mode::Hybrid, true)?;
    let memforest_hybrid_flat = timed(Mode::Hybrid, false)?;
    for (q, _) in &warm {
        std::hint::black_box(flat.search(q, 10));
    }
    let flat_bm25 = time(&queries, |(q, _)| Ok(flat.search(q, 10).len()))?;
    db.close()?;
    Ok(Row {
        facts: n,
        build_seconds,
        p50_ratio: memforest.p50_us / flat_bm25.p50_us.max(1e-9),
        p99_ratio: memforest.p99_us / flat_bm25.p99_us.max(1e-9),
        memforest,
        memforest_hybrid,
        memforest_hybrid_flat,
        flat_bm25,
    })
}

/// Runs `bench query`.
///
/// # Errors
/// Store and query errors.
pub fn run(args: &QueryArgs) -> anyhow::Result<Report> {
    Ok(Report {
        queries: args.queries,
        warmup: args.warmup,
        named_time: args.named_time,
        within: args.within,
        rows: args
            .sizes
            .iter()
            .map(|&n| size(args, n))
            .collect::<anyhow::Result<_>>()?,
    })
}

/// The report as text.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "query: k = 10, beam 10, {} queries per row and mode, warm-up {:?}{}{}\n{:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}\n",
        r.queries,
        r.warmup,
        if r.named_time { ", each naming a month" } else { "" },
        match r.within {
            Some(Within::Session) => ", each in one session (flat BM25: all)",
            Some(Within::Day) => ", each in one session's day (flat BM25: all)",
            None => "",
        },
        "facts",
        "build s",
        "lex p50 us",
        "lex p99 us",
        "hyb p50 us",
        "hyb p99 us",
        "flat p50",
        "flat p99",
        "bm25 p50",
        "bm25 p99",
        "p50 x",
        "p99 x"
    );
    for x in &r.rows {
        s.push_str(&format!(
            "{:>9} {:>9.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8.1} {:>8.1}\n",
            x.facts,
            x.build_seconds,
            x.memforest.p50_us,
            x.memforest.p99_us,
            x.memforest_hybrid.p50_us,
            x.memforest_hybrid.p99_us,
            x.memforest_hybrid_flat.p50_us,
            x.memforest_hybrid_flat.p99_us,
            x.flat_bm25.p50_us,
            x.flat_bm25.p99_us,
            x.p50_ratio,
            x.p99_ratio
        ));
    }
    s
}
