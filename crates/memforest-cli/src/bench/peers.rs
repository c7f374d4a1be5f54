//! `memforest bench peers`: MemForest's side of the peer benchmark against Mem0
//! (`benches/peers/`): `Memory::add` in process, one exchange (a user message and the
//! reply) per call as an agent adds them, with the OpenAI-compatible extractor, summarizer
//! and embedder of `memforest-llm` pointed at one server (the benchmark's mock, or any
//! model server). The exchanges come from a JSONL file that `benches/peers/exchanges.py`
//! writes and the Mem0 driver reads too, so both systems add the same exchanges in the
//! same order.
//!
//! Measured: the latency of each `add` (p50 / p99 overall and per bucket of exchanges
//! already added: 1-50, 51-100, 101-200, 201-400, ..., doubling), the wall time until every
//! add has returned and until every extraction and summary is done
//! (`Memory::flush_summaries`), exchanges per second over the latter, and the model calls
//! per exchange by kind (`Memory::memory_stats`). With `--callers T`, `T` threads add at
//! once, user `u` (in order of first exchange) on thread `u % T`; with `--wait`, each
//! `add` waits for its own extraction (`AddOptions::wait`).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use memforest::memory::stats::CallKind;
use memforest::{AddOptions, Memory, Message, Options};
use memforest_llm::{LlmConfig, OpenAiEmbedder, OpenAiExtractor, OpenAiSummarizer};
use serde::{Deserialize, Serialize};

use crate::bench::measure::{nanos, scratch_dir, Percentiles};

/// Settings of `bench peers`.
#[derive(Debug, Clone, clap::Args)]
pub struct PeersArgs {
    /// The exchanges, one JSON object a line (`benches/peers/exchanges.py`):
    /// `{"user", "session", "messages": [Message, ...]}`.
    #[arg(long)]
    pub exchanges: PathBuf,
    /// Exchanges added: the first N of the file (0: all).
    #[arg(long, default_value_t = 0)]
    pub limit: usize,
    /// Base URL of the OpenAI-compatible server, with `/v1`.
    #[arg(long)]
    pub llm_url: String,
    /// Chat model name sent to the server.
    #[arg(long, default_value = "mock-chat")]
    pub llm_model: String,
    /// Embedding model name sent to the server.
    #[arg(long, default_value = "mock-embed")]
    pub embed_model: String,
    /// Embedding dimensions asked for.
    #[arg(long, default_value_t = 256)]
    pub embed_dimensions: usize,
    /// Threads adding at once, each with its own users (an agent per user).
    #[arg(long, default_value_t = 1)]
    pub callers: usize,
    /// Each `add` waits for its extraction (`AddOptions::wait`).
    #[arg(long)]
    pub wait: bool,
    /// Extraction and summary workers (each pool): the model calls MemForest keeps in
    /// flight.
    #[arg(long, default_value_t = 8)]
    pub pool: usize,
    /// Cells of one user extracted in one background call (`MemoryOptions::extract_batch`).
    #[arg(long, default_value_t = 8)]
    pub extract_batch: usize,
    /// Dirty nodes of one user summarized in one call (`MemoryOptions::summary_batch`).
    #[arg(long, default_value_t = 8)]
    pub summary_batch: usize,
    /// Directory for the store (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// One line of the exchanges file.
#[derive(Debug, Clone, Deserialize)]
pub struct Exchange {
    /// The user whose memory it goes to.
    pub user: String,
    /// The session it belongs to.
    pub session: String,
    /// The messages, in order.
    pub messages: Vec<Message>,
}

/// Add latency of the exchanges numbered `first..=last` (1-based, in file order).
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    /// First exchange of the bucket.
    pub first: usize,
    /// Last exchange of the bucket.
    pub last: usize,
    /// Median add latency, milliseconds.
    pub p50_ms: f64,
    /// 99th-percentile add latency, milliseconds.
    pub p99_ms: f64,
}

/// The `bench peers` report (the same fields as the Mem0 driver's).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `"memforest"`.
    pub system: String,
    /// Exchanges added.
    pub exchanges: usize,
    /// Adding threads.
    pub callers: usize,
    /// Whether each add waited for its extraction.
    pub wait: bool,
    /// Seconds until the last add returned.
    pub add_wall_s: f64,
    /// Seconds until every extraction and summary was done.
    pub wall_s: f64,
    /// `exchanges / wall_s`.
    pub exchanges_per_s: f64,
    /// Median add latency over all exchanges, milliseconds.
    pub add_p50_ms: f64,
    /// 99th-percentile add latency over all exchanges, milliseconds.
    pub add_p99_ms: f64,
    /// Add latency by exchanges already added.
    pub buckets: Vec<Bucket>,
    /// Extraction calls per exchange (successful; `memory_stats().usage`).
    pub extraction_calls_per_exchange: f64,
    /// Summary calls per exchange.
    pub summary_calls_per_exchange: f64,
    /// Embedding calls per exchange.
    pub embedding_calls_per_exchange: f64,
    /// Failed model calls (each retried).
    pub model_errors: u64,
    /// Cells given up as never extractable.
    pub failed_cells: u64,
    /// Nodes given the extractive summary after failed summary calls.
    pub summary_fallbacks: u64,
    /// Adds that waited for a backlog.
    pub stalls: u64,
}

