//! `memforest bench storage`: db_bench's workloads against memforest-engine and the peers
//! fjall, redb and SQLite, in one process, one engine after the other, with matched
//! durability classes; the memforest/peer throughput ratio per workload.
//!
//! Write amplification: bytes the process passed to `write(2)` during a write phase and
//! the flush/compaction it caused ([`settle`]), divided by the user key + value bytes of the
//! phase. Space amplification: bytes of the engine's directory after that, divided by the
//! key + value bytes of the live (distinct) keys.

pub mod fjall;
pub mod memforest;
pub mod redb;
pub mod sqlite;
pub mod store;
pub mod workload;

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::bench::measure::{bytes_written, dir_bytes, Percentiles};
use store::{Class, Store, KEY_LEN, VALUE_LEN};
use workload::{mark_written, Workload};

/// The engines `bench storage` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// memforest-engine (the subject).
    Memforest,
    /// fjall 3 (LSM).
    Fjall,
    /// redb (copy-on-write B-tree).
    Redb,
    /// SQLite via rusqlite (bundled library), WAL journal.
    Sqlite,
}

impl Engine {
    fn open(self, dir: &Path, class: Class) -> anyhow::Result<Box<dyn Store>> {
        Ok(match self {
            Self::Memforest => Box::new(memforest::Memforest::open(dir, class)?),
            Self::Fjall => Box::new(fjall::Fjall::open(dir, class)?),
            Self::Redb => Box::new(redb::Redb::open(dir, class)?),
            Self::Sqlite => Box::new(sqlite::Sqlite::open(dir, class)?),
        })
    }
}

/// Settings of one `bench storage` run.
#[derive(Debug, Clone, clap::Args)]
pub struct StorageArgs {
    /// Records per workload (db_bench `--num`).
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,
    /// Records per write call (db_bench `--batch_size`).
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    /// Durability of fillseq, fillrandom and overwrite (fillsync is always `sync`).
    #[arg(long, value_enum, default_value_t = Class::Buffered)]
    pub durability: Class,
    /// Records of fillsync (default: num / 1000, at least 100, like db_bench).
    #[arg(long)]
    pub sync_num: Option<u64>,
    /// Writer-thread counts fillsync runs with, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    pub writers: Vec<usize>,
    /// Engines to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "memforest,fjall,redb,sqlite"
    )]
    pub engines: Vec<Engine>,
    /// Workloads to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "fillseq,fillrandom,overwrite,fillsync,readrandom,readseq,seekrandom"
    )]
    pub workloads: Vec<Workload>,
    /// Directory for the stores (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
    /// Repetitions; each runs every engine (starting with a different one), and the report
    /// keeps each row's median-throughput repetition (the machine is shared and noisy).
    #[arg(long, default_value_t = 1)]
    pub reps: usize,
}

/// One (workload, engine) measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// db_bench workload name.
    pub workload: Workload,
    /// Engine.
    pub engine: Engine,
    /// Durability class asked for.
    pub class: Class,
    /// How the engine's setting differs from `class` (empty: the same guarantee).
    pub class_note: &'static str,
    /// Writer threads.
    pub writers: usize,
    /// Operations.
    pub ops: u64,
    /// Wall seconds.
    pub seconds: f64,
    /// Microseconds per operation (wall / ops).
    pub micros_per_op: f64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Key + value megabytes (10^6 bytes) per second.
    pub mb_per_sec: f64,
    /// Per-call latency percentiles (microseconds; zero for readseq).
    #[serde(flatten)]
    pub latency: Percentiles,
    /// Reads that found their key (read workloads).
    pub found: Option<u64>,
    /// Process bytes written / user bytes (write workloads).
    pub write_amp: Option<f64>,
    /// Directory bytes / live key + value bytes (write workloads).
    pub space_amp: Option<f64>,
}

/// memforest's throughput over a peer's on one workload.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// Workload.
    pub workload: Workload,
    /// Writer threads.
    pub writers: usize,
    /// The peer.
    pub peer: Engine,
    /// memforest ops/s divided by the peer's (> 1: memforest is faster).
    pub memforest_over_peer: f64,
}

/// The whole `bench storage` report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Records per workload.
    pub num: u64,
    /// Records per write call.
    pub batch: usize,
    /// Repetitions (each row is its median one).
    pub reps: usize,
    /// Key bytes.
    pub key_bytes: usize,
    /// Value bytes.
    pub value_bytes: usize,
    /// Rows, engine by engine in run order.
    pub rows: Vec<Row>,
    /// memforest / peer throughput per workload.
    pub ratios: Vec<Ratio>,
}

