//! The background threads: one flushes sealed memtables, one runs compactions.

use std::sync::Arc;
use std::thread::JoinHandle;

use crate::core::Core;
use crate::error::Result;

/// Starts the flush and compaction threads.
///
/// # Errors
/// [`crate::Error::Io`] when a thread cannot be spawned.
pub fn spawn(core: &Arc<Core>) -> Result<Vec<JoinHandle<()>>> {
    let spawn = |name: &str, body: fn(&Core)| {
        let core = Arc::clone(core);
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || body(&core))
            .map_err(crate::Error::io("spawn thread", name))
    };
    Ok(vec![
        spawn("memforest-flush", flush_loop)?,
        spawn("memforest-compact", compaction_loop)?,
    ])
}

/// Flushes sealed memtables, oldest first, until shutdown.
fn flush_loop(core: &Core) {
    loop {
        {
            let mut w = core.work.lock();
            while !w.shutdown && core.state().imm.is_empty() {
                core.work_cv.wait(&mut w);
            }
            if w.shutdown {
                return;
            }
        }
        if let Err(e) = core.flush_oldest() {
            core.set_bg_error(e);
            return;
        }
    }
}

/// Runs compactions while one is due, each time one is requested, until shutdown.
fn compaction_loop(core: &Core) {
    loop {
        {
            let mut w = core.work.lock();
            while !w.shutdown && !w.compaction_requested {
                core.work_cv.wait(&mut w);
            }
            if w.shutdown {
                return;
            }
            w.compaction_requested = false;
        }
        loop {
            match core.compact_once() {
                Ok(true) if !core.work.lock().shutdown => {}
                Ok(_) => break,
                Err(e) => {
                    core.set_bg_error(e);
                    return;
                }
            }
        }
    }
}

/// Asks both threads to stop after their current step and waits for them.
pub fn shutdown(core: &Core, threads: Vec<JoinHandle<()>>) {
    {
        let mut w = core.work.lock();
        w.shutdown = true;
        core.work_cv.notify_all();
    }
    for t in threads {
        let _ = t.join();
    }
}
