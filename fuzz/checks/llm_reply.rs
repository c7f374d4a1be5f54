//! `llm_reply`: arbitrary bytes as an OpenAI-compatible reply body and as a model's message.
//! The chat and embeddings body parsers return a reply or a typed error, never a panic; an
//! accepted embeddings reply has one vector per input, all of one non-zero dimension, all
//! finite. `extract_json` reports offsets inside the input and a start on `{` or `[`;
//! `parse_items` keeps only items within the paper's field limits.

#![allow(
    clippy::expect_used,
    reason = "a failed expectation is a finding: the fuzzer and the corpus test report it"
)]

use memforest_llm::items::{parse_items, MAX_KEYS, MAX_TOPICS};
use memforest_llm::json::{extract_json, JsonExtractError};
use memforest_llm::reply::{parse_chat_reply, parse_embedding_reply};

/// Runs the check on one input.
pub fn check(data: &[u8]) {
    let _ = parse_chat_reply(data, 0);
    let inputs = usize::from(data.first().copied().unwrap_or(0) % 4);
    if let Ok(reply) = parse_embedding_reply(data, inputs, 0, None) {
        assert_eq!(reply.vectors.len(), inputs, "one vector per input");
        let dims = reply.vectors.first().map_or(1, Vec::len);
        assert!(dims > 0, "empty vectors accepted");
        for vector in &reply.vectors {
            assert_eq!(vector.len(), dims, "ragged vectors accepted");
            assert!(
                vector.iter().all(|x| x.is_finite()),
                "non-finite value accepted"
            );
        }
    }

    let text = String::from_utf8_lossy(data);
    match extract_json(&text) {
        Ok(payload) => {
            let first = text.get(payload.start..).and_then(|s| s.chars().next());
            assert!(
                matches!(first, Some('{' | '[')),
                "payload start {} is not a bracket",
                payload.start
            );
            if let Some(cut) = payload.truncated {
                assert!(
                    cut.at <= text.len() && cut.at > payload.start,
                    "truncation offset {} outside the input",
                    cut.at
                );
            }
        }
        Err(
            JsonExtractError::Malformed { offset, .. } | JsonExtractError::Truncated { offset },
        ) => {
            assert!(offset <= text.len(), "error offset {offset} past the input");
        }
        Err(JsonExtractError::NoJson) => assert!(!text.contains(['{', '[']), "missed a candidate"),
    }
    if let Ok(parsed) = parse_items(&text, &["t0".to_owned()]) {
        for item in &parsed.items {
            assert!(!item.fact_text.trim().is_empty(), "empty fact_text kept");
            assert!(item.topics.len() <= MAX_TOPICS, "too many topics");
            for keys in [
                &item.attribute_keys,
                &item.domain_keys,
                &item.collection_keys,
            ] {
                assert!(keys.len() <= MAX_KEYS, "too many keys");
            }
            if let (Some(start), Some(end)) = (item.time_start, item.time_end) {
                assert!(start <= end, "reversed time range kept");
            }
            assert!(
                item.source_turns.iter().all(|t| t == "t0"),
                "foreign source turn kept"
            );
        }
    }
}
