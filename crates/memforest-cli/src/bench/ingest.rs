//! `memforest bench ingest`: the full memory write path (`Memory::ingest_session`: WAL, turns,
//! cells, facts, routing, tree inserts, dirty marks) on synthetic multi-tenant facts
//! ([`crate::bench::synth`]), extraction excluded ([`SynthExtractor`]), summarizer `none`
//! by default (a node's summary is its header; the refresh machinery still runs) or
//! `extractive`, and the default embedder or none.
//!
//! Each size runs in a child process (`memforest bench ingest --one N`), so the peak RSS
//! (`VmHWM`) of one size is not inflated by a larger one. Reported per size: facts/s, peak
//! RSS, final on-disk bytes per fact, the engine's bytes written per fact
//! ([`WrittenPerFact`]), and the per-insert cost in each decade of N
//! (microseconds per fact between 10^(d-1) and 10^d facts, in wall time and in process CPU
//! time, every thread: ingest, flush, compaction, summary scheduler) with the ratio of the
//! last decade's cost to 10^4's. On a shared machine the CPU figure is the one other
//! processes do not inflate. The CPU of the thread calling `Memory::ingest_session` is also
//! reported alone: the write's critical path, without the background flush, compaction and
//! summary refresh (it also runs the synthetic extractor, which runs inline and does
//! almost nothing).
//!
//! At the end of each decade the run settles: it waits until no node is dirty
//! (`Memory::flush_summaries`), every write is in a segment file (`Db::flush`) and no
//! compaction is due (`Db::wait_for_compact`), so each decade is also reported *settled*:
//! its cost including the summary refresh, the flushes and the compactions its own inserts
//! made due. Without it the first decades look cheap because their summary refresh and
//! flush run later, inside the next decade (the first decades write less than one
//! memtable).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use memforest::Memory;
use memforest_engine::TenantId;
use serde::{Deserialize, Serialize};

use crate::bench::measure::{
    cpu_seconds, dir_bytes, peak_rss_bytes, thread_cpu_seconds, thread_group_cpu_seconds,
};
use crate::bench::residency::ResidentArg;
use crate::bench::synth::{Corpus, Shape, SynthExtractor};
use memforest_cli::store::{DurabilityArg, EmbedArgs, EmbedderArg, ModelArgs, SummarizerArg};

/// `bench ingest --summarizer`: the in-process summarizers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BenchSummarizer {
    /// A node's summary is its `[time | label]` header.
    #[default]
    None,
    /// Sentence selection from the children (the store's default).
    Extractive,
}

/// `bench ingest --embedder`: the in-process embedders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BenchEmbedder {
    /// The bundled static embedder (the store's default).
    #[default]
    Static,
    /// No vectors: lexical retrieval only.
    None,
}

/// Settings of `bench ingest`.
#[derive(Debug, Clone, clap::Args)]
pub struct IngestArgs {
    /// Fact counts, one child process each, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "10000,100000")]
    pub sizes: Vec<u64>,
    /// Tenants (sessions go to them round-robin).
    #[arg(long, default_value_t = 100)]
    pub tenants: usize,
    /// Facts per session.
    #[arg(long, default_value_t = 20)]
    pub per_session: usize,
    /// Fraction of sessions dated before their tenant's newest one.
    #[arg(long, default_value_t = 0.05)]
    pub late: f64,
    /// Extraction and summary pool threads (the extraction pool is idle here: the
    /// synthetic extractor runs inline).
    #[arg(long, default_value_t = 2)]
    pub pool: usize,
    /// Durability of memory-layer writes.
    #[arg(long, value_enum, default_value_t = DurabilityArg::Buffered)]
    pub durability: DurabilityArg,
    /// Node summarizer; neither calls a model.
    #[arg(long, value_enum, default_value_t)]
    pub summarizer: BenchSummarizer,
    /// Embedder of facts and summaries; neither calls a model.
    #[arg(long, value_enum, default_value_t)]
    pub embedder: BenchEmbedder,
    /// Directory for the stores (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Keep each size's store (its path is printed) for `memforest stats` or `verify`.
    #[arg(long)]
    pub keep: bool,
    /// `--resident-mib`.
    #[command(flatten)]
    pub resident: ResidentArg,
    /// Facts of a warm-up child run (and discarded) before each size's child; 0: none.
    /// On a virtual machine the first process after an idle spell pays for memory the
    /// host reclaimed while the guest held it free, which would inflate the smallest
    /// decades, the denominator of the scale ratio.
    #[arg(long, default_value_t = 10_000)]
    pub warmup: u64,
    /// Run one size in this process and print its JSON row (what the parent spawns).
    #[arg(long, hide = true)]
    pub one: Option<u64>,
}

