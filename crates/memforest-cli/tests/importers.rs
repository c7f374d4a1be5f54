//! Each importer on small hand-written files carrying every known defect of the real data:
//! the defects are counted, the good data survives, nothing panics.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

use std::path::{Path, PathBuf};

use memforest::memory::session::Role;
use memforest_cli::import::{self, Format};
use memforest_cli::CliError;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn locomo_defects_are_counted_and_tolerated() {
    let d = import::load(Format::Locomo, &data("locomo_defects.json")).unwrap();
    assert_eq!(d.tenants.len(), 2);
    let a = &d.tenants[0];
    assert_eq!(a.name, "conv-a");
    let ids: Vec<&str> = a.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["session_1", "session_2"]);
    // "1:56 pm on 8 May, 2023"
    assert_eq!(a.sessions[0].start, 1_683_554_160_000_000);
    // unparseable date: previous session + one day
    assert_eq!(a.sessions[1].start, a.sessions[0].start + 86_400_000_000);
    // the blank turn is skipped; the caption-only turn becomes text
    let s1: Vec<&str> = a.sessions[0]
        .turns
        .iter()
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(s1.len(), 3);
    assert_eq!(s1[2], "[image: a photo of a golden retriever on a beach]");
    assert!(a.sessions[1].turns[0]
        .text
        .ends_with("[image: a photo of a stack of brochures]"));
    // Two people, no assistant: both speak as users, under their own names.
    let turns = &a.sessions[0].turns;
    assert!(turns.iter().all(|t| t.role == Role::User));
    assert_ne!(turns[0].speaker, turns[1].speaker);
    // the second sample has no sample_id and no date
    assert_eq!(d.tenants[1].name, "conv-1");
    assert_eq!(
        d.tenants[1].sessions[0].turns[0].id.as_deref(),
        Some("D1:1")
    );

    let w = &d.warnings;
    assert_eq!(w.get("session date key with no session"), 1);
    assert_eq!(
        w.get("missing or unparseable session date (previous + 1 day)"),
        2
    );
    assert_eq!(w.get("empty turn (skipped)"), 1);
    assert_eq!(w.get("image turn (blip_caption used as text)"), 2);
    assert_eq!(w.get("numeric answer"), 1);
    assert_eq!(w.get("evidence id that matches no turn"), 2); // "D9:9" and "D"
    assert_eq!(w.get("qa item without question (skipped)"), 1);
    assert_eq!(w.get("sample without sample_id (named conv-<index>)"), 1);
    assert_eq!(w.get("turn without dia_id (position used)"), 1);

    assert_eq!(d.questions.len(), 4);
    assert_eq!(d.questions[1].answer, "2023");
    assert_eq!(d.questions[1].category, "temporal");
    // "D1:1; D2:1" split, "D:2:01" normalised to D2:1 (a repeat)
    assert_eq!(d.questions[2].evidence_turns, ["D1:1", "D2:1"]);
    assert_eq!(d.questions[2].category, "multi-hop");
    assert_eq!(d.questions[3].answer, "a red truck");
}

#[test]
fn locomo_evidence_splitting() {
    use memforest_cli::import::locomo::split_evidence;
    assert_eq!(split_evidence("D9:1 D4:4 D4:6"), ["D9:1", "D4:4", "D4:6"]);
    assert_eq!(split_evidence("D30:05"), ["D30:5"]);
    assert_eq!(split_evidence("D:11:26"), ["D11:26"]);
    assert_eq!(split_evidence("D8:6; D9:17"), ["D8:6", "D9:17"]);
    assert_eq!(split_evidence("D"), ["D"]);
}

#[test]
fn longmemeval_defects_are_counted_and_tolerated() {
    let d = import::load(Format::Longmemeval, &data("longmemeval_defects.json")).unwrap();
    assert_eq!(d.tenants.len(), 2);
    let q1 = &d.tenants[0];
    // sessions put in date order
    let ids: Vec<&str> = q1.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["answer_s1", "answer_s2"]);
    // empty assistant turn skipped, ids keep the file position
    let t: Vec<&str> = q1.sessions[0]
        .turns
        .iter()
        .filter_map(|t| t.id.as_deref())
        .collect();
    assert_eq!(t, ["answer_s1#turn_0", "answer_s1#turn_2"]);
    assert_eq!(q1.sessions[0].turns[1].role, Role::System);
    let q = &d.questions[0];
    assert_eq!(q.answer, "3");
    assert_eq!(q.category, "multi-session");
    assert_eq!(q.evidence_sessions, ["answer_s1", "answer_s2"]);
    let mut ev = q.evidence_turns.clone();
    ev.sort();
    assert_eq!(ev, ["answer_s1#turn_0", "answer_s2#turn_0"]);
    assert!(q.time.is_some());
    assert!(d.questions[1].time.is_none());

    let w = &d.warnings;
    assert_eq!(w.get("numeric answer"), 1);
    assert_eq!(w.get("answer session id that matches no session"), 1);
    assert_eq!(w.get("empty turn (skipped)"), 1);
    assert_eq!(w.get("unknown role (stored as system)"), 1);
    assert_eq!(w.get("haystack lists of different lengths"), 1);
    assert_eq!(
        w.get("missing or unparseable session date (previous used)"),
        1
    );
}

