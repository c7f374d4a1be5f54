//! `memforest`: the MemForest command line. See `memforest --help` and the README's
//! "Quickstart".

mod bench;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use clap::{Parser, Subcommand};
use memforest::{ListOptions, SearchOptions};
use memforest_cli::forget::Target;
use memforest_cli::import::{self, Format};
use memforest_cli::location::StoreArgs;
use memforest_cli::messages::{self, RoleArg};
use memforest_cli::records::{self, Listed};
use memforest_cli::store::{self, EmbedArgs, ModelArgs};
use memforest_cli::{add, demo, eval, forget, ingest, profile, retrieve, search, serve, stats};
use memforest_cli::{verify, versions, walcmd, when};
use memforest_engine::{RepairHint, TenantId};
use serde::Serialize;

/// The allocator of the binary's Rust code (the bundled C libraries, SQLite and zstd, keep
/// the system malloc). Its per-thread heaps suit the ingest, flush, compaction and summary
/// threads, which allocate concurrently, better than glibc malloc's shared arenas, which
/// also keep fragmented memory after a long ingest.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Largest `--k` accepted (facts or turns per question).
const MAX_K: i64 = memforest::MAX_K as i64;

/// MemForest: durable long-term memory for AI agents.
#[derive(Debug, Parser)]
#[command(name = "memforest", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Add a message (or a JSONL file of messages) to a session of a user; prints the
    /// memories it made.
    Add {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// The session the messages are appended to (a new id starts a session).
        #[arg(long)]
        session: String,
        /// The agent the session belongs to (set by its first add that names one).
        #[arg(long)]
        agent: Option<String>,
        /// A metadata entry kept with the message (repeatable).
        #[arg(long = "meta", value_name = "KEY=VALUE")]
        meta: Vec<String>,
        /// Who said it (e.g. Alice); default: the role.
        #[arg(long)]
        speaker: Option<String>,
        /// The speaker's role.
        #[arg(long, value_enum, default_value_t)]
        role: RoleArg,
        /// When it was said (RFC 3339, "2024-04-02 09:00" in UTC, or 2024-04-02); default: now.
        #[arg(long, value_parser = when::parse)]
        time: Option<DateTime<Utc>>,
        /// The message's id in its session: adding an id already stored stores nothing.
        #[arg(long)]
        id: Option<String>,
        /// A JSONL file of messages ({"role", "content", "name", "time", "id",
        /// "metadata"} a line; `-`: standard input) instead of TEXT.
        #[arg(long, conflicts_with_all = ["text", "speaker", "role", "time", "id", "meta"])]
        file: Option<PathBuf>,
        #[command(flatten)]
        models: ModelArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// The message (its words are joined by spaces).
        #[arg(required_unless_present = "file")]
        text: Vec<String>,
    },
    /// Search a user's memories (read-only: works beside a writer).
    Search {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// Memories to return.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=MAX_K))]
        k: u16,
        /// Only memories whose event time ends at or after this time.
        #[arg(long, value_parser = when::parse)]
        since: Option<DateTime<Utc>>,
        /// Only memories whose event time starts at or before this time.
        #[arg(long, value_parser = when::parse)]
        until: Option<DateTime<Utc>>,
        /// Answer as of this time: memories whose event time starts by then, current unless
        /// superseded by then.
        #[arg(long, value_parser = when::parse)]
        as_of: Option<DateTime<Utc>>,
        /// Only memories no newer memory about the same thing supersedes.
        #[arg(long)]
        latest_only: bool,
        /// Only memories said in this session.
        #[arg(long)]
        session: Option<String>,
        /// Only memories said in sessions of this agent.
        #[arg(long)]
        agent: Option<String>,
        /// Only memories with this person among their participants: who said them, or
        /// someone a model extractor named (case ignored).
        #[arg(long)]
        speaker: Option<String>,
        /// The embedder that made the store's vectors (default: the bundled one).
        #[command(flatten)]
        embed: EmbedArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// The question (its words are joined by spaces).
        #[arg(required = true)]
        question: Vec<String>,
    },
    /// One memory of a user by id (read-only).
    Get {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// The memory id (16 hex digits, as add, search and list print).
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A user's memories, newest first (read-only).
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// At most this many (1 to 1000).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u16).range(1..=MAX_K))]
        limit: u16,
        /// After skipping this many.
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Only memories whose event time starts at or after this time.
        #[arg(long, value_parser = when::parse)]
        since: Option<DateTime<Utc>>,
        /// Only memories whose event time starts at or before this time.
        #[arg(long, value_parser = when::parse)]
        until: Option<DateTime<Utc>>,
        /// Only memories said in this session.
        #[arg(long)]
        session: Option<String>,
        /// Only memories said in sessions of this agent.
        #[arg(long)]
        agent: Option<String>,
        /// Only memories no newer memory about the same thing supersedes.
        #[arg(long)]
        latest_only: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Replace a memory's text by a new version that supersedes it from now on (the old
    /// one stays in its history).
    Update {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// The memory id (16 hex digits, as add, search and list print).
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// The new text (its words are joined by spaces).
        #[arg(required = true)]
        text: Vec<String>,
    },
    /// Every version of a memory, oldest first, with when each stopped being current
    /// (read-only).
    History {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// The memory id (any of its versions).
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The messages stored in a session of a user, with their ids, times and metadata
    /// (read-only).
    Messages {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// The session.
        #[arg(long)]
        session: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// What the store knows about a user: the summary of the user and of the hottest
    /// entities (read-only).
    Profile {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
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
        #[command(flatten)]
        store: StoreArgs,
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
        #[command(flatten)]
        store: StoreArgs,
        /// The user to search.
        #[arg(long = "user", visible_alias = "tenant")]
        tenant: String,
        /// Facts to return.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=MAX_K))]
        k: u16,
        /// The embedder that made the store's vectors (default: the bundled one).
        #[command(flatten)]
        embed: EmbedArgs,
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
        /// Retrieve only memories no newer memory about the same thing supersedes.
        #[arg(long)]
        latest_only: bool,
        /// Score the flat candidates only, without forest recall and browse (to measure
        /// what the trees add).
        #[arg(long)]
        no_trees: bool,
        #[command(flatten)]
        models: ModelArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Record counts per tenant, levels, WAL and memory-layer statistics.
    Stats {
        #[command(flatten)]
        store: StoreArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check every checksum of every file and every tree's invariants (read-only: runs
    /// beside a writer; exits non-zero when anything is damaged).
    Verify {
        #[command(flatten)]
        store: StoreArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild a store's manifest from the segment files and WAL present, taking back
    /// quarantined files that read whole (for a lost CURRENT or manifest, quarantined
    /// files, missing WAL segments; with --salvage, a damaged WAL; see docs/durability.md).
    Repair {
        #[command(flatten)]
        store: StoreArgs,
        /// Read past damage in the WAL (`RecoveryMode::SkipAnyCorrupted`) instead of
        /// refusing it: keep every write that reads back, report each damaged region and
        /// the writes lost with it, and set the damaged WAL segments aside (renamed, not
        /// deleted). For a store whose WAL fails to open with "corrupt WAL segment".
        #[arg(long)]
        salvage: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Forget a memory, a session, or everything of a user (fails, changing nothing, when
    /// there is no such thing).
    #[command(group(clap::ArgGroup::new("what").required(true)))]
    Forget {
        #[command(flatten)]
        store: StoreArgs,
        /// The user.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        /// Forget this session: its messages and the memories only they supported (with
        /// --message: only that message of it).
        #[arg(long, group = "what")]
        session: Option<String>,
        /// Forget this message of --session (its id, as `messages` prints it) and the
        /// memories only it supported.
        #[arg(long, requires = "session")]
        message: Option<String>,
        /// Forget this memory (its id as add, search and list print it).
        #[arg(long, visible_alias = "fact", group = "what")]
        memory: Option<String>,
        /// Forget everything of the user.
        #[arg(long, group = "what")]
        all: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compact every segment file into the deepest level.
    Compact {
        #[command(flatten)]
        store: StoreArgs,
        /// Also purge forgotten data physically from every file.
        #[arg(long)]
        purge: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve the store over HTTP: REST and MCP (streamable HTTP at /mcp) on one listener,
    /// with per-tenant API keys (docs/server.md). Stops on SIGTERM or Ctrl-C after the
    /// requests in flight finish.
    Serve {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        serve: serve::ServeArgs,
        #[command(flatten)]
        models: ModelArgs,
    },
    /// Serve one user's memory as an MCP server over stdin/stdout (for Claude Desktop,
    /// Cursor, Zed, ...); logs go to stderr. Stops when the client closes stdin.
    Mcp {
        #[command(flatten)]
        store: StoreArgs,
        /// The user every tool call acts for.
        #[arg(long, visible_alias = "tenant")]
        user: String,
        #[command(flatten)]
        role: serve::RoleArgs,
        #[command(flatten)]
        models: ModelArgs,
    },
    /// Manage the keys file of `memforest serve`.
    Keys {
        #[command(subcommand)]
        action: KeysAction,
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
enum KeysAction {
    /// Make a new API key, store its SHA-256 digest in the keys file (created when
    /// absent) and print the key: it is shown only this once.
    Add {
        /// The keys file.
        #[arg(long)]
        file: PathBuf,
        /// A name for the key (logs, metrics): [A-Za-z0-9_.-], 1..=64 characters.
        #[arg(long)]
        name: String,
        /// A user the key may reach and how: USER=read or USER=read-write (repeatable).
        #[arg(long = "tenant", value_name = "USER=RIGHT", required = true, value_parser = serve::parse_grant)]
        tenants: Vec<(String, memforest_server::Right)>,
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
        "repaired: {} segment files adopted ({} entries; {} taken back from quarantine), {} WAL segments replayed\n",
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
    for (name, seqno) in &r.foreign {
        s.push_str(&format!(
            "  set aside: {name} is another store's (its seqno {seqno} contradicts the WAL or is above any this store gave); renamed with a .foreign suffix, not adopted, not deleted\n"
        ));
    }
    for id in &r.wal_lost {
        s.push_str(&format!(
            "  lost: WAL segment {id}, tracked by the previous manifest, is missing\n"
        ));
    }
    for g in &r.wal_gaps {
        s.push_str(&format!(
            "  lost: WAL segments {}..={} are missing (writes {}..={}); the segments after them were replayed\n",
            g.first, g.last, g.first_seqno, g.last_seqno
        ));
    }
    for d in &r.wal_skipped {
        let what = match (d.seqnos, d.lost, d.lost_after) {
            (Some(_), Some((first, last)), _) => format!("writes {first}..={last} are lost"),
            (Some((first, last)), None, _) => {
                format!("writes {first}..={last} were already in segment files: none lost")
            }
            (None, _, Some(seqno)) => format!(
                "{} at the end of the log: the writes after {seqno} it held, if any, are lost",
                d.reason
            ),
            (None, _, None) => format!("skipped: {}", d.reason),
        };
        s.push_str(&format!(
            "  damaged WAL: segment {} at byte offset {}: {what}\n",
            d.segment, d.offset
        ));
    }
    for name in &r.wal_set_aside {
        s.push_str(&format!(
            "  not replayed: WAL segment file {name} is set aside (kept, not read)\n"
        ));
    }
    for name in &r.segments_lost {
        s.push_str(&format!(
            "  lost: segment file {name}, listed by the previous manifest, is missing: its entries are gone\n"
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
        Command::Add {
            store,
            user,
            session,
            agent,
            meta,
            speaker,
            role,
            time,
            id,
            file,
            models,
            json,
            text,
        } => {
            let messages = match file {
                Some(f) => messages::from_file(&f)?,
                None => vec![messages::from_args(&text, role, speaker, time, id, &meta)?],
            };
            let handle = store.open(models.options()?)?;
            let stored = add::run(&handle, &user, &session, agent, &messages)?;
            handle.close()?;
            print(json, &stored, add::render)?;
            // A conflict is a message the caller asked for that was not stored.
            if !stored.conflicts.is_empty() {
                anyhow::bail!(
                    "not stored, an id already stored with other content: {}",
                    stored.conflicts.join(", ")
                );
            }
            Ok(())
        }
        Command::Search {
            store,
            user,
            k,
            since,
            until,
            as_of,
            latest_only,
            session,
            agent,
            speaker,
            embed,
            json,
            question,
        } => {
            let options = SearchOptions {
                k: usize::from(k),
                since,
                until,
                as_of,
                snapshot: None,
                latest_only,
                session,
                agent,
                speaker,
            };
            let question = question.join(" ");
            let handle = store.open_read_only_with(&embed)?;
            let hits = handle.search(&user, &question, &options)?;
            handle.close()?;
            let found = search::Found {
                user,
                question,
                hits,
            };
            print(json, &found, search::render)
        }
        Command::Get {
            store,
            user,
            id,
            json,
        } => {
            let id = forget::memory_id(&id)?;
            let handle = store.open_read_only()?;
            let record = handle.get(&user, id)?;
            handle.close()?;
            let record = record.with_context(|| format!("no memory {id} for user {user:?}"))?;
            print(json, &record, records::render)
        }
        Command::List {
            store,
            user,
            limit,
            offset,
            since,
            until,
            session,
            agent,
            latest_only,
            json,
        } => {
            let options = ListOptions {
                limit: usize::from(limit),
                offset,
                since,
                until,
                session,
                agent,
                latest_only,
            };
            let handle = store.open_read_only()?;
            let memories = handle.list(&user, &options)?;
            handle.close()?;
            let listed = Listed {
                user,
                offset,
                memories,
            };
            print(json, &listed, records::render_list)
        }
        Command::Update {
            store,
            user,
            id,
            json,
            text,
        } => {
            let old = forget::memory_id(&id)?;
            let handle = store.open_existing()?;
            let new = handle.update(&user, old, &text.join(" "))?;
            let record = handle.get(&user, new)?;
            handle.close()?;
            let new = record.with_context(|| format!("memory {new} vanished after its update"))?;
            let updated = versions::Updated { user, old, new };
            print(json, &updated, versions::render_updated)
        }
        Command::History {
            store,
            user,
            id,
            json,
        } => {
            let id = forget::memory_id(&id)?;
            let handle = store.open_read_only()?;
            let all = handle.history(&user, id)?;
            handle.close()?;
            let history = versions::History {
                user,
                id,
                versions: all,
            };
            print(json, &history, versions::render_history)
        }
        Command::Messages {
            store,
            user,
            session,
            json,
        } => {
            let handle = store.open_read_only()?;
            let stored = handle.messages(&user, &session)?;
            handle.close()?;
            let listed = messages::Session {
                user,
                session,
                messages: stored,
            };
            print(json, &listed, messages::render)
        }
        Command::Profile { store, user, json } => {
            let handle = store.open_read_only()?;
            let p = handle.profile(&user)?;
            handle.close()?;
            print(json, &profile::UserProfile::new(&user, p), profile::render)
        }
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
            store,
            format,
            file,
            limit,
            models,
            json,
        } => {
            let options = models.options()?;
            let data = load(format, &file, limit)?;
            let handle = store.open(options)?;
            let s = ingest::run(&handle, &data, is_tty())?;
            handle.close()?;
            print(json, &s, ingest::render)
        }
        Command::Query {
            store,
            tenant: t,
            k,
            embed,
            json,
            question,
        } => {
            let handle = store.open_read_only_with(&embed)?;
            let r = retrieve::query(
                &handle,
                &tenant(&t)?,
                &question,
                None,
                retrieve::Ask::top(usize::from(k)),
            )?;
            handle.close()?;
            print(json, &r, |r| {
                let mut s = String::new();
                for (i, f) in r.facts.iter().enumerate() {
                    s.push_str(&format!(
                        "{:>3}. [{:.3}] {} (memory {}, {})\n",
                        i + 1,
                        f.hit.score,
                        f.hit.text,
                        f.hit.id,
                        records::sources(&f.hit.sources)
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
            latest_only,
            no_trees,
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
            let settings = eval::Settings {
                k: usize::from(k),
                session_k: usize::from(session_k),
                latest_only,
                trees: !no_trees,
            };
            let r = eval::run(&handle, &data, &settings)?;
            handle.close()?;
            print(json, &r, eval::render)
        }
        Command::Stats { store, json } => {
            let handle = store.open_read_only()?;
            let s = stats::collect(&handle)?;
            handle.close()?;
            print(json, &s, stats::render)
        }
        Command::Verify { store, json } => {
            let r = verify::run(&store)?;
            print(json, &r, verify::render)?;
            if !r.store.is_clean() {
                anyhow::bail!(
                    "{} is damaged: {} quarantined segment files, {} lost WAL segments, {} WAL segment files set aside",
                    store.db,
                    r.store.quarantined.len(),
                    r.store.wal_missing.len(),
                    r.store.wal_quarantined.len()
                );
            }
            Ok(())
        }
        Command::Repair {
            store,
            salvage,
            json,
        } => {
            let mut options = store.engine_options()?;
            if salvage {
                options.recovery_mode = memforest_engine::RecoveryMode::SkipAnyCorrupted;
            }
            let r = memforest_engine::Db::repair(store.local_dir()?, options)?;
            print(json, &r, repair_text)
        }
        Command::Forget {
            store,
            user,
            session,
            message,
            memory,
            all,
            json,
        } => {
            let target = match (session, message, memory, all) {
                (_, _, _, true) => Target::User,
                (Some(session), Some(id), _, _) => Target::Message { session, id },
                (Some(s), None, _, _) => Target::Session(s),
                (_, _, Some(m), _) => Target::Memory(forget::memory_id(&m)?),
                _ => anyhow::bail!(
                    "forget needs one of --session (with --message for one message), --memory or --all"
                ),
            };
            tenant(&user)?;
            let handle = store.open_existing()?;
            let result = forget::run(&handle, &user, &target);
            handle.close()?;
            print(json, &result?, forget::render)
        }
        Command::Compact { store, purge, json } => {
            let handle = store.open_existing()?;
            let (report, mut text) = if purge {
                let r = handle.purge()?;
                let text = format!(
                    "purged: {} files ({} bytes) before, {} files ({} bytes) after; {} WAL \
                     segments removed\n",
                    r.files_before,
                    r.bytes_before,
                    r.files_after,
                    r.bytes_after,
                    r.wal_segments_removed
                );
                let report = serde_json::json!({
                    "purged": true,
                    "files_before": r.files_before,
                    "bytes_before": r.bytes_before,
                    "files_after": r.files_after,
                    "bytes_after": r.bytes_after,
                    "wal_segments_removed": r.wal_segments_removed,
                });
                (report, text)
            } else {
                handle.db().compact_all()?;
                let s = stats::collect(&handle)?;
                let text = format!("compacted\n{}", stats::render(&s));
                (serde_json::to_value(s)?, text)
            };
            // One-shot writers exit before the automatic collection's first run: the
            // maintenance command collects the object store's garbage itself.
            let report = if store.is_remote() {
                let policy = memforest_engine::remote_gc::RemoteGc::default().policy;
                let gc = handle.db().collect_remote_garbage(&policy)?;
                text.push_str(&format!(
                    "object store garbage: {} manifests and {} segment files deleted\n",
                    gc.manifests.len(),
                    gc.segments.len()
                ));
                let mut report = report;
                report["remote_gc"] = serde_json::json!({
                    "manifests_deleted": gc.manifests.len(),
                    "segments_deleted": gc.segments.len(),
                });
                report
            } else {
                report
            };
            handle.close()?;
            print(json, &report, |_| text)
        }
        Command::Serve {
            store,
            serve,
            models,
        } => {
            serve::init_logs();
            let config = serve.config(&store)?;
            // Bound first: a refused address must not leave a new store directory.
            let listener = memforest_server::listen(&config).map_err(serve::served)?;
            let memory = serve.role.open(&store, &models)?;
            Ok(serve::serve(listener, memory, config)?)
        }
        Command::Mcp {
            store,
            user,
            role,
            models,
        } => {
            serve::init_logs();
            let memory = role.open(&store, &models)?;
            Ok(serve::mcp(memory, &user, role.refresh(&store))?)
        }
        Command::Keys {
            action:
                KeysAction::Add {
                    file,
                    name,
                    tenants,
                },
        } => {
            let key = serve::add_key(&file, &name, &tenants)?;
            println!("{key}");
            eprintln!(
                "added key {name:?} to {}; the key above is shown only now",
                file.display()
            );
            Ok(())
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

/// `e` and its causes, each cause left out when the message before already says it (most
/// errors here print their source in their own message).
fn message(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !out.contains(&cause) {
            out.push_str(": ");
            out.push_str(&cause);
        }
    }
    out
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", message(&e));
            match e.chain().find_map(memforest_cli::error::repair_hint) {
                Some(RepairHint::Salvage) => eprintln!(
                    "hint: `memforest repair --salvage --db DIR` keeps every write that \
                     reads back, reports what is lost and sets the damaged WAL segment aside \
                     (docs/durability.md, Repair)"
                ),
                Some(RepairHint::Rebuild) => eprintln!(
                    "hint: `memforest verify --db DIR` lists the damage; `memforest repair \
                     --db DIR` rebuilds the store from the files that read back and the WAL, \
                     and sets a segment file that does not read back whole aside (kept as \
                     .quarantine, its writes no longer read; docs/durability.md, Repair)"
                ),
                _ => {}
            }
            ExitCode::FAILURE
        }
    }
}