/// Per-insert cost over one decade of N.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decade {
    /// The decade's upper end (10^d facts).
    pub facts: u64,
    /// Mean wall microseconds per fact for facts 10^(d-1)..10^d (0..10^d for the first).
    pub us_per_fact: f64,
    /// Mean process CPU microseconds (all threads) per fact over the same facts.
    pub cpu_us_per_fact: f64,
    /// Mean CPU microseconds per fact of the thread calling `Memory::ingest_session` alone: the
    /// write's critical path (WAL, memtable, routing, tree inserts, dirty marks), without
    /// the flush, compaction and summary refresh that run on background threads (0 in
    /// reports from before it was recorded).
    #[serde(default)]
    pub ingest_cpu_us_per_fact: f64,
    /// Mean microseconds per fact the writer spent stalled (waiting on sealed memtables,
    /// on level 0, on the summary backlog) over the same facts: the part of the wall cost
    /// that is waiting for background work rather than sharing the cores with it (0 in
    /// reports from before it was recorded).
    #[serde(default)]
    pub stall_us_per_fact: f64,
    /// Wall microseconds per fact of the decade including the wait, at its end, until the
    /// background work its inserts made due is done: no dirty node, every write flushed to
    /// a segment file, no compaction due (0 in reports from before it was recorded).
    #[serde(default)]
    pub settled_us_per_fact: f64,
    /// Process CPU microseconds per fact over the same span.
    #[serde(default)]
    pub settled_cpu_us_per_fact: f64,
    /// The same per group of threads ([`thread_group_cpu_seconds`]): `memforest` is the
    /// ingesting thread, `memforest-compa` compaction, `memforest-flush` the flush thread,
    /// `mf-scheduler` the summary scheduler, `mf-summary` and `mf-extract` the pools (the
    /// extraction pool idle: the synthetic extractor runs inline),
    /// `bench-settle` the waits at the decades' ends (with the compactions
    /// `Db::wait_for_compact` runs itself; each waiting thread reports its own CPU as it
    /// ends). Of the other threads only those alive at the decade's end count, and a
    /// thread's CPU before the decade began is subtracted only if it was alive then too
    /// (the engine's threads live as long as the `Db`). The main thread is named after the
    /// executable, `memforest` (empty in reports from before it was recorded).
    #[serde(default)]
    pub settled_thread_cpu_us_per_fact: BTreeMap<String, f64>,
}

/// Clocks read at one point of the run.
#[derive(Debug, Clone)]
struct Sample {
    /// Wall seconds since the start.
    secs: f64,
    /// Process CPU seconds.
    cpu: f64,
    /// The ingesting thread's CPU seconds.
    own: f64,
    /// Writer stall microseconds.
    stall: u64,
    /// CPU seconds per thread group.
    groups: BTreeMap<String, f64>,
}

impl Sample {
    /// Reads the clocks; `settle_cpu` is the CPU seconds the settling threads have used so
    /// far (they have exited, so `/proc` no longer lists them).
    fn take(db: &Memory, start: Instant, settle_cpu: f64) -> Self {
        let mut groups = thread_group_cpu_seconds();
        groups.insert(SETTLE_THREAD.to_owned(), settle_cpu);
        Self {
            secs: start.elapsed().as_secs_f64(),
            cpu: cpu_seconds(),
            own: thread_cpu_seconds(),
            stall: stall_micros(db),
            groups,
        }
    }
}

