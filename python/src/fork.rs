//! Fork safety. A `Memory`'s background threads wait on `parking_lot` primitives, whose
//! process-wide table of parked threads a forked child inherits with entries for threads
//! that do not exist there; threads the child starts can reuse those threads' stacks and
//! corrupt the table, so a store opened in such a child can hang. The child of a process
//! with an open `Memory` therefore refuses to open one (an exception, never a hang); a
//! child forked while none was open (before the first open, or after every `close`) opens
//! stores as usual. Handles inherited from the parent raise `ClosedError` (see
//! `memory.rs`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::prelude::*;

use crate::error::Kind;

/// `Memory` handles of this process whose background threads may be running: opened, and
/// not yet closed or dropped.
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// Set in a child forked while `OPEN` was not zero (and in its descendants).
static FORKED_WHILE_OPEN: AtomicBool = AtomicBool::new(false);

/// A store was opened.
pub(crate) fn opened() {
    OPEN.fetch_add(1, Ordering::SeqCst);
}

/// A store's background threads have stopped (closed or dropped).
pub(crate) fn stopped() {
    OPEN.fetch_sub(1, Ordering::SeqCst);
}

/// `MemForestError` in a child forked while a store was open.
pub(crate) fn check_can_open() -> PyResult<()> {
    if !FORKED_WHILE_OPEN.load(Ordering::SeqCst) {
        return Ok(());
    }
    Err(Kind::Base.err(
        "this process was forked while a memforest.Memory was open in its parent, whose \
         background threads cannot be carried over a fork; open stores only after forking \
         (close the parent's Memory first, open it in each worker, e.g. in gunicorn's \
         post_fork, or use multiprocessing's \"spawn\" or \"forkserver\" start method)",
    ))
}

/// Registered with `os.register_at_fork(after_in_child=...)` by `memforest/__init__.py`.
#[pyfunction]
pub(crate) fn _after_fork_in_child() {
    if OPEN.load(Ordering::SeqCst) > 0 {
        FORKED_WHILE_OPEN.store(true, Ordering::SeqCst);
    }
}
