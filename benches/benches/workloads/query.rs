//! The synthetic query workload of the `query` criterion bench (included there with
//! `#[path]`): facts are sentences over a Zipf(1)
//! vocabulary of 20 000 letter-only words, one fact per user turn, 100 turns per session,
//! each fact naming one of 300 people (entity trees) and two topic words (scenes);
//! queries take 4 words of rank >= 100 (the most frequent ranks behave like stop words).
//! Everything is a deterministic function of the fact count, so a store loaded once (under
//! `$CARGO_TARGET_DIR/query-store-N`, default `target/`; a `query-store-N.done` marker says
//! it is complete) is reused by later runs with the same flat-BM25 peer and queries.
//! `$SEGMENT_RESIDENT_MIB` sets `Options::segment_resident_bytes` (MiB).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use memforest::memory::session::{Role, Session, Turn};
use memforest::memory::MemoryOptions;
use memforest::recall::Bm25Index;
use memforest::{Memory, Options};
use memforest_benches::synth::{word, SynthExtractor, Zipf};
use memforest_engine::TenantId;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const VOCAB: usize = 20_000;
const PEOPLE: usize = 300;
const TURNS_PER_SESSION: usize = 100;
const DAY: i64 = 86_400_000_000;
const T0: i64 = 1_677_628_800_000_000;

/// The workload of `n` facts: its sessions (to ingest), fact texts (for the flat peer,
/// fact `i` is document `i`) and the timed queries.
pub struct Workload {
    /// Sessions of 100 turns (the last one shorter), in time order.
    pub sessions: Vec<Session>,
    /// Every fact text, in ingest order.
    pub docs: Vec<String>,
    /// Query texts.
    pub queries: Vec<String>,
}

/// The workload of `n` facts and `queries` queries.
pub fn workload(n: usize, queries: usize) -> Workload {
    let zipf = Zipf::new(VOCAB);
    let mut rng = StdRng::seed_from_u64(n as u64);
    let mut docs = Vec::with_capacity(n);
    let mut sessions = Vec::new();
    let mut s = 0i64;
    while docs.len() < n {
        let count = TURNS_PER_SESSION.min(n - docs.len());
        let turns = (0..count)
            .map(|i| {
                let len = rng.gen_range(8..14);
                let words: Vec<String> = (0..len).map(|_| word(zipf.sample(&mut rng))).collect();
                let person = format!("Person {}", word(rng.gen_range(0..PEOPLE)));
                let topics = format!("{} {}", words[0], words[1]);
                // A unique serial keeps every fact distinct (no dedup merges).
                let text = format!("{} {}", words.join(" "), word(VOCAB + docs.len()));
                docs.push(text.clone());
                Turn {
                    time: Some(T0 + s * DAY + i as i64 * 60_000_000),
                    ..Turn::new(Role::User, "Ann", format!("{text} | {person} | {topics}"))
                }
            })
            .collect();
        sessions.push(Session {
            id: format!("s{s}"),
            start: T0 + s * DAY,
            turns,
        });
        s += 1;
    }
    let queries = (0..queries)
        .map(|_| {
            (0..4)
                .map(|_| word(100 + zipf.sample(&mut rng) % (VOCAB - 100)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    Workload {
        sessions,
        docs,
        queries,
    }
}

/// A loaded store with its workload and the flat peer over the same facts.
pub struct Store {
    /// The store.
    pub db: Memory,
    /// Its one tenant.
    pub tenant: TenantId,
    /// The workload it holds.
    pub workload: Workload,
    /// Flat in-memory BM25 over every fact.
    pub flat: Bm25Index,
}

/// `Options::segment_resident_bytes` from `$SEGMENT_RESIDENT_MIB` (MiB; default: the
/// engine's default, 512 MiB). A budget smaller than the store makes queries re-fault the
/// pages it released.
fn resident_bytes() -> u64 {
    std::env::var("SEGMENT_RESIDENT_MIB").map_or(
        memforest_engine::Options::default().segment_resident_bytes,
        |v| {
            let mib: u64 = v.parse().expect("SEGMENT_RESIDENT_MIB: a number");
            mib.checked_mul(1 << 20)
                .expect("SEGMENT_RESIDENT_MIB: at most 2^44")
        },
    )
}

/// Opens the store of `n` facts, loading it first (ingest, every summary computed, memtable
/// flushed) unless a complete one exists.
pub fn store(n: usize, queries: usize) -> Store {
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let dir = PathBuf::from(target).join(format!("query-store-{n}"));
    let done = dir.with_extension("done");
    let workload = workload(n, queries);
    let memory = MemoryOptions {
        extractor: Arc::new(SynthExtractor),
        ..MemoryOptions::default()
    };
    let started = Instant::now();
    if !done.exists() && dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let db = Memory::open_with(
        &dir,
        Options {
            memory,
            engine: memforest_engine::Options {
                segment_resident_bytes: resident_bytes(),
                ..memforest_engine::Options::default()
            },
        },
    )
    .unwrap();
    let tenant = TenantId::new("bench").unwrap();
    if done.exists() {
        eprintln!(
            "reusing {} (opened in {:?})",
            dir.display(),
            started.elapsed()
        );
    } else {
        let mut facts = 0;
        for s in &workload.sessions {
            db.ingest_session(&tenant, s).unwrap();
            facts += s.turns.len();
            if facts % 100_000 == 0 {
                let secs = started.elapsed().as_secs_f64();
                eprintln!(
                    "{facts} facts in {secs:.0} s ({:.0}/s)",
                    facts as f64 / secs
                );
            }
        }
        db.flush_summaries().unwrap();
        db.db().flush().unwrap();
        std::fs::write(&done, b"").unwrap();
        eprintln!(
            "{n} facts ingested and summarized in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    let flat = Bm25Index::build(
        workload
            .docs
            .iter()
            .enumerate()
            .map(|(i, d)| (i as u64, d.as_str())),
    );
    Store {
        db,
        tenant,
        workload,
        flat,
    }
}
