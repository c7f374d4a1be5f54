//! Group commit: concurrent appenders are combined into one write and at most one sync.
//!
//! The first appender to find no leader becomes the leader: it takes every queued batch,
//! releases the queue lock, writes them all and syncs once at the strongest durability any
//! of them asked for, then wakes the others. Appenders that arrive meanwhile queue up and
//! the next leader among them writes them as the next group (LevelDB/RocksDB
//! `WriteThread`, simplified). Sequence numbers are assigned under the queue lock, in the
//! same order as the file, so they are dense and increasing in the log.
//!
//! Payloads are encoded under the queue lock straight into one buffer the queue keeps
//! (the part of encoding that does not need a seqno, compression, is done before), and a
//! written group's buffers are kept for the next group, so queueing a batch allocates
//! nothing.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::batch::Prepared;
use crate::error::{Result, WalError};
use crate::options::Durability;

/// A written group's payload buffer is kept for the next group up to this capacity, in
/// bytes (a huge batch's buffer is freed, not kept for good).
const MAX_SPARE_BYTES: usize = 1 << 20;

/// One encoded batch waiting to be written.
#[derive(Debug)]
pub(crate) struct Pending {
    /// End of its payload (encoded logical record, first seqno set) in [`Group::bytes`];
    /// it starts where the previous one ends.
    end: usize,
    /// What its appender asked for.
    pub durability: Durability,
    /// Last seqno the batch owns.
    pub last_seqno: u64,
}

/// The batches a leader writes: their payloads back to back, and each one's bounds.
#[derive(Debug, Default)]
pub(crate) struct Group {
    bytes: Vec<u8>,
    pending: Vec<Pending>,
}

impl Group {
    /// Each batch's payload and its [`Pending`], in queue (seqno) order.
    pub fn batches(&self) -> impl Iterator<Item = (&[u8], &Pending)> {
        let starts = std::iter::once(0).chain(self.pending.iter().map(|p| p.end));
        starts
            .zip(&self.pending)
            .map(|(start, p)| (self.bytes.get(start..p.end).unwrap_or_default(), p))
    }

    /// Number of batches.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.pending.clear();
    }
}

#[derive(Debug)]
struct QueueState {
    queued: Group,
    /// The last group's emptied buffers, reused so queueing allocates nothing.
    spare: Group,
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
                queued: Group::default(),
                spare: Group::default(),
                next_seqno,
                next_ticket: 1,
                done: 0,
                leader_active: false,
                poisoned: None,
            }),
            wake: Condvar::new(),
        }
    }

    /// Queues `batch` (owning `span` seqnos) and returns its first seqno once a leader
    /// (maybe this caller, running `write_group`) has written it at `durability` or better.
    ///
    /// # Errors
    /// [`WalError::Poisoned`] when this or an earlier group failed.
    pub fn submit(
        &self,
        batch: &Prepared<'_>,
        span: u64,
        durability: Durability,
        write_group: impl FnOnce(&Group) -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.state.lock();
        if let Some(cause) = &st.poisoned {
            return Err(WalError::Poisoned(cause.clone()));
        }
        let seqno = st.next_seqno;
        st.next_seqno = seqno.saturating_add(span);
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        let queued = &mut st.queued;
        batch.encode_into(seqno, &mut queued.bytes);
        queued.pending.push(Pending {
            end: queued.bytes.len(),
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
                    let mut group = std::mem::replace(&mut st.queued, spare);
                    let last_ticket = st.next_ticket - 1;
                    let result = parking_lot::MutexGuard::unlocked(&mut st, || write(&group));
                    group.clear();
                    if group.bytes.capacity() <= MAX_SPARE_BYTES {
                        st.spare = group;
                    }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::batch::{decode, Compression, WriteBatch};

    /// Batch `i` of thread `t`: `n` entries, the last value large enough (every 7th batch)
    /// to be compressed or to outgrow the kept buffer.
    fn batch(t: u8, i: u32) -> WriteBatch {
        let mut b = WriteBatch::new();
        for j in 0..=(i % 3) {
            b.push(t, [i.to_le_bytes(), j.to_le_bytes()].concat(), vec![t; 10]);
        }
        if i % 7 == 0 {
            b.push(t, b"big".to_vec(), vec![t; MAX_SPARE_BYTES + 1]);
        }
        b
    }

    #[test]
    fn concurrent_groups_hand_every_payload_to_the_leader_with_its_seqno() {
        let queue = CommitQueue::new(1);
        let written: Mutex<BTreeMap<u64, WriteBatch>> = Mutex::default();
        let compression = Compression {
            threshold: Some(1 << 10),
            level: 1,
        };
        std::thread::scope(|s| {
            for t in 0..4u8 {
                let (queue, written) = (&queue, &written);
                s.spawn(move || {
                    for i in 0..60u32 {
                        let b = batch(t, i);
                        let prepared = Prepared::new(&b, compression).unwrap();
                        let first = queue
                            .submit(&prepared, b.seqno_span(), Durability::Buffered, |g| {
                                let mut w = written.lock();
                                for (payload, p) in g.batches() {
                                    let (seqno, got) = decode(payload).unwrap();
                                    assert_eq!(p.last_seqno, seqno + got.seqno_span() - 1);
                                    assert!(w.insert(seqno, got).is_none());
                                }
                                Ok(())
                            })
                            .unwrap();
                        // Once `submit` returns, the batch was written, whole, at its seqno.
                        assert_eq!(written.lock().get(&first), Some(&b));
                    }
                });
            }
        });
        let written = written.into_inner();
        assert_eq!(written.len(), 4 * 60);
        // Seqnos are dense: each batch starts where the previous one ended.
        let mut next = 1;
        for (&seqno, b) in &written {
            assert_eq!(seqno, next);
            next += b.seqno_span();
        }
        // The huge batches' buffers were freed rather than kept.
        assert!(queue.state.lock().spare.bytes.capacity() <= MAX_SPARE_BYTES);
    }
}
