//! Cost of recovering and validating the JSON in a model's extraction reply, against the
//! same-run peer `serde_json::from_str::<Value>` of the bare JSON (the least any parser must
//! do). Reported as time per reply; the ratio to the peer is the recovery overhead.
//!
//! `cargo bench -p memforest-benches --bench llm_json`

use criterion::{black_box, criterion_main, Criterion, Throughput};
use memforest_llm::items::parse_items;
use memforest_llm::json::extract_json;
use serde_json::{json, Value};

/// A reply of `n` items as a model writes it: prose, a fence, `{"items": [...]}`.
fn reply(n: usize) -> (String, String) {
    let items: Vec<Value> = (0..n)
        .map(|i| {
            json!({"fact_text": format!("Alice paid ${} for item {i} on 2023-05-{:02}.", 10 + i, 1 + i % 28),
                   "participants": ["Alice"], "origin": "user", "semantic_role": "event",
                   "entities": [format!("item {i}"), format!("${}", 10 + i)], "topics": ["shopping", "money"],
                   "time_text": "last week", "time_start": format!("2023-05-{:02}", 1 + i % 28),
                   "time_end": null, "attribute_keys": ["purchase.price"], "domain_keys": ["finance"],
                   "collection_keys": ["purchases"], "source_turns": ["t0"]})
        })
        .collect();
    let bare = json!({ "items": items }).to_string();
    (
        format!("Here are the memory items:\n```json\n{bare}\n```\n"),
        bare,
    )
}

fn bench(c: &mut Criterion) {
    let (fenced, bare) = reply(50);
    let cut = &fenced[..fenced.len() * 9 / 10];
    let turns = vec!["t0".to_owned()];
    let mut group = c.benchmark_group("llm_json_50_items");
    group.throughput(Throughput::Bytes(bare.len() as u64));
    group.bench_function("peer_serde_json_bare", |b| {
        b.iter(|| serde_json::from_str::<Value>(black_box(&bare)))
    });
    group.bench_function("extract_json_fenced", |b| {
        b.iter(|| extract_json(black_box(&fenced)))
    });
    group.bench_function("extract_json_cut_at_90pct", |b| {
        b.iter(|| extract_json(black_box(cut)))
    });
    group.bench_function("parse_items_fenced", |b| {
        b.iter(|| parse_items(black_box(&fenced), &turns))
    });
    group.finish();
}

/// Private, so the generated `pub fn` needs no doc comment.
mod group {
    criterion::criterion_group!(benches, super::bench);
}
criterion_main!(group::benches);
