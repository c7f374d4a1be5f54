//! The turn cache of the fusion step (`recall::turn_cache`) changes no ranking: queries of
//! the latest state (turn term counts cached, cold then warm) return the same facts with
//! the same scores, in the same order, as the same queries at a snapshot of that state
//! (which bypass every cache and read and tokenize each turn); and after a forget no
//! query ranks with the forgotten turns.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

mod recall_common;

use memforest::lifecycle::Forget;
use memforest::recall::Query;
use recall_common::{latest, questions, store, uncached};

#[test]
fn cached_turns_rank_exactly_like_uncached_reads() {
    let (_dir, db, t) = store(6, 6);
    let questions = questions();
    let reference: Vec<_> = questions.iter().map(|q| uncached(&db, &t, q)).collect();
    assert!(
        reference.iter().all(|r| !r.is_empty()),
        "every question finds facts"
    );
    for pass in ["cold", "warm"] {
        for (q, want) in questions.iter().zip(&reference) {
            assert_eq!(&latest(&db, &t, q), want, "{pass} cache, {q}");
        }
    }
}

#[test]
fn after_a_forget_no_query_ranks_with_the_forgotten_turns() {
    let (_dir, db, t) = store(4, 6);
    let questions = questions();
    for q in &questions {
        latest(&db, &t, q);
    }
    let before: Vec<_> = questions.iter().map(|q| latest(&db, &t, q)).collect();
    db.forget(
        &t,
        &Forget::Turn {
            session: "s1".into(),
            index: 2,
        },
    )
    .unwrap();
    db.forget(&t, &Forget::Session("s2".into())).unwrap();
    db.flush_summaries().unwrap();
    let mut changed = false;
    for (q, old) in questions.iter().zip(&before) {
        let now = latest(&db, &t, q);
        assert_eq!(now, uncached(&db, &t, q), "{q}");
        changed |= &now != old;
        let r = db.query(&t, &Query::new(q.as_str())).unwrap();
        for f in &r.facts {
            for p in &f.provenance {
                assert_ne!(p.session, "s2", "{q}: fact {} of a forgotten session", f.id);
                assert!(
                    p.session != "s1" || !p.turns.iter().any(|x| x.ends_with("#turn_2")),
                    "{q}: fact {} of a forgotten turn",
                    f.id
                );
            }
        }
    }
    assert!(changed, "the forgets changed some ranking");
}