const RECORD: u64 = (KEY_LEN + VALUE_LEN) as u64;

/// Flushes `store` and waits until the process stops writing (background compaction
/// done, at most 20 s), so write amplification includes what the phase caused.
fn settle(store: &dyn Store) -> anyhow::Result<()> {
    store.settle()?;
    let start = Instant::now();
    let mut last = bytes_written();
    while start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(300));
        let now = bytes_written();
        if now == last {
            break;
        }
        last = now;
    }
    Ok(())
}

struct Phase<'a> {
    args: &'a StorageArgs,
    engine: Engine,
    rows: Vec<Row>,
}

impl Phase<'_> {
    /// Runs `w` on `store` and records a row; for writes also the amplification, with
    /// `live` updated to the keys the phase left.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        store: &dyn Store,
        dir: &Path,
        w: Workload,
        class: Class,
        (n, writers, seed): (u64, usize, u64),
        live: &mut [bool],
    ) -> anyhow::Result<()> {
        let space = live.len() as u64;
        let before = bytes_written();
        let t = workload::run(store, w, n, space, self.args.batch, writers, seed)?;
        let (mut write_amp, mut space_amp) = (None, None);
        if w.writes() {
            settle(store)?;
            let written = bytes_written().saturating_sub(before);
            mark_written(live, w, n, space, writers, seed);
            let live_bytes = live.iter().filter(|&&b| b).count() as u64 * RECORD;
            write_amp = Some(written as f64 / (n * RECORD).max(1) as f64);
            space_amp = Some(dir_bytes(dir) as f64 / live_bytes.max(1) as f64);
        }
        let secs = t.elapsed.as_secs_f64().max(1e-9);
        self.rows.push(Row {
            workload: w,
            engine: self.engine,
            class,
            class_note: store.class_note(),
            writers,
            ops: t.ops,
            seconds: secs,
            micros_per_op: secs * 1e6 / t.ops.max(1) as f64,
            ops_per_sec: t.ops as f64 / secs,
            mb_per_sec: t.bytes as f64 / 1e6 / secs,
            latency: t.latency,
            found: (!w.writes()).then_some(t.found),
            write_amp,
            space_amp,
        });
        Ok(())
    }
}

fn temp(args: &StorageArgs) -> anyhow::Result<tempfile::TempDir> {
    super::measure::scratch_dir(args.dir.as_deref())
}

/// Runs every selected workload on `engine`: fillseq on a fresh store; fillrandom, then
/// overwrite and the reads on a second store; fillsync on a fresh store per writer count.
fn engine_rows(args: &StorageArgs, engine: Engine) -> anyhow::Result<Vec<Row>> {
    let wants = |w: Workload| args.workloads.contains(&w);
    let n = args.num.max(1);
    let mut p = Phase {
        args,
        engine,
        rows: Vec::new(),
    };
    let space = usize::try_from(n)?;
    if wants(Workload::Fillseq) {
        let dir = temp(args)?;
        let store = engine.open(dir.path(), args.durability)?;
        let mut live = vec![false; space];
        p.run(
            &*store,
            dir.path(),
            Workload::Fillseq,
            args.durability,
            (n, 1, 1),
            &mut live,
        )?;
    }
    let reads = [
        Workload::Readrandom,
        Workload::Readseq,
        Workload::Seekrandom,
    ];
    if wants(Workload::Fillrandom) || wants(Workload::Overwrite) || reads.iter().any(|&w| wants(w))
    {
        let dir = temp(args)?;
        let store = engine.open(dir.path(), args.durability)?;
        let mut live = vec![false; space];
        // The reads need a filled store: fillrandom always runs, its row only when asked.
        let at = p.rows.len();
        p.run(
            &*store,
            dir.path(),
            Workload::Fillrandom,
            args.durability,
            (n, 1, 2),
            &mut live,
        )?;
        if !wants(Workload::Fillrandom) {
            p.rows.truncate(at);
        }
        if wants(Workload::Overwrite) {
            p.run(
                &*store,
                dir.path(),
                Workload::Overwrite,
                args.durability,
                (n, 1, 3),
                &mut live,
            )?;
        }
        for (seed, w) in (4..).zip(reads) {
            if wants(w) {
                p.run(
                    &*store,
                    dir.path(),
                    w,
                    args.durability,
                    (n, 1, seed),
                    &mut live,
                )?;
            }
        }
    }
    if wants(Workload::Fillsync) {
        let sync_n = args.sync_num.unwrap_or((n / 1000).max(100));
        for &writers in &args.writers {
            let dir = temp(args)?;
            let store = engine.open(dir.path(), Class::Sync)?;
            let mut live = vec![false; space];
            p.run(
                &*store,
                dir.path(),
                Workload::Fillsync,
                Class::Sync,
                (sync_n, writers, 7),
                &mut live,
            )?;
        }
    }
    Ok(p.rows)
}