impl Decade {
    /// The decade ending at `facts` that began at `from`, whose inserts ended at `ingested`
    /// and whose background work was done at `settled`; `count` facts.
    fn new(facts: u64, count: u64, from: &Sample, ingested: &Sample, settled: &Sample) -> Self {
        let per = |d: f64| d * 1e6 / count.max(1) as f64;
        Self {
            facts,
            us_per_fact: per(ingested.secs - from.secs),
            cpu_us_per_fact: per(ingested.cpu - from.cpu),
            ingest_cpu_us_per_fact: per(ingested.own - from.own),
            stall_us_per_fact: ingested.stall.saturating_sub(from.stall) as f64
                / count.max(1) as f64,
            settled_us_per_fact: per(settled.secs - from.secs),
            settled_cpu_us_per_fact: per(settled.cpu - from.cpu),
            settled_thread_cpu_us_per_fact: settled
                .groups
                .iter()
                .map(|(g, &end)| {
                    let begin = from.groups.get(g).copied().unwrap_or(0.0);
                    (g.clone(), per(end - begin))
                })
                .collect(),
        }
    }
}

/// One size's measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeRow {
    /// Facts ingested.
    pub facts: u64,
    /// Sessions ingested.
    pub sessions: u64,
    /// Wall seconds of the ingest calls and the settling at each decade's end.
    pub seconds: f64,
    /// Of `seconds`, those spent settling (0 in reports from before it was recorded).
    #[serde(default)]
    pub settle_seconds: f64,
    /// Facts per second.
    pub facts_per_sec: f64,
    /// Seconds `Db::close` took afterwards (summarizing what is dirty, WAL sync).
    pub close_seconds: f64,
    /// Peak resident set of the process (bytes, `VmHWM`).
    pub peak_rss_bytes: u64,
    /// Bytes of the store directory after close.
    pub disk_bytes: u64,
    /// `disk_bytes / facts`.
    pub disk_bytes_per_fact: f64,
    /// Mean fact text bytes.
    pub fact_bytes: f64,
    /// Engine bytes written per fact over the run, before close (`Db::stats`; zeros in
    /// reports from before it was recorded).
    #[serde(default)]
    pub written: WrittenPerFact,
    /// Per-insert cost per decade.
    pub decades: Vec<Decade>,
    /// Last decade's wall cost over the 10^4 decade's (None below 10^5 facts).
    pub cost_ratio_vs_1e4: Option<f64>,
    /// The same ratio of CPU costs.
    pub cpu_ratio_vs_1e4: Option<f64>,
    /// The same ratio of the ingesting thread's CPU costs.
    #[serde(default)]
    pub ingest_cpu_ratio_vs_1e4: Option<f64>,
    /// The same ratio of settled wall costs.
    #[serde(default)]
    pub settled_ratio_vs_1e4: Option<f64>,
    /// The same ratio of settled CPU costs.
    #[serde(default)]
    pub settled_cpu_ratio_vs_1e4: Option<f64>,
}

/// Bytes the engine wrote per fact (`Db::stats` divided by facts): where the write path's
/// cost goes as N grows.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WrittenPerFact {
    /// Key + value bytes of every batch (the memory layer's writes: turns, facts, postings,
    /// node pages, dirty marks, summaries).
    pub user: f64,
    /// WAL bytes.
    pub wal: f64,
    /// Level-0 segment bytes written by flushes.
    pub flush: f64,
    /// Segment bytes written by compactions.
    pub compaction: f64,
    /// (WAL + flush + compaction) / user bytes.
    pub write_amplification: f64,
}

impl WrittenPerFact {
    fn new(stats: &memforest_engine::Stats, facts: u64) -> Self {
        let per = |b: u64| b as f64 / facts.max(1) as f64;
        Self {
            user: per(stats.user_bytes),
            wal: per(stats.wal_bytes_written),
            flush: per(stats.flush_bytes_written),
            compaction: per(stats.compaction_bytes_written),
            write_amplification: stats.write_amplification,
        }
    }
}

/// The `bench ingest` report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Tenants.
    pub tenants: usize,
    /// Facts per session.
    pub per_session: usize,
    /// Late-session fraction.
    pub late: f64,
    /// The summarizer (reports written before it was a flag have none: `none`).
    #[serde(default)]
    pub summarizer: BenchSummarizer,
    /// The embedder (reports written before it was a flag have none).
    #[serde(default)]
    pub embedder: Option<BenchEmbedder>,
    /// The segment residency budget the measured children ran with, MiB (`--resident-mib`
    /// or the engine's default; reports written before f111791 have none).
    #[serde(default)]
    pub resident_mib: Option<u64>,
    /// One row per size.
    pub sizes: Vec<SizeRow>,
}

