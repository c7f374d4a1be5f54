//! `OpenAiExtractor` against replies a real model wrote to its real prompts.
//!
//! The cells are the conversations of the knowledge-update suite
//! (`memforest/tests/data/knowledge_updates.json`), one cell per conversation day. The
//! replies in `tests/data/recorded/` were recorded from a model served by an
//! OpenAI-compatible server on 127.0.0.1, one cell per call (`Extractor::extract`) or
//! several (`Extractor::extract_batch`); the header line of each file names the model,
//! the server and the call, and `tests/data/recorded/README.md` says how to record again.
//! Each reply is served back by a local HTTP server to the extractor, which must map it
//! to items that name only their cell's turns, or refuse it (a whole reply, or one
//! excerpt of a batched reply) as unusable, so that the cell stays pending, and never
//! fail otherwise.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod llm_support;

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

use chrono::{NaiveDate, TimeZone, Utc};
use llm_support::{chat_body, Reply, TestServer};
use memforest::memory::extract::{CellTurn, ExtractedItem, ExtractionInput, Extractor};
use memforest::memory::model::ModelError;
use memforest::memory::session::Role;
use memforest_llm::{ChatMessage, LlmClient, LlmConfig, OpenAiExtractor};
use serde_json::{json, Value};

/// One recorded exchange: the cells' indexes in [`cells`], the user prompt sent, the reply.
#[derive(Debug, serde::Deserialize)]
struct Exchange {
    cells: Vec<usize>,
    prompt: String,
    reply: String,
}

/// The first line of a recording.
#[derive(Debug, serde::Deserialize)]
struct Header {
    model: String,
    server: String,
    /// `extract` (one cell per call) or `extract_batch`.
    call: String,
    system: String,
}

/// What the extractor sends for `inputs` in a recording of `call`.
fn messages(call: &str, inputs: &[ExtractionInput]) -> [ChatMessage; 2] {
    match (call, inputs) {
        ("extract", [one]) => OpenAiExtractor::messages(one),
        ("extract_batch", _) => OpenAiExtractor::batch_messages(inputs),
        _ => panic!("a recording of {call} with {} cells", inputs.len()),
    }
}

/// The cells at `indexes`.
fn pick(cells: &[ExtractionInput], indexes: &[usize]) -> Vec<ExtractionInput> {
    indexes.iter().map(|&i| cells[i].clone()).collect()
}

fn suite() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../memforest/tests/data/knowledge_updates.json"
    );
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The suite's cells: each conversation's messages of one day, in order; the user is
/// Alice, as in the suite's own test.
fn cells() -> Vec<ExtractionInput> {
    let mut out = Vec::new();
    for (case, conv) in suite().iter().enumerate() {
        let mut days: Vec<(String, Vec<CellTurn>)> = Vec::new();
        for m in conv["messages"].as_array().unwrap() {
            let (date, role, text) = (
                m[0].as_str().unwrap(),
                m[1].as_str().unwrap(),
                m[2].as_str().unwrap(),
            );
            let day = NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
            let time = Utc
                .from_utc_datetime(&day.and_hms_opt(12, 0, 0).unwrap())
                .timestamp_micros();
            if days.last().is_none_or(|d| d.0 != date) {
                days.push((date.to_owned(), Vec::new()));
            }
            let (_, turns) = days.last_mut().unwrap();
            let user = role == "user";
            turns.push(CellTurn {
                turn_id: format!("c{case}-{date}#turn_{}", turns.len()),
                role: if user { Role::User } else { Role::Assistant },
                speaker: if user { "Alice".into() } else { String::new() },
                text: text.to_owned(),
                time: time + turns.len() as i64 * 60_000_000,
            });
        }
        for (date, turns) in days {
            out.push(ExtractionInput {
                session_id: format!("c{case}-{date}"),
                session_start: turns[0].time,
                turns,
            });
        }
    }
    out
}

fn recordings() -> Vec<(Header, Vec<Exchange>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/recorded");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no recording in {dir}");
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let mut lines = text.lines();
            let header = serde_json::from_str(lines.next().unwrap()).unwrap();
            let exchanges = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
            (header, exchanges)
        })
        .collect()
}

#[test]
fn the_recorded_prompts_are_the_ones_sent_today() {
    let cells = cells();
    for (header, exchanges) in recordings() {
        assert!(!exchanges.is_empty());
        for x in &exchanges {
            let [system, user] = messages(&header.call, &pick(&cells, &x.cells));
            assert_eq!(
                header.system, system.content,
                "the {} prompt changed since {} was recorded: record again \
                 (tests/data/recorded/README.md)",
                header.call, header.model
            );
            assert_eq!(x.prompt, user.content, "cells {:?}", x.cells);
        }
    }
}

