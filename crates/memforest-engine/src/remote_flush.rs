//! A writer's timed publication to its object store ([`Options::remote_flush_interval`]):
//! a thread of its own flushes the memtable and publishes the manifest once the memtable
//! has held unflushed writes for the interval, so a long-running writer with few writes
//! (a server) does not keep them only in its local WAL until a memtable fills.
//!
//! The thread looks at the active memtable every quarter interval. A memtable it saw
//! holding writes one full interval ago, and that still holds them, has writes at least
//! that old: it is flushed and the manifest published, as [`crate::Db::flush`] does. So
//! a write reaches the object store at most about
//! one and a quarter intervals after it was acknowledged (plus the flush and upload). A
//! store without writes is never flushed; a publication that failed earlier is retried
//! at every look. A failed flush or publication is logged (`tracing`) and tried again at
//! the next look; nothing is lost, as the writes stay in the WAL. Once the engine has a
//! background error (a failed flush, a fenced writer) the thread stops: nothing more can
//! be published.
//!
//! [`Options::remote_flush_interval`]: crate::Options::remote_flush_interval

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::core::Core;
use crate::error::{Error, Result};
use crate::memtable::MemTable;

/// The running timer; dropping it stops its thread (letting a running flush finish).
#[derive(Debug)]
pub struct FlushTimer {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl FlushTimer {
    /// Starts publishing `core`'s writes once they are `interval` old.
    ///
    /// # Errors
    /// [`Error::Io`] when the thread cannot start.
    pub(crate) fn spawn(core: &Arc<Core>, interval: Duration) -> Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let core = Arc::clone(core);
        let look = (interval / 4).max(Duration::from_millis(1));
        let thread = std::thread::Builder::new()
            .name("memforest-remote-flush".to_owned())
            .spawn(move || {
                let mut seen = None;
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(look) {
                    if !step(&core, interval, &mut seen) {
                        return;
                    }
                }
            })
            .map_err(Error::io("spawn thread", "memforest-remote-flush"))?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

/// One look: flushes and publishes when the active memtable is the one `seen` first found
/// holding writes at least `interval` ago; otherwise retries a pending publication. False
/// once the engine has a background error.
fn step(core: &Core, interval: Duration, seen: &mut Option<(Weak<MemTable>, Instant)>) -> bool {
    let active = Arc::clone(&core.state().active);
    let result = if active.is_empty() {
        *seen = None;
        core.publish_remote()
    } else {
        match seen {
            Some((mem, since)) if Weak::ptr_eq(mem, &Arc::downgrade(&active)) => {
                if since.elapsed() >= interval {
                    *seen = None;
                    core.flush_all().and_then(|()| core.publish_remote())
                } else {
                    Ok(())
                }
            }
            _ => {
                *seen = Some((Arc::downgrade(&active), Instant::now()));
                core.publish_remote()
            }
        }
    };
    if let Err(e) = result {
        tracing::warn!(dir = %core.dir.display(), error = %e, "timed publication to the object store failed; the writes stay in the WAL");
    }
    core.bg_error().is_none()
}

impl Drop for FlushTimer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