/// Runs `bench ingest`: each size in a child process (or `--one` in this one).
///
/// # Errors
/// Store errors; a child that fails or prints no JSON.
pub fn run(args: &IngestArgs) -> anyhow::Result<Report> {
    let sizes = match args.one {
        Some(n) => vec![one(args, n)?],
        None => args
            .sizes
            .iter()
            .map(|&n| {
                if args.warmup > 0 {
                    eprintln!("bench ingest: warm-up: {} facts", args.warmup);
                    child(args, args.warmup, false).context("the warm-up child")?;
                }
                child(args, n, args.keep)
            })
            .collect::<anyhow::Result<_>>()?,
    };
    Ok(Report {
        tenants: args.tenants,
        per_session: args.per_session,
        late: args.late,
        summarizer: args.summarizer,
        embedder: Some(args.embedder),
        resident_mib: Some(args.resident.effective_mib()),
        sizes,
    })
}

/// Runs `n` facts in a child process (keeping its store when `keep`) and returns its row.
fn child(args: &IngestArgs, n: u64, keep: bool) -> anyhow::Result<SizeRow> {
    eprintln!("bench ingest: {n} facts (child process)");
    let exe = std::env::current_exe().context("locate the memforest binary")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["bench", "ingest", "--json", "--one", &n.to_string()])
        .args(["--tenants", &args.tenants.to_string()])
        .args(["--per-session", &args.per_session.to_string()])
        .args(["--late", &args.late.to_string()])
        .args(["--pool", &args.pool.to_string()])
        .args(["--durability", durability_flag(args.durability)])
        .args(["--summarizer", &value_name(args.summarizer)])
        .args(["--embedder", &value_name(args.embedder)]);
    if let Some(d) = &args.dir {
        cmd.arg("--dir").arg(d);
    }
    if keep {
        cmd.arg("--keep");
    }
    if let Some(mib) = args.resident.mib {
        cmd.args(["--resident-mib", &mib.to_string()]);
    }
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("run the ingest child")?;
    anyhow::ensure!(
        out.status.success(),
        "ingest child for {n} facts failed: {}",
        out.status
    );
    let r: Report = serde_json::from_slice(&out.stdout).context("parse the ingest child's JSON")?;
    r.sizes
        .into_iter()
        .next()
        .with_context(|| format!("ingest child for {n} facts reported nothing"))
}

/// The command-line spelling of `v`.
fn value_name(v: impl clap::ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
}

fn durability_flag(d: DurabilityArg) -> &'static str {
    match d {
        DurabilityArg::Buffered => "buffered",
        DurabilityArg::SyncData => "sync-data",
        DurabilityArg::SyncAll => "sync-all",
    }
}

