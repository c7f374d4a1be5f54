//! [`Pool`]: a fixed number of worker threads fed by a crossbeam channel; the number of
//! workers is the pool's concurrency limit towards a model endpoint.
//!
//! The queue in front of them is bounded or not, per pool. The extraction pool's holds as
//! many jobs as it has workers, so concurrent ingest calls take turns rather than one
//! session's cells queueing ahead of everyone else's. The summary pool's has no bound: its
//! one caller, the refresh scheduler, submits a level whose inputs it already holds and
//! then waits for the results, so a bound would limit no memory and only make it block
//! and wake once per job in a full queue's `send`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, unbounded, Sender};

type Job = Box<dyn FnOnce() + Send>;

/// A fixed-size worker pool.
#[derive(Debug)]
pub struct Pool {
    tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    depth: Arc<AtomicU64>,
}

/// The stack of each pool worker and of the scheduler thread, in bytes: a main thread's
/// on Linux (8 MiB), so a model callable run there (a Python extractor or embedder, which
/// may call back into the store) recurses as deep as on the thread that called, and ends
/// in the language's own recursion error rather than a stack overflow. Reserved address
/// space; pages are committed only as the stack grows.
pub(crate) const STACK_SIZE: usize = 8 << 20;

impl Pool {
    /// Starts `size` workers named `name-N`, behind a queue of at most `queue` waiting
    /// jobs (`None`: no bound).
    ///
    /// # Errors
    /// Thread spawn errors.
    pub fn new(name: &str, size: usize, queue: Option<usize>) -> std::io::Result<Self> {
        let (tx, rx) = match queue {
            Some(n) => bounded::<Job>(n),
            None => unbounded::<Job>(),
        };
        let depth = Arc::new(AtomicU64::new(0));
        let mut threads = Vec::with_capacity(size);
        for i in 0..size {
            let rx = rx.clone();
            let depth = Arc::clone(&depth);
            threads.push(
                std::thread::Builder::new()
                    .name(format!("{name}-{i}"))
                    .stack_size(STACK_SIZE)
                    .spawn(move || {
                        for job in rx {
                            // A job that panics must not take its worker and its count
                            // with it: the pool would shrink and `depth` never reach 0.
                            // Model calls are already `guarded`; this is the backstop.
                            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                            depth.fetch_sub(1, Ordering::Relaxed);
                        }
                    })?,
            );
        }
        Ok(Self {
            tx: Some(tx),
            threads,
            depth,
        })
    }

    /// Queues `job`, blocking while a bounded queue is full. False when the pool is
    /// stopping.
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) -> bool {
        let Some(tx) = &self.tx else { return false };
        self.depth.fetch_add(1, Ordering::Relaxed);
        if tx.send(Box::new(job)).is_err() {
            self.depth.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Jobs queued or running.
    #[must_use]
    pub fn depth(&self) -> u64 {
        self.depth.load(Ordering::Relaxed)
    }
}

impl Drop for Pool {
    /// Closes the queue and joins the workers, except the calling thread when the pool's
    /// last owner is dropped by one of its own jobs (a worker finishing after `close`
    /// returned): joining itself would panic, and it ends on its own once the job returns.
    fn drop(&mut self) {
        self.tx = None;
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use std::sync::atomic::AtomicUsize;
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    use super::*;

    /// Opens the gate when dropped, so a failed assertion releases the workers instead of
    /// leaving the pool's drop waiting for them.
    struct OpenOnDrop(Arc<(Mutex<bool>, Condvar)>);

    impl Drop for OpenOnDrop {
        fn drop(&mut self) {
            let (open, cv) = &*self.0;
            *open
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
            cv.notify_all();
        }
    }

    /// Jobs held at a gate: submitting more than the workers can run to a pool without a
    /// queue bound returns at once, at most `size` run together, and all of them run once
    /// the gate opens.
    #[test]
    fn an_unbounded_queue_never_blocks_and_workers_bound_concurrency() {
        let pool = Arc::new(Pool::new("test-pool", 2, None).unwrap());
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let _open_on_drop = OpenOnDrop(Arc::clone(&gate));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        let (submitted_tx, submitted_rx) = crossbeam_channel::bounded(1);
        let submitter = {
            let (pool, gate, running, peak) = (
                Arc::clone(&pool),
                Arc::clone(&gate),
                Arc::clone(&running),
                Arc::clone(&peak),
            );
            std::thread::spawn(move || {
                for _ in 0..10 {
                    let (gate, running, peak, done) = (
                        Arc::clone(&gate),
                        Arc::clone(&running),
                        Arc::clone(&peak),
                        done_tx.clone(),
                    );
                    assert!(pool.submit(move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        let (open, cv) = &*gate;
                        let mut g = open.lock().unwrap();
                        while !*g {
                            g = cv.wait(g).unwrap();
                        }
                        running.fetch_sub(1, Ordering::SeqCst);
                        done.send(()).unwrap();
                    }));
                }
                submitted_tx.send(()).unwrap();
            })
        };
        submitted_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("submitting 10 jobs to 2 busy workers returned");
        assert_eq!(pool.depth(), 10);
        let started = std::time::Instant::now();
        while running.load(Ordering::SeqCst) < 2 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "both workers start"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(50));
        let (open, cv) = &*gate;
        *open.lock().unwrap() = true;
        cv.notify_all();
        for _ in 0..10 {
            done_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        }
        submitter.join().unwrap();
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }

    /// The pool's last owner dropped by one of its own jobs (a worker still finishing
    /// after the store closed): the drop skips joining that worker instead of panicking.
    #[test]
    fn a_pool_dropped_by_its_own_job_does_not_join_itself() {
        let pool = Arc::new(Pool::new("test-pool", 1, None).unwrap());
        let (started_tx, started_rx) = crossbeam_channel::bounded(1);
        let (done_tx, done_rx) = crossbeam_channel::bounded(1);
        let (go_tx, go_rx) = crossbeam_channel::bounded::<()>(1);
        let last = Arc::clone(&pool);
        assert!(pool.submit(move || {
            let _ = started_tx.send(());
            let _ = go_rx.recv();
            drop(last);
            let _ = done_tx.send(());
        }));
        started_rx.recv().unwrap();
        drop(pool);
        go_tx.send(()).unwrap();
        done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    }
}
