//! `batch::parse_batch` on batched extraction replies as models write them: the asked-for
//! shape, the other shapes accepted, and replies that leave an excerpt out, answer one
//! with nothing usable, repeat or invent ids, are cut off, or hold no JSON. A defect of one
//! excerpt fails that excerpt only.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use memforest_llm::batch::{excerpt_id, parse_batch};
use memforest_llm::LlmError;

/// Turn ids of three excerpts: `a0`, `b0 b1`, `c0`.
fn turn_ids() -> Vec<Vec<String>> {
    vec![
        vec!["a0".into()],
        vec!["b0".into(), "b1".into()],
        vec!["c0".into()],
    ]
}

fn item(text: &str, turn: &str) -> String {
    format!(r#"{{"fact_text": "{text}", "semantic_role": "event", "source_turns": ["{turn}"]}}"#)
}

/// The fact texts of each excerpt, or `Err` with the error's text.
fn texts(content: &str) -> Vec<Result<Vec<String>, String>> {
    parse_batch(content, &turn_ids())
        .unwrap()
        .excerpts
        .into_iter()
        .map(|e| {
            e.map(|p| p.items.into_iter().map(|i| i.fact_text).collect())
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn ok(list: &[&str]) -> Result<Vec<String>, String> {
    Ok(list.iter().map(|s| (*s).to_owned()).collect())
}

#[test]
fn excerpt_ids_count_from_one() {
    assert_eq!(excerpt_id(0), "E1");
    assert_eq!(excerpt_id(11), "E12");
}

#[test]
fn the_asked_for_shape_gives_every_excerpt_its_items() {
    let reply = format!(
        r#"{{"excerpts": [
            {{"excerpt": "E1", "items": [{}]}},
            {{"excerpt": "E2", "items": [{}, {}]}},
            {{"excerpt": "E3", "items": []}}
        ]}}"#,
        item("Alice adopted Rex.", "a0"),
        item("Bob moved to Oslo.", "b0"),
        item("Bob works at Acme.", "b1"),
    );
    assert_eq!(
        texts(&reply),
        vec![
            ok(&["Alice adopted Rex."]),
            ok(&["Bob moved to Oslo.", "Bob works at Acme."]),
            ok(&[]),
        ]
    );
    // Source turns are checked against each excerpt's own turns.
    let parsed = parse_batch(&reply, &turn_ids()).unwrap();
    let second = parsed.excerpts[1].as_ref().unwrap();
    assert_eq!(second.items[1].source_turns, vec!["b1".to_owned()]);
}

#[test]
fn entries_out_of_order_keyed_by_id_or_in_a_fence_are_accepted() {
    let a = item("Alice adopted Rex.", "a0");
    let b = item("Bob moved to Oslo.", "b0");
    let c = item("Carol sings.", "c0");
    let out_of_order = format!(
        r#"{{"excerpts": [{{"excerpt": "e3", "items": [{c}]}}, {{"id": 1, "items": [{a}]}}, {{"excerpt": " E2 ", "items": [{b}]}}]}}"#
    );
    let keyed = format!(r#"{{"E1": {{"items": [{a}]}}, "E2": [{b}], "E3": [{c}]}}"#);
    let fenced = format!(
        "Here are the memories:\n```json\n[{{\"excerpt\": \"E1\", \"items\": [{a}]}}, {{\"excerpt\": \"E2\", \"items\": [{b}]}}, {{\"excerpt\": \"E3\", \"items\": [{c}]}}]\n```"
    );
    let want = vec![
        ok(&["Alice adopted Rex."]),
        ok(&["Bob moved to Oslo."]),
        ok(&["Carol sings."]),
    ];
    for reply in [out_of_order, keyed, fenced] {
        assert_eq!(texts(&reply), want, "{reply}");
    }
}

#[test]
fn an_excerpt_left_out_fails_alone() {
    let reply = format!(
        r#"{{"excerpts": [{{"excerpt": "E1", "items": [{}]}}, {{"excerpt": "E3", "items": [{}]}}]}}"#,
        item("Alice adopted Rex.", "a0"),
        item("Carol sings.", "c0"),
    );
    let got = texts(&reply);
    assert_eq!(got[0], ok(&["Alice adopted Rex."]));
    assert!(
        matches!(&got[1], Err(e) if e.contains("no entry for excerpt E2")),
        "{got:?}"
    );
    assert_eq!(got[2], ok(&["Carol sings."]));
}

#[test]
fn an_excerpt_with_nothing_usable_fails_alone_and_bad_items_are_dropped() {
    let reply = format!(
        r#"{{"excerpts": [
            {{"excerpt": "E1", "items": [{{"fact_text": ""}}, 7]}},
            {{"excerpt": "E2", "items": "Bob moved"}},
            {{"excerpt": "E3", "items": [{}, {{"topics": ["x"]}}]}}
        ]}}"#,
        item("Carol sings.", "c0"),
    );
    let parsed = parse_batch(&reply, &turn_ids()).unwrap();
    assert!(matches!(parsed.excerpts[0], Err(LlmError::Unusable(_))));
    assert!(matches!(parsed.excerpts[1], Err(LlmError::Unusable(_))));
    let third = parsed.excerpts[2].as_ref().unwrap();
    assert_eq!(third.items.len(), 1);
    assert_eq!(third.dropped.len(), 1, "{:?}", third.dropped);
}