/// Ingests `n` facts in this process.
fn one(args: &IngestArgs, n: u64) -> anyhow::Result<SizeRow> {
    let dir = super::measure::scratch_dir(args.dir.as_deref())?;
    let mut options = ModelArgs {
        durability: args.durability,
        summarizer: match args.summarizer {
            BenchSummarizer::None => SummarizerArg::None,
            BenchSummarizer::Extractive => SummarizerArg::Extractive,
        },
        embed: EmbedArgs {
            embedder: match args.embedder {
                BenchEmbedder::Static => EmbedderArg::Static,
                BenchEmbedder::None => EmbedderArg::None,
            },
            ..EmbedArgs::default()
        },
        pool: args.pool.max(1),
        ..ModelArgs::default()
    }
    .options()?;
    options.memory.extractor = Arc::new(SynthExtractor);
    args.resident.apply(&mut options.engine);
    let db = Memory::open_with(dir.path(), options)?;
    let tenants = (0..args.tenants.max(1))
        .map(|t| TenantId::new(format!("tenant{t:03}")))
        .collect::<Result<Vec<_>, _>>()?;
    let corpus = Corpus::new(
        Shape {
            tenants: args.tenants,
            per_session: args.per_session,
            late: args.late,
            seed: 7,
        },
        usize::try_from(n)?,
    );
    let (mut made, mut sessions, mut text_bytes) = (0u64, 0u64, 0u64);
    let mut marks: Vec<u64> = std::iter::successors(Some(1000u64), |m| m.checked_mul(10))
        .take_while(|&m| m < n)
        .chain([n])
        .collect();
    marks.reverse(); // popped from the end, smallest first
    let mut decades = Vec::new();
    let start = Instant::now();
    let (mut last_facts, mut last) = (0u64, Sample::take(&db, start, 0.0));
    let (mut settle_seconds, mut settle_cpu) = (0.0, 0.0);
    for g in corpus {
        let tenant = tenants
            .get(g.tenant)
            .context("generator named an unknown tenant")?;
        db.ingest_session(tenant, &g.session)?;
        made += g.facts.len() as u64;
        sessions += 1;
        text_bytes += g.facts.iter().map(|f| f.len() as u64).sum::<u64>();
        while marks.last().is_some_and(|&m| made >= m) {
            marks.pop();
            let ingested = Sample::take(&db, start, settle_cpu);
            settle_cpu += settle(&db)?;
            let settled = Sample::take(&db, start, settle_cpu);
            settle_seconds += settled.secs - ingested.secs;
            let count = made.saturating_sub(last_facts);
            decades.push(Decade::new(made, count, &last, &ingested, &settled));
            (last_facts, last) = (made, settled);
        }
        if made % 100_000 < g.facts.len() as u64 {
            eprintln!(
                "  {made} facts, {:.0} facts/s, {:.0} CPU us/fact, peak RSS {} MiB",
                made as f64 / start.elapsed().as_secs_f64(),
                cpu_seconds() * 1e6 / made as f64,
                peak_rss_bytes() >> 20
            );
        }
    }
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    let written = WrittenPerFact::new(&db.db().stats(), made);
    let closing = Instant::now();
    db.close()?;
    let close_seconds = closing.elapsed().as_secs_f64();
    let disk_bytes = dir_bytes(dir.path());
    if args.keep {
        eprintln!("  kept the store at {}", dir.keep().display());
    }
    let ratio = |cost: fn(&Decade) -> f64| {
        let base = decades.iter().find(|d| d.facts == 10_000).map(cost)?;
        let last = decades.last().filter(|d| d.facts > 10_000)?;
        Some(cost(last) / base.max(1e-9))
    };
    let cost_ratio_vs_1e4 = ratio(|d| d.us_per_fact);
    let cpu_ratio_vs_1e4 = ratio(|d| d.cpu_us_per_fact);
    let ingest_cpu_ratio_vs_1e4 = ratio(|d| d.ingest_cpu_us_per_fact);
    let settled_ratio_vs_1e4 = ratio(|d| d.settled_us_per_fact);
    let settled_cpu_ratio_vs_1e4 = ratio(|d| d.settled_cpu_us_per_fact);
    Ok(SizeRow {
        facts: made,
        sessions,
        seconds,
        settle_seconds,
        facts_per_sec: made as f64 / seconds,
        close_seconds,
        peak_rss_bytes: peak_rss_bytes(),
        disk_bytes,
        disk_bytes_per_fact: disk_bytes as f64 / made.max(1) as f64,
        fact_bytes: text_bytes as f64 / made.max(1) as f64,
        written,
        decades,
        cost_ratio_vs_1e4,
        cpu_ratio_vs_1e4,
        ingest_cpu_ratio_vs_1e4,
        settled_ratio_vs_1e4,
        settled_cpu_ratio_vs_1e4,
    })
}

/// Microseconds writers of `db` have stalled so far: on sealed memtables, on level 0 and
/// on the summary backlog.
fn stall_micros(db: &Memory) -> u64 {
    let s = db.db().stats();
    s.stall_memtable_micros
        .saturating_add(s.stall_l0_micros)
        .saturating_add(db.memory_stats().stall_micros)
}

