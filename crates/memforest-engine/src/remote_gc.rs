//! The writer's automatic garbage collection of its object store ([`Options::remote_gc`]):
//! a thread of its own runs [`crate::remote::collect_garbage`] every interval, off the
//! write path. A failed run is logged and counted, never fatal: the next run tries again,
//! and nothing a live manifest names is ever deleted.
//!
//! [`Options::remote_gc`]: crate::Options::remote_gc

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use memforest_object::Remote;

use crate::error::{Error, Result};
use crate::remote::{collect_garbage, GcPolicy};

/// When and what the automatic collection deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteGc {
    /// Time between two runs (the first runs one interval after the open).
    pub every: Duration,
    /// What a run may delete.
    pub policy: GcPolicy,
}

impl Default for RemoteGc {
    /// Every 5 minutes, with [`GcPolicy::default`].
    fn default() -> Self {
        Self {
            every: Duration::from_secs(300),
            policy: GcPolicy::default(),
        }
    }
}

/// What the automatic collection has done since the open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteGcStats {
    /// Runs that finished.
    pub runs: u64,
    /// Runs that failed (logged; retried at the next interval).
    pub failures: u64,
    /// Objects deleted (manifest and segment objects).
    pub deleted: u64,
}

#[derive(Debug, Default)]
struct Counters {
    runs: AtomicU64,
    failures: AtomicU64,
    deleted: AtomicU64,
}

/// The running collector; dropping it stops its thread (letting a run finish).
#[derive(Debug)]
pub struct Collector {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Collector {
    /// Starts collecting garbage of `remote` under `gc`.
    ///
    /// # Errors
    /// [`Error::Io`] when the thread cannot start.
    pub fn spawn(remote: Arc<Remote>, gc: RemoteGc) -> Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let counters = Arc::new(Counters::default());
        let c = Arc::clone(&counters);
        let thread = std::thread::Builder::new()
            .name("memforest-remote-gc".to_owned())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(gc.every) {
                    run(&remote, &gc.policy, &c);
                }
            })
            .map_err(Error::io("spawn thread", "memforest-remote-gc"))?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
            counters,
        })
    }

    /// The counters so far.
    #[must_use]
    pub fn stats(&self) -> RemoteGcStats {
        RemoteGcStats {
            runs: self.counters.runs.load(Ordering::Relaxed),
            failures: self.counters.failures.load(Ordering::Relaxed),
            deleted: self.counters.deleted.load(Ordering::Relaxed),
        }
    }
}

/// One run, its outcome logged and counted.
fn run(remote: &Remote, policy: &GcPolicy, c: &Counters) {
    match collect_garbage(remote, policy, SystemTime::now()) {
        Ok(report) => {
            let deleted = (report.manifests.len() + report.segments.len()) as u64;
            c.deleted.fetch_add(deleted, Ordering::Relaxed);
            c.runs.fetch_add(1, Ordering::Relaxed);
            if deleted > 0 {
                tracing::info!(%remote, manifests = report.manifests.len(), segments = report.segments.len(), "object-store garbage collected");
            }
        }
        Err(e) => {
            c.failures.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%remote, error = %e, "object-store garbage collection failed; retried at the next interval");
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
