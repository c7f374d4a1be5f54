//! Group commit: concurrent appenders are combined into one write and at most one sync.
//!
//! The first appender to find no leader becomes the leader: it takes every queued batch,
//! releases the queue lock, writes them all and syncs once at the strongest durability any
//! of them asked for, then wakes the others. Appenders that arrive meanwhile queue up and
//! the next leader among them writes them as the next group (LevelDB/RocksDB
//! `WriteThread`, simplified). Sequence numbers are assigned under the queue lock, in the
//! same order as the file, so they are dense and increasing in the log.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::batch::set_first_seqno;
use crate::error::{Result, WalError};
use crate::options::Durability;

/// One encoded batch waiting to be written.
#[derive(Debug)]
pub(crate) struct Pending {
    /// Encoded logical record, first seqno already set.
    pub payload: Vec<u8>,
    /// What its appender asked for.
    pub durability: Durability,
    /// Last seqno the batch owns.
    pub last_seqno: u64,
}

#[derive(Debug)]
struct QueueState {
    pending: Vec<Pending>,
    /// The last group's emptied vector, reused so queueing allocates nothing.
    spare: Vec<Pending>,
    next_seqno: u64,
    /// Tickets are issued in arrival order; all tickets up to `done` are written.
    next_ticket: u64,
    done: u64,
    leader_active: bool,
    poisoned: Option<Arc<WalError>>,
}

/// The queue appenders meet in.
#[derive(Debug)]
pub(crate) struct CommitQueue {
    state: Mutex<QueueState>,
    wake: Condvar,
}

impl CommitQueue {
    /// A queue whose first batch gets `next_seqno`.
    pub fn new(next_seqno: u64) -> Self {
        Self {
            state: Mutex::new(QueueState {
                pending: Vec::new(),
                spare: Vec::new(),
                next_seqno,
                next_ticket: 1,
                done: 0,
                leader_active: false,
                poisoned: None,
            }),
            wake: Condvar::new(),
        }
    }

    /// Queues `payload` (owning `span` seqnos) and returns its first seqno once a leader
    /// (maybe this caller, running `write_group`) has written it at `durability` or better.
    ///
    /// # Errors
    /// [`WalError::Poisoned`] when this or an earlier group failed.
    pub fn submit(
        &self,
        mut payload: Vec<u8>,
        span: u64,
        durability: Durability,
        write_group: impl FnOnce(&[Pending]) -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.state.lock();
        if let Some(cause) = &st.poisoned {
            return Err(WalError::Poisoned(cause.clone()));
        }
        let seqno = st.next_seqno;
        st.next_seqno = seqno.saturating_add(span);
        set_first_seqno(&mut payload, seqno);
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.pending.push(Pending {
            payload,
            durability,
            last_seqno: seqno + span - 1,
        });
        let mut write_group = Some(write_group);
        loop {
            if st.done >= ticket {
                return Ok(seqno);
            }
            if let Some(cause) = &st.poisoned {
                return Err(WalError::Poisoned(cause.clone()));
            }
            if !st.leader_active {
                if let Some(write) = write_group.take() {
                    st.leader_active = true;
                    let spare = std::mem::take(&mut st.spare);
                    let mut group = std::mem::replace(&mut st.pending, spare);
                    let last_ticket = st.next_ticket - 1;
                    let result = parking_lot::MutexGuard::unlocked(&mut st, || write(&group));
                    group.clear();
                    st.spare = group;
                    st.leader_active = false;
                    match result {
                        Ok(()) => st.done = last_ticket,
                        Err(e) => st.poisoned = Some(Arc::new(e)),
                    }
                    self.wake.notify_all();
                    continue;
                }
            }
            self.wake.wait(&mut st);
        }
    }

    /// The poisoning cause, if any.
    pub fn poisoned(&self) -> Option<Arc<WalError>> {
        self.state.lock().poisoned.clone()
    }

    /// Poisons the queue with `cause` (keeping an earlier cause) and returns the error to
    /// report.
    pub fn poison(&self, cause: WalError) -> WalError {
        let mut st = self.state.lock();
        let cause = st.poisoned.get_or_insert_with(|| Arc::new(cause)).clone();
        self.wake.notify_all();
        WalError::Poisoned(cause)
    }
}
