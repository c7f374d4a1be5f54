//! [`Metrics`]: request counts and latencies per route, rendered with the store's backlog
//! and stall counters as Prometheus text (`GET /metrics`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use memforest::Memory;

/// Upper bounds of the latency histogram's buckets, seconds.
const BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0];

#[derive(Debug, Default)]
struct Latency {
    /// Requests at or under each bucket's bound (not cumulative; summed when rendered).
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum_seconds: f64,
}

#[derive(Debug, Default)]
struct Inner {
    /// (route, method, status) -> requests.
    requests: BTreeMap<(String, String, u16), u64>,
    /// route -> latency.
    latency: BTreeMap<String, Latency>,
}

/// The server's request counters.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
    /// A read replica's failed refreshes.
    refresh_failures: AtomicU64,
}

impl Metrics {
    /// Counts one request to `route` (the matched path pattern) answered with `status`
    /// after `elapsed`.
    pub fn record(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        let mut m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        *m.requests
            .entry((route.to_owned(), method.to_owned(), status))
            .or_insert(0) += 1;
        let l = m.latency.entry(route.to_owned()).or_default();
        let secs = elapsed.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|&b| secs <= b) {
            if let Some(b) = l.buckets.get_mut(i) {
                *b += 1;
            }
        }
        l.count += 1;
        l.sum_seconds += secs;
    }

    /// Counts one failed refresh of a read replica.
    pub fn refresh_failed(&self) {
        self.refresh_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition of the counters and of `memory`'s backlog and stalls.
    #[must_use]
    pub fn render(&self, memory: &Memory) -> String {
        let mut out = String::new();
        {
            let m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            out.push_str("# HELP memforest_http_requests_total HTTP requests answered.\n");
            out.push_str("# TYPE memforest_http_requests_total counter\n");
            for ((route, method, status), n) in &m.requests {
                let _ = writeln!(
                    out,
                    "memforest_http_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {n}"
                );
            }
            out.push_str("# HELP memforest_http_request_seconds Request latency.\n");
            out.push_str("# TYPE memforest_http_request_seconds histogram\n");
            for (route, l) in &m.latency {
                let mut cumulative = 0;
                for (bound, n) in BUCKETS.iter().zip(l.buckets) {
                    cumulative += n;
                    let _ = writeln!(
                        out,
                        "memforest_http_request_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {cumulative}"
                    );
                }
                let _ = writeln!(
                    out,
                    "memforest_http_request_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}\nmemforest_http_request_seconds_sum{{route=\"{route}\"}} {}\nmemforest_http_request_seconds_count{{route=\"{route}\"}} {}",
                    l.count, l.sum_seconds, l.count
                );
            }
        }
        let s = memory.memory_stats();
        let e = memory.db().stats();
        let gauges: [(&str, &str, &str, u64); 8] = [
            (
                "memforest_ingest_pending_cells",
                "gauge",
                "Cells whose extraction has not committed.",
                s.pending_cells,
            ),
            (
                "memforest_summary_dirty_nodes",
                "gauge",
                "Tree nodes waiting for a new summary.",
                s.dirty_by_level.iter().sum(),
            ),
            (
                "memforest_pool_queue_depth",
                "gauge",
                "Jobs queued or running in the extraction and summary pools.",
                s.queue_depth,
            ),
            (
                "memforest_summary_lag_seconds",
                "gauge",
                "How long the oldest dirty mark has waited.",
                s.summary_lag.as_secs(),
            ),
            (
                "memforest_ingest_stalls_total",
                "counter",
                "Adds that waited for the summary backlog.",
                s.stalls,
            ),
            (
                "memforest_write_stalls_total",
                "counter",
                "Engine writes that waited on memtables or level 0.",
                e.stall_memtable_count + e.stall_l0_count,
            ),
            (
                "memforest_immutable_memtables",
                "gauge",
                "Sealed memtables waiting for a flush.",
                e.immutable_memtables as u64,
            ),
            (
                "memforest_replica_refresh_failures_total",
                "counter",
                "Refreshes of a read replica that failed (it kept serving what it had).",
                self.refresh_failures.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, v) in gauges {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        }
        out
    }
}
