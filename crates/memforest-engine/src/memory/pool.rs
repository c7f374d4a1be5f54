//! [`Pool`]: a fixed number of worker threads fed by a bounded crossbeam channel; the
//! bound is the pool's concurrency limit towards a model endpoint.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Sender};

type Job = Box<dyn FnOnce() + Send>;

/// A bounded worker pool.
#[derive(Debug)]
pub struct Pool {
    tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    depth: Arc<AtomicU64>,
}

impl Pool {
    /// Starts `size` workers named `name-N`; the queue holds `size` jobs beyond the running
    /// ones.
    ///
    /// # Errors
    /// Thread spawn errors.
    pub fn new(name: &str, size: usize) -> std::io::Result<Self> {
        let (tx, rx) = bounded::<Job>(size);
        let depth = Arc::new(AtomicU64::new(0));
        let mut threads = Vec::with_capacity(size);
        for i in 0..size {
            let rx = rx.clone();
            let depth = Arc::clone(&depth);
            threads.push(
                std::thread::Builder::new()
                    .name(format!("{name}-{i}"))
                    .spawn(move || {
                        for job in rx {
                            job();
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

    /// Queues `job`, blocking while the queue is full. False when the pool is stopping.
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
    fn drop(&mut self) {
        self.tx = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
