//! Crate-internal tests that need the fault seam.

use std::sync::atomic::Ordering;

use crate::{Durability, RecoveryMode, Wal, WalError, WalOptions, WriteBatch};

fn one(tag: u8) -> WriteBatch {
    let mut b = WriteBatch::new();
    b.push(1, vec![tag], vec![tag; 10]);
    b
}

#[test]
fn failed_fsync_poisons_until_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let opts = WalOptions {
        recovery_mode: RecoveryMode::AbsoluteConsistency,
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(dir.path(), opts).unwrap();
    wal.append(&one(1), Durability::SyncData).unwrap();

    wal.fail_next_sync.store(true, Ordering::SeqCst);
    let err = wal.append(&one(2), Durability::SyncData).unwrap_err();
    assert!(
        matches!(&err, WalError::Poisoned(cause) if matches!(**cause, WalError::Io { .. })),
        "{err}"
    );
    // Every later operation fails, even though the next sync would succeed.
    assert!(matches!(
        wal.append(&one(3), Durability::Buffered),
        Err(WalError::Poisoned(_))
    ));
    assert!(matches!(wal.sync(), Err(WalError::Poisoned(_))));
    assert!(matches!(wal.rotate(), Err(WalError::Poisoned(_))));
    drop(wal);

    // Reopening clears the poison; the acknowledged batch is there. The failed batch was
    // written before its sync failed, so it may be present too, but nothing after it.
    let (wal, rec) = Wal::open(dir.path(), opts).unwrap();
    let tags: Vec<u8> = rec
        .batches
        .iter()
        .map(|b| b.batch.entries()[0].key[0])
        .collect();
    assert!(tags == [1] || tags == [1, 2], "{tags:?}");
    wal.append(&one(4), Durability::SyncData).unwrap();
}

#[test]
fn failed_explicit_sync_poisons_appends() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = Wal::open(dir.path(), WalOptions::default()).unwrap();
    wal.append(&one(1), Durability::Buffered).unwrap();
    wal.fail_next_sync.store(true, Ordering::SeqCst);
    assert!(matches!(wal.sync(), Err(WalError::Poisoned(_))));
    assert!(matches!(
        wal.append(&one(2), Durability::Buffered),
        Err(WalError::Poisoned(_))
    ));
}