#[test]
fn jsonl_sessions_and_defects() {
    let d = import::load(Format::Jsonl, &data("sessions.jsonl")).unwrap();
    let names: Vec<&str> = d.tenants.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["alice", "bob"]);
    let alice = &d.tenants[0];
    assert_eq!(alice.sessions.len(), 2);
    assert_eq!(alice.sessions[0].start, 1_683_554_160_000_000);
    // missing start: the previous session's
    assert_eq!(alice.sessions[1].start, alice.sessions[0].start);
    assert_eq!(alice.sessions[1].turns.len(), 1);
    assert_eq!(alice.sessions[1].turns[0].time, None);
    assert_eq!(
        d.tenants[1].sessions[0].turns[0].id.as_deref(),
        Some("b1-t0")
    );
    let w = &d.warnings;
    assert_eq!(
        w.get("missing or unparseable session start (previous used)"),
        1
    );
    assert_eq!(w.get("empty turn (skipped)"), 1);
    assert_eq!(w.get("unparseable turn time (inherited)"), 1);
    assert_eq!(w.get("unknown role (stored as user)"), 1);
}

#[test]
fn bad_json_names_line_and_column() {
    match import::load(Format::Jsonl, &data("bad_line2.jsonl")) {
        Err(CliError::Json { line, column, .. }) => {
            assert_eq!(line, 2);
            assert!(column > 0);
        }
        other => panic!("expected a JSON error, got {other:?}"),
    }
    match import::parse(Format::Locomo, Path::new("x.json"), b"[\n  {\"a\": }\n]") {
        Err(CliError::Json { line, .. }) => assert_eq!(line, 2),
        other => panic!("expected a JSON error, got {other:?}"),
    }
}

#[test]
fn wrong_format_is_a_clear_error() {
    let e = import::load(Format::Jsonl, &data("no_tenant.jsonl")).unwrap_err();
    assert!(e.to_string().contains("line 1: no `tenant` string"), "{e}");
    // a LongMemEval file read as LoCoMo
    let e = import::load(Format::Locomo, &data("longmemeval_defects.json")).unwrap_err();
    assert!(
        matches!(
            e,
            CliError::Format {
                format: "locomo",
                ..
            }
        ),
        "{e}"
    );
    // a LoCoMo file read as LongMemEval
    let e = import::load(Format::Longmemeval, &data("locomo_defects.json")).unwrap_err();
    assert!(
        matches!(
            e,
            CliError::Format {
                format: "longmemeval",
                ..
            }
        ),
        "{e}"
    );
    let e = import::load(Format::Locomo, &data("does-not-exist.json")).unwrap_err();
    assert!(matches!(e, CliError::Io { .. }), "{e}");
}

#[test]
fn importers_never_panic_on_odd_json() {
    let docs: [&[u8]; 8] = [
        b"null",
        b"[]",
        b"[1, \"x\", null]",
        b"[{\"conversation\": {\"session_1\": 5, \"session_x\": [], \"session_2\": [null, 3, {\"text\": 7}]}, \"qa\": [{\"question\": \"q\", \"evidence\": [1, null, \"D1:1\"]}]}]",
        b"[{\"haystack_sessions\": [null, [null, {\"content\": 5}]], \"haystack_dates\": 3}]",
        b"{\"tenant\": \"t\", \"session\": \"s\", \"turns\": [null, 1, {\"text\": \"hi\", \"time\": []}]}",
        b"\xff\xfe",
        b"",
    ];
    for doc in docs {
        for f in [Format::Locomo, Format::Longmemeval, Format::Jsonl] {
            let _ = import::parse(f, Path::new("odd.json"), doc);
        }
    }
}

#[test]
fn bundled_data_decodes() {
    let d = memforest_cli::demo::dataset(Some(3)).unwrap();
    assert_eq!(d.tenants.len(), 3);
    assert_eq!(d.questions.len(), 3);
    assert!(d.turn_count() > 0);
}

