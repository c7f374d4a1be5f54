//! `sst_block_roundtrip`: bytes -> sorted entries -> block -> decode must give the entries
//! back, and seeking to each key must find it; the same bytes fed straight to the block
//! decoder must never panic.
//!
//! Input layout: byte 0 picks the restart interval (1..=32); the rest is read as entries
//! `key_len u8 | value_len u8 | key | value` until it runs out; keys are deduplicated and
//! sorted (last value wins).

#![allow(
    clippy::expect_used,
    reason = "a failed expectation is a finding: the fuzzer and the corpus test report it"
)]

use std::collections::BTreeMap;

use bytes::Bytes;
use memforest_sst::block::builder::BlockBuilder;
use memforest_sst::block::iter::BlockIter;
use memforest_sst::block::Block;

fn entries(data: &[u8]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut rest = data;
    while let [key_len, value_len, tail @ ..] = rest {
        let (k, v) = (usize::from(*key_len), usize::from(*value_len));
        if tail.len() < k + v {
            break;
        }
        let (key, tail) = tail.split_at(k);
        let (value, tail) = tail.split_at(v);
        out.insert(key.to_vec(), value.to_vec());
        rest = tail;
    }
    out
}

/// Runs the check on one input.
pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let model = entries(rest);
    let mut builder = BlockBuilder::new(usize::from(first % 32) + 1);
    for (k, v) in &model {
        builder.add(k, v).expect("small blocks always fit");
    }
    let block = Block::new(Bytes::from(builder.finish())).expect("a built block decodes");
    let mut it = BlockIter::new(block.clone());
    it.seek_to_first().expect("first entry decodes");
    let mut decoded = BTreeMap::new();
    while it.valid() {
        decoded.insert(it.key().to_vec(), it.value().to_vec());
        it.advance().expect("entry decodes");
    }
    assert_eq!(decoded, model, "round trip");
    for (k, v) in &model {
        let mut it = BlockIter::new(block.clone());
        it.seek(k, |a, b| a.cmp(b)).expect("seek decodes");
        assert!(
            it.valid() && it.key() == &k[..] && it.value() == v[..],
            "seek finds {k:?}"
        );
    }

    // Arbitrary bytes straight into the decoder: errors are fine, panics are not.
    if let Ok(block) = Block::new(Bytes::copy_from_slice(data)) {
        let mut it = BlockIter::new(block.clone());
        if it.seek_to_first().is_ok() {
            for _ in 0..data.len() {
                if !it.valid() || it.advance().is_err() {
                    break;
                }
            }
        }
        let _ = BlockIter::new(block).seek(rest, |a, b| a.cmp(b));
    }
}