/// Checks the items of cell `cell`: a fact text, source turns of the cell only, no empty
/// key; returns how many.
fn check_items(cell: &ExtractionInput, items: &[ExtractedItem]) -> usize {
    let ids: BTreeSet<&str> = cell.turns.iter().map(|t| t.turn_id.as_str()).collect();
    for item in items {
        assert!(!item.fact_text.trim().is_empty(), "{}", cell.session_id);
        assert!(
            item.source_turns.iter().all(|t| ids.contains(t.as_str())),
            "{}: {:?} outside {ids:?}",
            cell.session_id,
            item.source_turns
        );
        assert!(
            item.attribute_keys.iter().all(|k| !k.trim().is_empty()),
            "{}",
            cell.session_id
        );
    }
    items.len()
}

#[test]
fn every_recorded_reply_is_mapped_to_the_cells_turns_or_refused() {
    let cells = cells();
    let mut mapped = 0;
    for (header, exchanges) in recordings() {
        let script = exchanges
            .iter()
            .map(|x| Reply::json(200, &chat_body(&x.reply, None)))
            .collect();
        let server = TestServer::start(script);
        let config = LlmConfig::new(server.base_url(), header.model.clone()).with_retries(
            0,
            Duration::ZERO,
            Duration::ZERO,
        );
        let extractor = OpenAiExtractor::new(config).unwrap();
        let (mut usable, mut items) = (0, 0);
        for x in &exchanges {
            let inputs = pick(&cells, &x.cells);
            let results = if header.call == "extract" {
                vec![extractor.extract(&inputs[0]).map(|e| e.items)]
            } else {
                match extractor.extract_batch(&inputs) {
                    Ok(batch) => batch.cells,
                    Err(e) => vec![Err(e)],
                }
            };
            for (cell, result) in inputs.iter().zip(results) {
                match result {
                    Ok(got) => {
                        usable += 1;
                        items += check_items(cell, &got);
                    }
                    Err(ModelError::Malformed { .. }) => {}
                    Err(e) => panic!("{}: {e} ({})", cell.session_id, x.reply),
                }
            }
        }
        let asked: usize = exchanges.iter().map(|x| x.cells.len()).sum();
        eprintln!(
            "{} ({}, {}): {usable} of {asked} cells usable, {items} items",
            header.model, header.server, header.call,
        );
        assert_eq!(server.requests().len(), exchanges.len());
        mapped += items;
    }
    assert!(mapped > 0, "no recorded reply gave an item");
}

/// Longest reply recorded, in tokens: a deployment bounds replies, and a reply cut short
/// is one of the cases the extractor recovers from (`json::extract_json`).
const MAX_TOKENS: u32 = 400;

/// Records the replies of the model at `MEMFOREST_RECORD_URL` (an OpenAI-compatible `/v1`
/// root) named `MEMFOREST_RECORD_MODEL` to the suite's first `MEMFOREST_RECORD_CELLS`
/// cells (default all), one per call, or `MEMFOREST_RECORD_BATCH` per batched call when
/// set, into `tests/data/recorded/<model>.jsonl` (`<model>.batch.jsonl`); the header line
/// takes `MEMFOREST_RECORD_SERVER`, a description of the server.
#[test]
#[ignore = "records from a live model server; run by hand (tests/data/recorded/README.md)"]
fn record() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let (url, model) = (var("MEMFOREST_RECORD_URL"), var("MEMFOREST_RECORD_MODEL"));
    let server = var("MEMFOREST_RECORD_SERVER");
    let cells = cells();
    let take = std::env::var("MEMFOREST_RECORD_CELLS").map_or(cells.len(), |n| n.parse().unwrap());
    let config = LlmConfig {
        max_tokens: Some(MAX_TOKENS),
        ..LlmConfig::new(url, model.clone()).with_timeout(Duration::from_secs(600))
    };
    let client = LlmClient::new(config).unwrap();
    let batch: Option<usize> = std::env::var("MEMFOREST_RECORD_BATCH")
        .ok()
        .map(|n| n.parse().unwrap());
    let (call, suffix) = match batch {
        Some(_) => ("extract_batch", ".batch"),
        None => ("extract", ""),
    };
    let path = format!(
        "{}/tests/data/recorded/{}{suffix}.jsonl",
        env!("CARGO_MANIFEST_DIR"),
        model.replace(['/', ':'], "_")
    );
    let mut out = std::fs::File::create(&path).unwrap();
    let indexes: Vec<usize> = (0..take.min(cells.len())).collect();
    let calls: Vec<&[usize]> = indexes.chunks(batch.unwrap_or(1).max(1)).collect();
    for (n, chunk) in calls.iter().enumerate() {
        let [system, user] = messages(call, &pick(&cells, chunk));
        if n == 0 {
            let header = json!({"model": model, "server": server, "call": call,
                                "system": system.content});
            writeln!(out, "{header}").unwrap();
        }
        let reply = client.chat(&[system, user.clone()]).unwrap();
        let line = json!({"cells": chunk, "prompt": user.content, "reply": reply.content});
        writeln!(out, "{line}").unwrap();
        eprintln!("call {} of {}", n + 1, calls.len());
    }
}