/// One row per (workload, engine, writers), in first-seen order: the repetition with the
/// median throughput.
fn medians(all: Vec<Row>) -> Vec<Row> {
    let mut groups: Vec<Vec<Row>> = Vec::new();
    for r in all {
        match groups.iter_mut().find(|g| {
            g.first().is_some_and(|f| {
                (f.workload, f.engine, f.writers) == (r.workload, r.engine, r.writers)
            })
        }) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
        .into_iter()
        .filter_map(|mut g| {
            g.sort_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
            let mid = g.len() / 2;
            g.into_iter().nth(mid)
        })
        .collect()
}

/// Runs `bench storage`.
///
/// # Errors
/// The first engine or filesystem error.
pub fn run(args: &StorageArgs) -> anyhow::Result<Report> {
    let mut all = Vec::new();
    for rep in 0..args.reps.max(1) {
        let mut order = args.engines.clone();
        let shift = rep % order.len().max(1);
        order.rotate_left(shift);
        for e in order {
            eprintln!("bench storage: {e:?} (repetition {})", rep + 1);
            all.extend(engine_rows(args, e)?);
        }
    }
    let rows = medians(all);
    let ratios = rows
        .iter()
        .filter(|r| r.engine == Engine::Memforest)
        .flat_map(|m| {
            rows.iter()
                .filter(move |r| {
                    r.engine != Engine::Memforest
                        && r.workload == m.workload
                        && r.writers == m.writers
                })
                .map(move |r| Ratio {
                    workload: m.workload,
                    writers: m.writers,
                    peer: r.engine,
                    memforest_over_peer: m.ops_per_sec / r.ops_per_sec.max(1e-9),
                })
        })
        .collect();
    Ok(Report {
        num: args.num,
        batch: args.batch,
        reps: args.reps.max(1),
        key_bytes: KEY_LEN,
        value_bytes: VALUE_LEN,
        rows,
        ratios,
    })
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

/// The report as db_bench-style text: one line per row, then the ratios.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "storage: {} records, {}-byte keys, {}-byte values, {} per write call, median of {} repetitions\n{:<11} {:<9} {:<8} {:>2} {:>10} {:>11} {:>8} {:>9} {:>9} {:>10} {:>6} {:>6}\n",
        r.num, r.key_bytes, r.value_bytes, r.batch, r.reps,
        "workload", "engine", "class", "w", "micros/op", "ops/sec", "MB/s", "p50 us", "p99 us", "p99.9 us", "w-amp", "s-amp"
    );
    for row in &r.rows {
        s.push_str(&format!(
            "{:<11} {:<9} {:<8} {:>2} {:>10.3} {:>11.0} {:>8.1} {:>9.1} {:>9.1} {:>10.1} {:>6} {:>6}{}\n",
            format!("{:?}", row.workload).to_lowercase(),
            format!("{:?}", row.engine).to_lowercase(),
            format!("{:?}", row.class).to_lowercase(),
            row.writers,
            row.micros_per_op,
            row.ops_per_sec,
            row.mb_per_sec,
            row.latency.p50_us,
            row.latency.p99_us,
            row.latency.p999_us,
            opt(row.write_amp),
            opt(row.space_amp),
            if row.class_note.is_empty() { String::new() } else { format!("  ({})", row.class_note) }
        ));
    }
    s.push_str("\nmemforest / peer throughput:\n");
    for x in &r.ratios {
        s.push_str(&format!(
            "  {:<11} w={} vs {:<7} {:.2}\n",
            format!("{:?}", x.workload).to_lowercase(),
            x.writers,
            format!("{:?}", x.peer).to_lowercase(),
            x.memforest_over_peer
        ));
    }
    s
}
