//! `memforest bench serve`: a bounded load test of `memforest serve` on loopback. N
//! clients (threads with their own HTTP connection) alternate adds and searches for a
//! fixed time against a server over a fresh store; then the server shuts down gracefully
//! and the store is reopened, every acknowledged add counted back and the store verified.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use memforest::Memory;
use memforest_server::{Limits, ServeConfig, Server};
use serde::Serialize;

use crate::bench::measure::{nanos, scratch_dir, Percentiles};

/// Users the clients' data is spread over (several clients write to each).
const USERS: usize = 8;

/// `memforest bench serve`'s settings.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeBenchArgs {
    /// Concurrent clients.
    #[arg(long, default_value_t = 32)]
    pub clients: usize,
    /// How long the clients run, seconds.
    #[arg(long, default_value_t = 60)]
    pub seconds: u64,
    /// Directory for the scratch store (default: the system temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// One route's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RouteRow {
    /// `add` or `search`.
    pub route: &'static str,
    /// Requests answered 200.
    pub ok: u64,
    /// Requests answered otherwise (or not at all).
    pub errors: u64,
    /// `ok` per second of the run.
    pub per_second: f64,
    /// Latency percentiles of the answered requests.
    pub latency: Percentiles,
}

/// What the load test measured and found.
#[derive(Debug, Clone, Serialize)]
pub struct ServeBenchReport {
    /// Concurrent clients.
    pub clients: usize,
    /// Seconds the clients ran.
    pub seconds: f64,
    /// Per route.
    pub routes: Vec<RouteRow>,
    /// Acknowledged adds found in the reopened store (all of them, or the run fails).
    pub adds_found_after_restart: u64,
    /// Tree pages and segment files checked by `Memory::verify` after the restart.
    pub verified_trees: u64,
}

#[derive(Default)]
struct ClientLog {
    add: Vec<u64>,
    search: Vec<u64>,
    add_errors: u64,
    search_errors: u64,
}

fn client(addr: SocketAddr, c: usize, until: Instant) -> ClientLog {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let user = format!("u{}", c % USERS);
    let add_url = format!("http://{addr}/v1/users/{user}/sessions/c{c}/messages");
    let search_url = format!("http://{addr}/v1/users/{user}/search");
    let mut log = ClientLog::default();
    let mut i = 0u64;
    while Instant::now() < until {
        let (url, body, is_add) = if i.is_multiple_of(2) {
            let text = format!(
                "Client {c} note {i}: the review with team {} moved to room {} on floor {}.",
                i % 13,
                i % 97,
                i % 7
            );
            let body = serde_json::json!({"messages": [{"role": "user", "text": text, "id": format!("m{i}")}]});
            (&add_url, body, true)
        } else {
            let body = serde_json::json!({"query": format!("where is the review with team {}", i % 13), "k": 5});
            (&search_url, body, false)
        };
        let started = Instant::now();
        let status = agent
            .post(url)
            .header("content-type", "application/json")
            .send(body.to_string())
            .map_or(0, |mut r| {
                let _ = r.body_mut().read_to_vec();
                r.status().as_u16()
            });
        let took = nanos(started.elapsed());
        match (is_add, status == 200) {
            (true, true) => log.add.push(took),
            (true, false) => log.add_errors += 1,
            (false, true) => log.search.push(took),
            (false, false) => log.search_errors += 1,
        }
        i += 1;
    }
    log
}

/// Runs the load test.
///
/// # Errors
/// The store, the server or a client thread failing; an acknowledged add missing after
/// the restart; `Memory::verify`'s findings.
pub fn run(args: &ServeBenchArgs) -> anyhow::Result<ServeBenchReport> {
    let scratch = scratch_dir(args.dir.as_deref())?;
    let db = scratch.path().join("db");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let config = ServeConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        keys: None,
        limits: Limits {
            max_in_flight_per_key: args.clients.max(1),
            ..Limits::default()
        },
        refresh: None,
    };
    let server = rt.block_on(Server::bind(Memory::open(&db)?, config))?;
    let addr = server.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = rt.spawn(server.run(async {
        let _ = stopped.await;
    }));

    let started = Instant::now();
    let until = started + Duration::from_secs(args.seconds);
    let clients: Vec<_> = (0..args.clients)
        .map(|c| std::thread::spawn(move || client(addr, c, until)))
        .collect();
    let mut logs = Vec::with_capacity(clients.len());
    for h in clients {
        logs.push(
            h.join()
                .map_err(|_| anyhow::anyhow!("a client thread panicked"))?,
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    let _ = stop.send(());
    rt.block_on(serving).context("the server task")??;

    let memory = Memory::open(&db)?;
    let mut found = 0u64;
    for (c, log) in logs.iter().enumerate() {
        let stored = memory.messages(&format!("u{}", c % USERS), &format!("c{c}"))?;
        anyhow::ensure!(
            stored.len() == log.add.len(),
            "client {c}: {} adds acknowledged, {} stored after the restart",
            log.add.len(),
            stored.len()
        );
        found += stored.len() as u64;
    }
    let verified = memory.verify()?;
    memory.close()?;

    let row = |route, nanos: &mut Vec<u64>, errors| RouteRow {
        route,
        ok: nanos.len() as u64,
        errors,
        per_second: nanos.len() as f64 / seconds,
        latency: Percentiles::of(nanos),
    };
    let mut adds: Vec<u64> = logs.iter().flat_map(|l| l.add.iter().copied()).collect();
    let mut searches: Vec<u64> = logs.iter().flat_map(|l| l.search.iter().copied()).collect();
    Ok(ServeBenchReport {
        clients: args.clients,
        seconds,
        routes: vec![
            row("add", &mut adds, logs.iter().map(|l| l.add_errors).sum()),
            row(
                "search",
                &mut searches,
                logs.iter().map(|l| l.search_errors).sum(),
            ),
        ],
        adds_found_after_restart: found,
        verified_trees: verified.trees,
    })
}

/// The text table.
#[must_use]
pub fn render(r: &ServeBenchReport) -> String {
    let mut s = format!(
        "memforest serve: {} clients for {:.1} s on loopback\n{:<8} {:>9} {:>9} {:>7} {:>10} {:>10}\n",
        r.clients, r.seconds, "route", "ok", "req/s", "errors", "p50 ms", "p99 ms"
    );
    for row in &r.routes {
        s.push_str(&format!(
            "{:<8} {:>9} {:>9.1} {:>7} {:>10.2} {:>10.2}\n",
            row.route,
            row.ok,
            row.per_second,
            row.errors,
            row.latency.p50_us / 1e3,
            row.latency.p99_us / 1e3
        ));
    }
    s.push_str(&format!(
        "after a graceful shutdown and reopen: {} acknowledged adds all stored; verify clean ({} trees)\n",
        r.adds_found_after_restart, r.verified_trees
    ));
    s
}
