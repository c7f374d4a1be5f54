//! Query expansion (`recall::expand`): a hybrid query also finds a memory by a word the
//! embedder relates to one of its own ("kids" finds "children"), ranks it below memories
//! with the word itself however rare the related word is, never reads a related word as a
//! speaker's name, and a lexical query does not expand.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::sync::Arc;

use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::model::ModelError;
use memforest::recall::{Mode, Query};
use memforest::{Memory, Options};
use memforest_engine::TenantId;

mod recall_common;

use recall_common::session;

/// An embedder that gives every text the same vector (so vectors rank nothing) and relates
/// "kid" to `kid`'s terms.
#[derive(Debug)]
struct Related {
    kid: Vec<(String, f32)>,
}

impl Embedder for Related {
    fn name(&self) -> &str {
        "related-2"
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        Ok(Embeddings {
            vectors: texts.iter().map(|_| vec![1.0, 0.0]).collect(),
            ..Embeddings::default()
        })
    }

    fn related_terms(&self, term: &str) -> &[(String, f32)] {
        if term == "kid" {
            &self.kid
        } else {
            &[]
        }
    }
}

const CHILDREN: &str = "The children loved the dinosaur exhibit at the museum.";
const KIDS: &str = "My kids are at school until three.";

fn open(kid: &[(&str, f32)]) -> (tempfile::TempDir, Memory, TenantId) {
    let dir = tempfile::tempdir().unwrap();
    let mut o = Options::default();
    o.memory.embedder = Some(Arc::new(Related {
        kid: kid.iter().map(|(t, c)| ((*t).to_owned(), *c)).collect(),
    }));
    let db = Memory::open_with(dir.path(), o).unwrap();
    (dir, db, TenantId::new("t").unwrap())
}

fn store(with_kids: bool) -> (tempfile::TempDir, Memory, TenantId) {
    let (dir, db, t) = open(&[("children", 0.9)]);
    let texts = [
        "The train to Lyon leaves at seven in the morning.",
        "We repainted the kitchen walls a pale yellow.",
        CHILDREN,
        "The quarterly tax filing is due in April.",
    ];
    db.ingest_session(&t, &session("s", 0, &texts)).unwrap();
    // In a session of its own: a turn next to it would share its score (`recall::fuse`).
    if with_kids {
        db.ingest_session(&t, &session("kids", 1, &[KIDS])).unwrap();
    }
    (dir, db, t)
}

fn texts(db: &Memory, t: &TenantId, q: &Query) -> Vec<String> {
    db.query(t, q)
        .unwrap()
        .facts
        .into_iter()
        .map(|f| f.text)
        .collect()
}

#[test]
fn a_hybrid_query_finds_a_memory_by_a_related_word() {
    let (_dir, db, t) = store(false);
    let found = texts(&db, &t, &Query::new("How are the kids?"));
    assert!(
        found.first().is_some_and(|f| f.contains("children")),
        "{found:?}"
    );
    let lexical = Query {
        mode: Mode::Lexical,
        ..Query::new("How are the kids?")
    };
    let found = texts(&db, &t, &lexical);
    assert!(found.iter().all(|f| !f.contains("children")), "{found:?}");
    db.close().unwrap();
}

#[test]
fn the_query_word_itself_ranks_above_a_related_word() {
    let (_dir, db, t) = store(true);
    let found = texts(&db, &t, &Query::new("How are the kids?"));
    let rank = |s: &str| found.iter().position(|f| f.contains(s));
    assert_eq!(rank("kids"), Some(0), "{found:?}");
    assert_eq!(rank("children"), Some(1), "{found:?}");
    db.close().unwrap();
}

#[test]
fn a_rare_related_word_does_not_outrank_a_common_query_word() {
    let (_dir, db, t) = open(&[("children", 0.9)]);
    // Thirty facts say "kids" (a low idf), one says "children" (the highest); each in a
    // session of its own, so no turn lends its score to a neighbour.
    for i in 0..30 {
        let text = format!("The kids walked to school number {i} today.");
        db.ingest_session(&t, &session(&format!("k{i}"), i, &[text.as_str()]))
            .unwrap();
    }
    db.ingest_session(&t, &session("c", 40, &[CHILDREN]))
        .unwrap();
    let q = Query {
        k: 40,
        ..Query::new("How are the kids?")
    };
    let found = texts(&db, &t, &q);
    let children = found.iter().position(|f| f.contains("children"));
    assert_eq!(children, Some(30), "{found:?}");
    db.close().unwrap();
}

#[test]
fn a_related_word_in_a_speakers_name_is_not_used() {
    // "kid" relates to "bob": Bob's turns carry his name, which must not match, so his
    // fact and Alice's, neither sharing a word with the question, score alike.
    let (_dir, db, t) = open(&[("bob", 0.9)]);
    let mut bob = session("b", 0, &["We repainted the kitchen walls a pale yellow."]);
    for turn in &mut bob.turns {
        turn.speaker = "Bob".into();
    }
    db.ingest_session(&t, &bob).unwrap();
    let alice = session(
        "a",
        1,
        &["The train to Lyon leaves at seven in the morning."],
    );
    db.ingest_session(&t, &alice).unwrap();
    let hits = db
        .query(&t, &Query::new("How are the kids?"))
        .unwrap()
        .facts;
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!((hits[0].score - hits[1].score).abs() < 1e-6, "{hits:?}");
    db.close().unwrap();
}