/// The first `limit` exchanges (all when 0) of the JSONL file at `path`.
///
/// # Errors
/// Reading the file; a line that is not an exchange (naming the line).
pub fn load(path: &Path, limit: usize) -> anyhow::Result<Vec<Exchange>> {
    let file = std::fs::File::open(path).with_context(|| format!("open {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        if limit > 0 && out.len() == limit {
            break;
        }
        let line = line.with_context(|| format!("read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let exchange = serde_json::from_str(&line)
            .with_context(|| format!("{} line {}", path.display(), n + 1))?;
        out.push(exchange);
    }
    Ok(out)
}

/// The bucket bounds for `n` exchanges: 1-50, 51-100, 101-200, ... (doubling), the last
/// one ending at `n`.
pub fn bucket_bounds(n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut first, mut last) = (1, 50);
    while first <= n {
        out.push((first, last.min(n)));
        first = last + 1;
        last *= 2;
    }
    out
}

/// Latencies (nanoseconds, indexed by exchange) per bucket.
fn buckets(latencies: &[u64]) -> Vec<Bucket> {
    bucket_bounds(latencies.len())
        .into_iter()
        .map(|(first, last)| {
            let mut slice = latencies
                .get(first - 1..last)
                .map(<[u64]>::to_vec)
                .unwrap_or_default();
            let p = Percentiles::of(&mut slice);
            Bucket {
                first,
                last,
                p50_ms: p.p50_us / 1e3,
                p99_ms: p.p99_us / 1e3,
            }
        })
        .collect()
}

/// The store's options: the three OpenAI-compatible clients on `args.llm_url`.
fn options(args: &PeersArgs) -> anyhow::Result<Options> {
    let chat = LlmConfig::new(args.llm_url.clone(), args.llm_model.clone());
    let embed = LlmConfig::new(args.llm_url.clone(), args.embed_model.clone());
    let mut o = Options::default();
    let m = &mut o.memory;
    m.extract_pool = args.pool.max(1);
    m.summary_pool = args.pool.max(1);
    m.extract_batch = args.extract_batch.max(1);
    m.summary_batch = args.summary_batch.max(1);
    m.extractor = Arc::new(OpenAiExtractor::new(chat.clone())?);
    m.summarizer = Arc::new(OpenAiSummarizer::new(chat)?);
    m.embedder = Some(Arc::new(
        OpenAiEmbedder::new(embed)?.with_dimensions(args.embed_dimensions),
    ));
    Ok(o)
}

/// Which caller adds each exchange: the users in order of their first exchange, user `u`
/// to caller `u % callers` (each user's exchanges in order, on one thread).
pub fn caller_of(exchanges: &[Exchange], callers: usize) -> Vec<usize> {
    let mut users: Vec<&str> = Vec::new();
    exchanges
        .iter()
        .map(|x| {
            let u = users.iter().position(|u| *u == x.user).unwrap_or_else(|| {
                users.push(&x.user);
                users.len() - 1
            });
            u % callers.max(1)
        })
        .collect()
}

/// Adds `exchanges` from `callers` threads ([`caller_of`]); the latency of each add, by
/// exchange index.
fn add_all(
    memory: &Memory,
    exchanges: &[Exchange],
    callers: usize,
    wait: bool,
) -> anyhow::Result<Vec<u64>> {
    let owner = caller_of(exchanges, callers);
    let add = AddOptions {
        wait,
        ..AddOptions::default()
    };
    let timed: Vec<Vec<(usize, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..callers.max(1))
            .map(|me| {
                let (owner, add) = (&owner, &add);
                s.spawn(move || -> anyhow::Result<Vec<(usize, u64)>> {
                    let mut mine = Vec::new();
                    for (i, x) in exchanges.iter().enumerate() {
                        if owner.get(i) != Some(&me) {
                            continue;
                        }
                        let t = Instant::now();
                        memory.add_with(&x.user, &x.session, &x.messages, add)?;
                        mine.push((i, nanos(t.elapsed())));
                    }
                    Ok(mine)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow::anyhow!("an adding thread panicked"))?
            })
            .collect::<anyhow::Result<_>>()
    })?;
    let mut latencies = vec![0; exchanges.len()];
    for (i, ns) in timed.into_iter().flatten() {
        if let Some(slot) = latencies.get_mut(i) {
            *slot = ns;
        }
    }
    Ok(latencies)
}

