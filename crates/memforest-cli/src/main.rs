//! `memforest`: the MemForest command line. See `memforest --help` and the README's
//! "Quick start".

mod bench;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use memforest::lifecycle::Forget;
use memforest_cli::import::{self, Format};
use memforest_cli::store::{self, ModelArgs};
use memforest_cli::{demo, eval, ingest, retrieve, stats, verify, walcmd};
use memforest_engine::TenantId;
use serde::Serialize;

/// The allocator of the binary's Rust code (the bundled C libraries, SQLite and zstd, keep
/// the system malloc). glibc malloc, shared by the ingest, flush, compaction and summary
/// threads, kept 10-20% of a long ingest's CPU in `_int_malloc` and retained fragmented
/// memory (heaptrack: ~60 MiB of RSS beyond the live heap at 2 * 10^5 facts).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Largest `--k` accepted (facts or turns per question).
const MAX_K: i64 = 1000;

/// MemForest: durable long-term memory for AI agents.
#[derive(Debug, Parser)]
#[command(name = "memforest", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ingest the bundled LongMemEval oracle data, evaluate retrieval against flat BM25,
    /// and show two example queries.
    Demo {
        /// Store directory (absent or empty); default: a fresh `memforest-demo-<time>` here.
        #[arg(long)]
        db: Option<PathBuf>,
        /// Use only the first N question instances (CI runs a small slice).
        #[arg(long)]
        limit: Option<usize>,
        /// k of the turn recall.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=MAX_K))]
        k: u16,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Ingest a LoCoMo, LongMemEval or JSONL file into a store.
    Ingest {
        /// Store directory (created when absent).
        #[arg(long)]
        db: PathBuf,
        /// Input format.
        #[arg(long, value_enum)]
        format: Format,
        /// Input file (`.zst` is decompressed).
        file: PathBuf,
        /// Ingest only the first N tenants.
        #[arg(long)]
        limit: Option<usize>,
        #[command(flatten)]
        models: ModelArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Retrieve the facts and rendered context for a question.
    Query {
        /// Store directory.
        #[arg(long)]
        db: PathBuf,
        /// Tenant to search.
        #[arg(long)]
        tenant: String,
        /// Facts to return.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=MAX_K))]
        k: u16,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// The question.
        question: String,
    },
    /// Evidence recall@k of MemForest vs a flat BM25 baseline (ingests into an empty store).
    Eval {
        /// Store directory (ingested into when empty).
        #[arg(long)]
        db: PathBuf,
        /// Input format (locomo or longmemeval).
        #[arg(long, value_enum)]
        format: Format,
        /// Benchmark file.
        file: PathBuf,
        /// k of the turn recall.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=MAX_K))]
        k: u16,
        /// k of the session recall (LongMemEval).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=MAX_K))]
        session_k: u16,
        /// Use only the first N tenants.
        #[arg(long)]
        limit: Option<usize>,
        #[command(flatten)]
        models: ModelArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Record counts per tenant, levels, WAL and memory-layer statistics.
    Stats {
        /// Store directory.
        #[arg(long)]
        db: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every checksum of every file and every tree's invariants (read-only: runs
    /// beside a writer; exits non-zero when anything is damaged).
    Verify {
        /// Store directory.
        #[arg(long)]
        db: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild a store's manifest from the segment files and WAL present, taking back
    /// quarantined files that read whole (for a lost CURRENT or manifest, quarantined
    /// files, missing WAL segments; see docs/durability.md).
    Repair {
        /// Store directory.
        #[arg(long)]
        db: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Forget a tenant's session, fact, or everything.
    Forget {
        /// Store directory.
        #[arg(long)]
        db: PathBuf,
        /// Tenant.
        #[arg(long)]
        tenant: String,
        /// Forget this session id.
        #[arg(long, group = "what")]
        session: Option<String>,
        /// Forget this fact id.
        #[arg(long, group = "what")]
        fact: Option<String>,
        /// Forget everything of the tenant.
        #[arg(long, group = "what")]
        all: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compact every segment file into the deepest level.
    Compact {
        /// Store directory.
        #[arg(long)]
        db: PathBuf,
        /// Also purge forgotten data physically from every file.
        #[arg(long)]
        purge: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Benchmarks against peers measured in the same run (docs/benchmarks.md).
    Bench {
        #[command(subcommand)]
        workload: bench::BenchCommand,
    },
    /// Inspect a write-ahead log directory without opening the store.
    Wal {
        #[command(subcommand)]
        action: WalAction,
    },
}

#[derive(Debug, Subcommand)]
enum WalAction {
    /// Print every entry (seqno, segment, offset, op, tenant, table, sizes).
    Dump {
        /// The WAL directory, or a store directory holding `wal/`.
        dir: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Replay the log refusing any damage; exit non-zero naming segment and offset.
    Check {
        /// The WAL directory, or a store directory holding `wal/`.
        dir: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Prints `value` as pretty JSON or as `text` renders it; a closed stdout pipe is not an error.
fn print<T: Serialize>(
    json: bool,
    value: &T,
    text: impl FnOnce(&T) -> String,
) -> anyhow::Result<()> {
    use std::io::Write as _;
    let body = if json {
        format!("{}\n", serde_json::to_string_pretty(value)?)
    } else {
        text(value)
    };
    match std::io::stdout().lock().write_all(body.as_bytes()) {
        // A closed pipe (`memforest wal dump | head`) is not a failure of the command.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r.context("write to stdout")?),
    }
}

fn tenant(name: &str) -> anyhow::Result<TenantId> {
    TenantId::new(name).with_context(|| format!("bad tenant name {name:?}"))
}

fn load(format: Format, file: &Path, limit: Option<usize>) -> anyhow::Result<import::Dataset> {
    let mut d = import::load(format, file)?;
    if let Some(n) = limit {
        d.truncate(n);
    }
    if d.warnings.total() > 0 {
        eprintln!(
            "{}: {} tolerated defects:",
            file.display(),
            d.warnings.total()
        );
        for (kind, n) in &d.warnings.0 {
            eprintln!("  {n:>6}  {kind}");
        }
    }
    Ok(d)
}

/// `memforest repair`'s text output.
fn repair_text(r: &memforest_engine::RepairReport) -> String {
    let mut s = format!(
        "repaired: {} segment files adopted ({} entries; {} taken back from quarantine), {} WAL segments kept\n",
        r.adopted.len(),
        r.entries,
        r.unquarantined.len(),
        r.wal_segments
    );
    for (name, why) in &r.unreadable {
        s.push_str(&format!(
            "  not recovered: {name} (left quarantined): {why}\n"
        ));
    }
    for id in &r.wal_lost {
        s.push_str(&format!(
            "  lost: WAL segment {id}, tracked by the previous manifest, is missing\n"
        ));
    }
    s
}

fn is_tty() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal()
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Demo { db, limit, k, json } => {
            let db = db.unwrap_or_else(|| {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                PathBuf::from(format!("memforest-demo-{t}"))
            });
            let r = demo::run(&db, limit, usize::from(k), is_tty())?;
            print(json, &r, demo::render)
        }
        Command::Ingest {
            db,
            format,
            file,
            limit,
            models,
            json,
        } => {
            let options = models.options()?;
            let data = load(format, &file, limit)?;
            let handle = store::open(&db, options)?;
            let s = ingest::run(&handle, &data, is_tty())?;
            handle.close()?;
            print(json, &s, ingest::render)
        }
        Command::Query {
            db,
            tenant: t,
            k,
            json,
            question,
        } => {
            let handle = store::open_read_only(&db)?;
            let r = retrieve::query(&handle, &tenant(&t)?, &question, None, usize::from(k))?;
            handle.close()?;
            print(json, &r, |r| {
                let mut s = String::new();
                for (i, f) in r.facts.iter().enumerate() {
                    s.push_str(&format!(
                        "{:>3}. [{:.3}] {} (fact {}, turns {})\n",
                        i + 1,
                        f.score,
                        f.text,
                        f.id,
                        f.turns.join(" ")
                    ));
                }
                s.push_str("\ncontext:\n");
                s.push_str(&r.context);
                s.push('\n');
                s
            })
        }
        Command::Eval {
            db,
            format,
            file,
            k,
            session_k,
            limit,
            models,
            json,
        } => {
            if format == Format::Jsonl {
                anyhow::bail!("eval needs questions: --format locomo or longmemeval");
            }
            let options = models.options()?;
            let data = load(format, &file, limit)?;
            let fresh = std::fs::read_dir(&db).map_or(true, |mut d| d.next().is_none());
            let handle = store::open(&db, options)?;
            if fresh {
                let s = ingest::run(&handle, &data, is_tty())?;
                eprintln!(
                    "ingested {} turns: {} facts, {} trees in {:.1} s ({:.0} turns/s)",
                    s.turns, s.facts, s.trees, s.seconds, s.turns_per_sec
                );
            }
            let r = eval::run(&handle, &data, usize::from(k), usize::from(session_k))?;
            handle.close()?;
            print(json, &r, eval::render)
        }
        Command::Stats { db, json } => {
            let handle = store::open_read_only(&db)?;
            let s = stats::collect(&handle)?;
            handle.close()?;
            print(json, &s, stats::render)
        }
        Command::Verify { db, json } => {
            let r = verify::run(&db)?;
            print(json, &r, verify::render)?;
            if !r.store.is_clean() {
                anyhow::bail!(
                    "{} is damaged: {} quarantined segment files, {} lost WAL segments",
                    db.display(),
                    r.store.quarantined.len(),
                    r.store.wal_missing.len()
                );
            }
            Ok(())
        }
        Command::Repair { db, json } => {
            let r = memforest_engine::Db::repair(&db, memforest_engine::Options::default())?;
            print(json, &r, repair_text)
        }
        Command::Forget {
            db,
            tenant: t,
            session,
            fact,
            all,
            json,
        } => {
            let id = tenant(&t)?;
            let handle = store::open_existing(&db)?;
            let what = match (session, fact, all) {
                (_, _, true) => Forget::Tenant,
                (Some(s), _, _) => Forget::Session(s),
                (_, Some(f), _) => Forget::Fact(
                    f.parse()
                        .with_context(|| format!("--fact {f:?} is not a fact id (a u64)"))?,
                ),
                _ => anyhow::bail!("forget needs one of --session, --fact or --all"),
            };
            let r = handle.forget(&id, &what)?;
            let what = serde_json::json!({
                "tenant": t,
                "turns": r.turns,
                "facts_removed": r.facts_removed,
                "facts_updated": r.facts_updated,
                "leaves_removed": r.leaves_removed,
                "seqno": r.seqno,
            });
            handle.close()?;
            print(json, &what, |w| format!("{w}\n"))
        }
        Command::Compact { db, purge, json } => {
            let handle = store::open_existing(&db)?;
            let report = if purge {
                let r = handle.purge()?;
                serde_json::json!({
                    "purged": true,
                    "files_before": r.files_before,
                    "bytes_before": r.bytes_before,
                    "files_after": r.files_after,
                    "bytes_after": r.bytes_after,
                    "wal_segments_removed": r.wal_segments_removed,
                })
            } else {
                handle.db().compact_all()?;
                serde_json::to_value(stats::collect(&handle)?)?
            };
            handle.close()?;
            print(json, &report, |r| format!("compacted: {r}\n"))
        }
        Command::Bench { workload } => bench::run(workload),
        Command::Wal { action } => match action {
            WalAction::Dump { dir, json } => {
                let entries = walcmd::dump(&walcmd::wal_dir(&dir))?;
                print(json, &entries, |es| {
                    es.iter()
                        .map(|e| {
                            format!(
                                "{:>10} seg {} @{} {:<12} {} {} key {} B value {} B\n",
                                e.seqno,
                                e.segment,
                                e.offset,
                                e.op,
                                e.tenant,
                                e.table,
                                e.key_len,
                                e.value_len
                            )
                        })
                        .collect()
                })
            }
            WalAction::Check { dir, json } => {
                let (p, files) = walcmd::check(&walcmd::wal_dir(&dir))?;
                let v = serde_json::json!({"clean": true, "files": files, "batches": p.batches.len(), "last_seqno": p.last_seqno});
                print(json, &v, |_| {
                    format!(
                        "clean: {files} WAL files, {} batches, last seqno {}\n",
                        p.batches.len(),
                        p.last_seqno
                    )
                })
            }
        },
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