/// The report as text.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "ingest: {} tenants, {} facts per session, {:.0}% late sessions, extraction excluded, summarizer {}, embedder {}\n{:>10} {:>9} {:>10} {:>9} {:>10} {:>10} {:>12}  per-insert us by decade\n",
        r.tenants, r.per_session, r.late * 100.0, value_name(r.summarizer),
        r.embedder.map_or_else(|| "unrecorded".to_owned(), value_name),
        "facts", "seconds", "facts/s", "close s", "peak MiB", "disk B/f", "10^N/10^4"
    );
    if let Some(mib) = r.resident_mib {
        s.push_str(&format!("segment files kept resident: {mib} MiB\n"));
    }
    s.push_str("(10^N/10^4 and per-insert us: wall/CPU; CPU counts every thread of the process)\n");
    for row in &r.sizes {
        s.push_str(&format!(
            "{:>10} {:>9.1} {:>10.0} {:>9.1} {:>10.1} {:>10.0} {:>12}  {}\n",
            row.facts,
            row.seconds,
            row.facts_per_sec,
            row.close_seconds,
            row.peak_rss_bytes as f64 / f64::from(1u32 << 20),
            row.disk_bytes_per_fact,
            ratio_pair(row.cost_ratio_vs_1e4, row.cpu_ratio_vs_1e4),
            by_decade(row, |d| (d.us_per_fact, d.cpu_us_per_fact))
        ));
        s.push_str(&format!(
            "{:>10} ingesting thread's CPU / stalled us per fact by decade: {} (CPU 10^N/10^4 {})\n",
            "",
            by_decade(row, |d| (d.ingest_cpu_us_per_fact, d.stall_us_per_fact)),
            row.ingest_cpu_ratio_vs_1e4
                .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}"))
        ));
        s.push_str(&format!(
            "{:>10} settled (with the refresh, flushes and compactions each decade made due) us per fact, wall/CPU: {} (10^N/10^4 {}; {:.1} s settling)\n",
            "",
            by_decade(row, |d| (d.settled_us_per_fact, d.settled_cpu_us_per_fact)),
            ratio_pair(row.settled_ratio_vs_1e4, row.settled_cpu_ratio_vs_1e4),
            row.settle_seconds
        ));
        s.push_str(&thread_lines(row));
        let w = &row.written;
        s.push_str(&format!(
            "{:>10} written per fact: {:.0} B by the memory layer, WAL {:.0} B, flush {:.0} B, compaction {:.0} B (write amplification {:.1})\n",
            "", w.user, w.wal, w.flush, w.compaction, w.write_amplification
        ));
    }
    s
}

/// The settling thread's name (and its group's).
const SETTLE_THREAD: &str = "bench-settle";

/// Waits until no node is dirty, every write is flushed and no compaction is due, on a
/// thread of its own ([`SETTLE_THREAD`]): `Db::wait_for_compact` runs due compactions on
/// the calling thread, which would otherwise count as the ingesting thread's CPU. Returns
/// the CPU seconds that thread used.
fn settle(db: &Memory) -> anyhow::Result<f64> {
    std::thread::scope(|s| {
        let waiter = std::thread::Builder::new()
            .name(SETTLE_THREAD.to_owned())
            .spawn_scoped(s, || -> anyhow::Result<f64> {
                db.flush_summaries()?;
                db.db().flush()?;
                db.db().wait_for_compact()?;
                Ok(thread_cpu_seconds())
            })
            .context("spawn the settling thread")?;
        waiter
            .join()
            .map_err(|_| anyhow::anyhow!("the settling thread panicked"))?
    })
}

/// One line per thread group: its settled CPU microseconds per fact in each decade.
fn thread_lines(row: &SizeRow) -> String {
    let groups: std::collections::BTreeSet<&String> = row
        .decades
        .iter()
        .flat_map(|d| d.settled_thread_cpu_us_per_fact.keys())
        .collect();
    groups
        .into_iter()
        .map(|g| {
            let cells: Vec<String> = row
                .decades
                .iter()
                .map(|d| {
                    let us = d.settled_thread_cpu_us_per_fact.get(g).copied();
                    format!("{}:{:.0}", d.facts, us.unwrap_or(0.0))
                })
                .collect();
            format!(
                "{:>10} settled CPU us per fact, thread {g}: {}\n",
                "",
                cells.join(" ")
            )
        })
        .collect()
}

/// `facts:a/b` for each decade of `row`, with `(a, b)` picked by `pick`.
fn by_decade(row: &SizeRow, pick: impl Fn(&Decade) -> (f64, f64)) -> String {
    row.decades
        .iter()
        .map(|d| {
            let (a, b) = pick(d);
            format!("{}:{a:.0}/{b:.0}", d.facts)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `wall/cpu` ratios, or `-` when the run was too small to have them.
fn ratio_pair(wall: Option<f64>, cpu: Option<f64>) -> String {
    match (wall, cpu) {
        (Some(w), Some(c)) => format!("{w:.2}/{c:.2}"),
        _ => "-".to_owned(),
    }
}