/// Real conversations through the memory layer: the demo on the first bundled LongMemEval
/// histories stores every turn, extracts facts, and leaves the reopened store clean.
#[test]
fn demo_ingests_bundled_conversations_into_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("demo");
    let data = memforest_cli::demo::dataset(Some(4)).unwrap();
    let r = memforest_cli::demo::run(&db, Some(4), 10, false).unwrap();
    assert_eq!(r.instances, 4);
    assert_eq!(r.ingest.turns, data.turn_count() as u64);
    assert!(r.ingest.facts > 0, "{:?}", r.ingest);
    assert_eq!(r.ingest.cells_failed, 0);
    let mem = memforest::Memory::open_read_only(&db, memforest::Options::default()).unwrap();
    let report = mem.verify().unwrap();
    assert!(report.store.is_clean() && report.trees > 0, "{report:?}");
    for tenant in &data.tenants {
        let stats = mem.user_stats(&tenant.name).unwrap();
        assert_eq!(stats.dirty_summaries, 0, "{}: {stats:?}", tenant.name);
        assert_eq!(stats.pending_extractions, 0, "{}: {stats:?}", tenant.name);
        assert!(stats.memories > 0, "{}: {stats:?}", tenant.name);
    }
}

mod never_panic {
    use super::*;
    use proptest::prelude::*;

    /// JSON-ish text built from the tokens the formats use, so parsing gets past the
    /// first byte often.
    fn jsonish() -> impl Strategy<Value = String> {
        let tok = prop::sample::select(vec![
            "[",
            "]",
            "{",
            "}",
            ",",
            ":",
            "\"",
            "null",
            "1",
            "-7",
            "2.5",
            "true",
            "\"conversation\"",
            "\"session_1\"",
            "\"session_1_date_time\"",
            "\"qa\"",
            "\"evidence\"",
            "\"D1:1\"",
            "\"text\"",
            "\"blip_caption\"",
            "\"haystack_sessions\"",
            "\"haystack_dates\"",
            "\"content\"",
            "\"has_answer\"",
            "\"tenant\"",
            "\"session\"",
            "\"turns\"",
            "\"start\"",
            "\"t\"",
            "\n",
        ]);
        prop::collection::vec(tok, 0..60).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
            for f in [Format::Locomo, Format::Longmemeval, Format::Jsonl] {
                let _ = import::parse(f, Path::new("fuzz.json"), &bytes);
            }
        }

        #[test]
        fn jsonish_text(text in jsonish()) {
            for f in [Format::Locomo, Format::Longmemeval, Format::Jsonl] {
                let _ = import::parse(f, Path::new("fuzz.json"), text.as_bytes());
            }
        }
    }
}

/// The real LoCoMo file (CC BY-NC: not bundled; development checkouts have it beside the
/// repository).
#[test]
#[ignore = "needs ../shared/data/locomo/locomo10.json, which is not bundled: cargo test -p memforest-cli --test importers -- --ignored"]
fn real_locomo_matches_its_documented_statistics() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/locomo/locomo10.json");
    assert!(path.is_file(), "{} is absent", path.display());
    let d = import::load(Format::Locomo, &path).unwrap();
    assert_eq!(d.tenants.len(), 10);
    assert_eq!(
        d.tenants.iter().map(|t| t.sessions.len()).sum::<usize>(),
        272
    );
    assert_eq!(d.turn_count(), 5882);
    assert_eq!(d.questions.len(), 1986);
    assert_eq!(d.warnings.get("session date key with no session"), 16);
    assert_eq!(
        d.warnings.get("image turn (blip_caption used as text)"),
        1226
    );
    // after splitting and normalising, only D10:19, D and D4:36 match no turn
    assert_eq!(d.warnings.get("evidence id that matches no turn"), 3);
    let with_evidence = d
        .questions
        .iter()
        .filter(|q| !q.evidence_turns.is_empty())
        .count();
    assert_eq!(with_evidence, 1982);
}

#[test]
fn bundled_longmemeval_matches_its_documented_statistics() {
    let d = memforest_cli::demo::dataset(None).unwrap();
    assert_eq!(d.tenants.len(), 500);
    assert_eq!(
        d.tenants.iter().map(|t| t.sessions.len()).sum::<usize>(),
        948
    );
    let empty = d.warnings.get("empty turn (skipped)");
    assert_eq!(d.turn_count() as u64 + empty, 10_960);
    let evidence: usize = d.questions.iter().map(|q| q.evidence_turns.len()).sum();
    assert_eq!(evidence, 896);
    assert_eq!(
        d.questions
            .iter()
            .filter(|q| !q.evidence_turns.is_empty())
            .count(),
        479
    );
    assert_eq!(d.warnings.get("numeric answer"), 32);
    for t in &d.tenants {
        assert!(
            t.sessions.windows(2).all(|w| w[0].start <= w[1].start),
            "{}",
            t.name
        );
    }
}
