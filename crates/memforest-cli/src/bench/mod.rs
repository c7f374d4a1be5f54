//! `memforest bench`: the benchmark harness. Every workload prints a text table or, with
//! `--json`, one JSON object; each compares MemForest with a peer measured in the same run.
//! See `docs/benchmarks.md` for the commands, the current figures and what each number
//! means.
//!
//! - [`storage`]: db_bench workloads against fjall, redb and SQLite.
//! - [`ingest`]: the memory write path at 10^4..10^7 synthetic facts, one child process per
//!   size (peak RSS per size).
//! - [`llm`]: the LLM-bound refresh (batched dirty sets vs eager vs global rewrite) over
//!   real MemTrees with a sleeping summarizer pool.
//! - [`peers`]: MemForest's side of the write-path benchmark against Mem0 on one
//!   OpenAI-compatible server (`benches/peers/`).
//! - [`query`]: lexical query latency vs a flat BM25 over the same facts.
//! - [`plot`]: the PNG of per-insert cost and calls per fact against N.
#![deny(clippy::indexing_slicing)]

pub mod ingest;
pub mod llm;
pub mod measure;
pub mod peers;
pub mod plot;
pub mod query;
pub mod residency;
pub mod serve;
pub mod storage;
pub mod synth;

use serde::Serialize;

/// The `bench` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// db_bench workloads vs fjall, redb and SQLite (micros/op, ops/s, MB/s, p50/p99/p99.9,
    /// write and space amplification, memforest/peer ratios).
    Storage {
        #[command(flatten)]
        args: storage::StorageArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The memory write path (`Memory::ingest_session`) on synthetic multi-tenant facts.
    Ingest {
        #[command(flatten)]
        args: ingest::IngestArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// LLM-bound refresh: batched dirty sets vs eager path refresh vs global rewrite.
    Llm {
        #[command(flatten)]
        args: llm::LlmArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// MemForest's side of the write-path benchmark against Mem0 (`benches/peers/run.sh`):
    /// one exchange per `Memory::add` with the OpenAI-compatible clients on one server.
    Peers {
        #[command(flatten)]
        args: peers::PeersArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Lexical query latency vs a flat BM25 over the same facts.
    Query {
        #[command(flatten)]
        args: query::QueryArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A bounded load test of `memforest serve` on loopback: clients mixing adds and
    /// searches for a fixed time, then a graceful restart that must keep every
    /// acknowledged add (throughput, p50/p99 per route, errors).
    Serve {
        #[command(flatten)]
        args: serve::ServeBenchArgs,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Every workload at a tiny size (CI smoke) or the defaults.
    All {
        /// Tiny sizes that finish in seconds (what CI runs).
        #[arg(long)]
        smoke: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Draws docs/benchmarks-scale.png from saved `--json` reports of ingest and llm.
    Plot {
        #[command(flatten)]
        args: plot::PlotArgs,
    },
}

/// The report of `bench all`.
#[derive(Debug, Serialize)]
pub struct AllReport {
    /// `bench storage`.
    pub storage: storage::Report,
    /// `bench ingest`.
    pub ingest: ingest::Report,
    /// `bench llm`.
    pub llm: llm::Report,
    /// `bench query`.
    pub query: query::Report,
}

/// Runs one `bench` subcommand.
///
/// # Errors
/// The workload's first error.
pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Storage { args, json } => {
            crate::print(json, &storage::run(&args)?, storage::render)
        }
        BenchCommand::Ingest { args, json } => {
            crate::print(json, &ingest::run(&args)?, ingest::render)
        }
        BenchCommand::Llm { args, json } => crate::print(json, &llm::run(&args)?, llm::render),
        BenchCommand::Peers { args, json } => {
            crate::print(json, &peers::run(&args)?, peers::render)
        }
        BenchCommand::Query { args, json } => {
            crate::print(json, &query::run(&args)?, query::render)
        }
        BenchCommand::Serve { args, json } => {
            crate::print(json, &serve::run(&args)?, serve::render)
        }
        BenchCommand::All { smoke, json } => {
            let r = all(smoke)?;
            crate::print(json, &r, |r| {
                [
                    storage::render(&r.storage),
                    ingest::render(&r.ingest),
                    llm::render(&r.llm),
                    query::render(&r.query),
                ]
                .join("\n")
            })
        }
        BenchCommand::Plot { args } => plot::run(&args),
    }
}

/// `A` as parsed from `flags` (clap's defaults for everything else).
fn parse_args<A: clap::Args>(flags: &[&str]) -> anyhow::Result<A> {
    #[derive(clap::Parser)]
    struct Wrap<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    let argv = std::iter::once("bench").chain(flags.iter().copied());
    Ok(<Wrap<A> as clap::Parser>::try_parse_from(argv)?.args)
}

/// Every workload with its default sizes, or with `smoke`'s tiny ones (seconds in all).
fn all(smoke: bool) -> anyhow::Result<AllReport> {
    let pick = |tiny: &'static [&'static str]| if smoke { tiny } else { &[] };
    Ok(AllReport {
        storage: storage::run(&parse_args(pick(&["--num", "2000", "--sync-num", "100"]))?)?,
        ingest: ingest::run(&parse_args(pick(&[
            "--sizes",
            "2000",
            "--tenants",
            "10",
            "--warmup",
            "200",
        ]))?)?,
        llm: llm::run(&parse_args(pick(&[
            "--facts",
            "256",
            "--k",
            "4,16",
            "--batch",
            "16,64",
            "--latency-ms",
            "1",
        ]))?)?,
        query: query::run(&parse_args(pick(&["--sizes", "500", "--queries", "50"]))?)?,
    })
}
