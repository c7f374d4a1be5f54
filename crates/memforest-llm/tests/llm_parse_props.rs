//! Property tests: the model-reply parsers never panic on arbitrary input, and a reply cut
//! at any byte yields exactly the complete items before the cut.
#![allow(clippy::unwrap_used, clippy::panic)]

use memforest_llm::items::parse_items;
use memforest_llm::json::{extract_json, JsonExtractError};
use memforest_llm::reply::{parse_chat_reply, parse_embedding_reply};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Text drawn mostly from JSON's own punctuation, so the parsers reach deep states.
fn jsonish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            8 => proptest::sample::select(vec![
                "{", "}", "[", "]", "\"", ":", ",", "\\", "```", "```json\n", " ", "\n", "1", "-2.5e3",
                "true", "null", "\"items\"", "\"fact_text\"", "\"choices\"", "\"message\"",
                "\"content\"", "\"data\"", "\"embedding\"", "\"index\"", "\"usage\"", "\u{e9}",
                "\"time_start\"", "\"2023-05-07\"", "\"topics\"",
            ])
            .prop_map(str::to_owned),
            1 => any::<String>(),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn items_strategy() -> impl Strategy<Value = Vec<Value>> {
    let text = "[a-zA-Z0-9 ,.:{}\\[\\]\"\\\\\u{e9}\u{4e2d}]{0,12}";
    let item = (text, proptest::collection::vec(text, 0..3), any::<bool>()).prop_map(
        |(fact, topics, plan)| {
            json!({"fact_text": format!("F{fact}"), "topics": topics,
               "semantic_role": if plan { "plan" } else { "event" }, "time_start": null})
        },
    );
    proptest::collection::vec(item, 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn parsers_never_panic_on_jsonish_text(text in jsonish()) {
        let _ = extract_json(&text);
        let _ = parse_items(&text, &["t0".to_owned()]);
        let _ = parse_chat_reply(text.as_bytes(), 3);
        let _ = parse_embedding_reply(text.as_bytes(), 2, 3, None);
        let _ = parse_embedding_reply(text.as_bytes(), 1, 3, Some(4));
    }

    #[test]
    fn parsers_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_chat_reply(&bytes, 0);
        let _ = parse_embedding_reply(&bytes, 3, 0, None);
        let text = String::from_utf8_lossy(&bytes);
        let _ = extract_json(&text);
        let _ = parse_items(&text, &[]);
    }

    /// Serialize items (bare array or `{"items": [...]}`, behind prose and a fence), cut at
    /// any char boundary inside the JSON: the recovered items are exactly those whose closing
    /// brace is before the cut; a cut before the array opens recovers nothing.
    #[test]
    fn cut_replies_keep_exactly_the_complete_items(
        items in items_strategy(),
        wrapped in any::<bool>(),
        fenced in any::<bool>(),
        cut_seed in any::<prop::sample::Index>(),
    ) {
        let array = Value::Array(items.clone());
        let json_text = if wrapped { json!({"items": array}).to_string() } else { array.to_string() };
        let prefix = if fenced { "Here you go:\n```json\n" } else { "Sure. " };
        let reply = format!("{prefix}{json_text}");
        let boundaries: Vec<usize> = (prefix.len()..=reply.len()).filter(|&i| reply.is_char_boundary(i)).collect();
        let cut = boundaries[cut_seed.index(boundaries.len())];
        let cut_reply = &reply[..cut];

        // Where each item ends (exclusive), found by re-serializing the prefix of the array.
        let array_open = prefix.len() + json_text.find('[').unwrap();
        let item_ends: Vec<usize> = (1..=items.len())
            .map(|k| array_open + Value::Array(items[..k].to_vec()).to_string().len() - 1)
            .collect();

        match extract_json(cut_reply) {
            Ok(payload) => {
                let got = if wrapped { payload.value["items"].clone() } else { payload.value.clone() };
                let complete = item_ends.iter().filter(|&&end| end <= cut).count();
                prop_assert_eq!(got, Value::Array(items[..complete].to_vec()), "cut at {} of {:?}", cut, reply);
                prop_assert_eq!(payload.truncated.is_none(), cut == reply.len());
            }
            Err(JsonExtractError::Truncated { offset }) => {
                prop_assert!(cut <= array_open, "cut at {} after the array opened at {}: {:?}", cut, array_open, reply);
                prop_assert_eq!(offset, cut);
            }
            Err(JsonExtractError::NoJson) => prop_assert!(cut <= array_open),
            Err(other) => prop_assert!(false, "{:?} for {:?}", other, cut_reply),
        }
    }
}