#[test]
fn repeated_and_unknown_ids_are_noted_and_the_first_answer_kept() {
    let reply = format!(
        r#"{{"excerpts": [
            {{"excerpt": "E1", "items": [{}]}},
            {{"excerpt": "E1", "items": [{}]}},
            {{"excerpt": "E9", "items": [{}]}},
            {{"excerpt": "E2", "items": []}},
            "E3"
        ]}}"#,
        item("First.", "a0"),
        item("Second.", "a0"),
        item("Nowhere.", "a0"),
    );
    let parsed = parse_batch(&reply, &turn_ids()).unwrap();
    assert_eq!(parsed.notes.len(), 2, "{:?}", parsed.notes);
    let got = texts(&reply);
    assert_eq!(got[0], ok(&["First."]));
    assert_eq!(got[1], ok(&[]));
    // A bare string is no entry: E3 is missing.
    assert!(got[2].is_err(), "{got:?}");
}

#[test]
fn a_reply_cut_off_keeps_its_complete_excerpts() {
    let full = format!(
        r#"{{"excerpts": [{{"excerpt": "E1", "items": [{}]}}, {{"excerpt": "E2", "items": [{}]}}, {{"excerpt": "E3", "items": [{}]}}]}}"#,
        item("Alice adopted Rex.", "a0"),
        item("Bob moved to Oslo.", "b0"),
        item("Carol sings.", "c0"),
    );
    let cut = &full[..full.find("Carol").unwrap()];
    let parsed = parse_batch(cut, &turn_ids()).unwrap();
    assert_eq!(parsed.notes.len(), 1, "{:?}", parsed.notes);
    let got = texts(cut);
    assert_eq!(got[0], ok(&["Alice adopted Rex."]));
    assert_eq!(got[1], ok(&["Bob moved to Oslo."]));
    assert!(got[2].is_err(), "{got:?}");
}

#[test]
fn a_reply_with_no_excerpt_list_fails_the_call_or_every_excerpt() {
    for reply in [
        "I could not find anything.",
        r#"{"excerpts": "none"}"#,
        "42",
    ] {
        assert!(parse_batch(reply, &turn_ids()).is_err(), "{reply}");
    }
    // A single cell's shape answers no excerpt.
    let single = format!(r#"{{"items": [{}]}}"#, item("Alice adopted Rex.", "a0"));
    assert!(texts(&single).iter().all(Result::is_err));
}
