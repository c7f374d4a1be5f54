//! Commits keep the read path's postings and vector caches current
//! (`recall::write_through`): with the caches warm, each ingest and forget is followed by
//! queries of the latest state (hybrid: postings and fact vectors from the caches) that
//! rank exactly like the same queries at a snapshot, which bypass every cache.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::lifecycle::Forget;
use recall_common::{ingest, latest, questions, store, uncached};

#[test]
fn queries_after_each_write_rank_like_uncached_reads() {
    let (_dir, db, t) = store(4, 4);
    let questions = questions();
    for q in &questions {
        assert!(!latest(&db, &t, q).is_empty(), "{q} finds facts");
    }
    for step in 0..9usize {
        match step % 3 {
            0 | 1 => ingest(&db, &t, 4 + step..5 + step, 3),
            _ => {
                let turn = Forget::Turn {
                    session: format!("s{}", step / 3),
                    index: 1,
                };
                db.forget(&t, &turn).unwrap();
            }
        }
        for q in &questions {
            assert_eq!(
                latest(&db, &t, q),
                uncached(&db, &t, q),
                "after step {step}: {q}"
            );
        }
    }
    db.forget(&t, &Forget::Session("s5".into())).unwrap();
    for q in &questions {
        assert_eq!(latest(&db, &t, q), uncached(&db, &t, q), "{q}");
    }
}