/// Runs the workload.
///
/// # Errors
/// The exchanges file; building the clients; an `add` or the flush failing.
pub fn run(args: &PeersArgs) -> anyhow::Result<Report> {
    let exchanges = load(&args.exchanges, args.limit)?;
    let scratch = scratch_dir(args.dir.as_deref())?;
    let memory = Memory::open_with(scratch.path().join("store"), options(args)?)?;
    let start = Instant::now();
    let mut latencies = add_all(&memory, &exchanges, args.callers, args.wait)?;
    let add_wall = start.elapsed();
    memory.flush_summaries()?;
    let wall = start.elapsed();
    let stats = memory.memory_stats();
    memory.close()?;
    let n = exchanges.len();
    let per = |kind: CallKind| {
        let calls: u64 = stats
            .usage
            .values()
            .filter_map(|k| k.get(&kind))
            .map(|u| u.calls)
            .sum();
        calls as f64 / n.max(1) as f64
    };
    let errors = stats
        .usage
        .values()
        .flat_map(|k| k.values())
        .map(|u| u.errors)
        .sum();
    let buckets = buckets(&latencies);
    let overall = Percentiles::of(&mut latencies);
    Ok(Report {
        system: "memforest".into(),
        exchanges: n,
        callers: args.callers.max(1),
        wait: args.wait,
        add_wall_s: add_wall.as_secs_f64(),
        wall_s: wall.as_secs_f64(),
        exchanges_per_s: n as f64 / wall.as_secs_f64().max(1e-9),
        add_p50_ms: overall.p50_us / 1e3,
        add_p99_ms: overall.p99_us / 1e3,
        buckets,
        extraction_calls_per_exchange: per(CallKind::Extraction),
        summary_calls_per_exchange: per(CallKind::Summary),
        embedding_calls_per_exchange: per(CallKind::Embedding),
        model_errors: errors,
        failed_cells: stats.failed_cells,
        summary_fallbacks: stats.summary_fallbacks,
        stalls: stats.stalls,
    })
}

/// The report as text.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "peers (memforest): {} exchanges, {} caller(s), wait {}: adds done {:.2} s, all done {:.2} s, {:.1} exchanges/s\n\
         add p50 {:.2} ms, p99 {:.2} ms; calls per exchange: extraction {:.2}, summary {:.2}, embedding {:.2}; \
         errors {}, failed cells {}, summary fallbacks {}, stalls {}\n{:>6} {:>6} {:>9} {:>9}\n",
        r.exchanges,
        r.callers,
        r.wait,
        r.add_wall_s,
        r.wall_s,
        r.exchanges_per_s,
        r.add_p50_ms,
        r.add_p99_ms,
        r.extraction_calls_per_exchange,
        r.summary_calls_per_exchange,
        r.embedding_calls_per_exchange,
        r.model_errors,
        r.failed_cells,
        r.summary_fallbacks,
        r.stalls,
        "first",
        "last",
        "p50 ms",
        "p99 ms"
    );
    for b in &r.buckets {
        s.push_str(&format!(
            "{:>6} {:>6} {:>9.2} {:>9.2}\n",
            b.first, b.last, b.p50_ms, b.p99_ms
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_double_from_fifty_and_end_at_n() {
        assert_eq!(bucket_bounds(0), vec![]);
        assert_eq!(bucket_bounds(30), vec![(1, 30)]);
        assert_eq!(
            bucket_bounds(250),
            vec![(1, 50), (51, 100), (101, 200), (201, 250)]
        );
    }

    #[test]
    fn each_user_is_added_by_one_caller() {
        let x = |user: &str| Exchange {
            user: user.into(),
            session: "s".into(),
            messages: Vec::new(),
        };
        let xs = [x("a"), x("b"), x("c"), x("a"), x("c"), x("b")];
        assert_eq!(caller_of(&xs, 2), vec![0, 1, 0, 0, 0, 1]);
        assert_eq!(caller_of(&xs, 1), vec![0; 6]);
    }

    #[test]
    fn bucket_percentiles_come_from_their_own_exchanges() {
        let mut lat = vec![1_000_000u64; 50];
        lat.extend(vec![3_000_000u64; 50]);
        let b = buckets(&lat);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].p50_ms, b[1].p50_ms), (1.0, 3.0));
    }
}
