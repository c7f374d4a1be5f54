//! `manifest_replay`: arbitrary bytes as an engine manifest (log number 1), as one manifest
//! record payload, and as a `CURRENT` file. Replay gives a state or an error naming an
//! offset inside the input, never a panic; a replayed state written back as a snapshot
//! manifest replays to the same state; cutting the input at the end of its last whole
//! record (as the next append does after a torn tail) replays to the same state with
//! nothing torn; a record payload that decodes re-encodes to the same bytes (but for the
//! version byte, which becomes the current one).

#![allow(
    clippy::expect_used,
    reason = "a failed expectation is a finding: the fuzzer and the corpus test report it"
)]

use memforest_engine::manifest::{decode_record, encode_record, parse_current, replay};
use memforest_wal::LogWriter;

/// Runs the check on one input.
pub fn check(data: &[u8]) {
    match replay(data, 1) {
        Ok(replayed) => {
            let state = &replayed.state;
            let mut writer = LogWriter::new(Vec::new(), 9);
            let payload = encode_record(&state.snapshot()).expect("a replayed state encodes");
            writer.add_record(&payload).expect("writing to a Vec");
            let again = replay(&writer.into_inner(), 9).expect("a snapshot replays");
            let mut a = state.segments.clone();
            let mut b = again.state.segments.clone();
            a.sort_by_key(|(_, s)| s.id);
            b.sort_by_key(|(_, s)| s.id);
            assert_eq!(a, b, "snapshot round trip changed the segments");
            assert_eq!(state.flushed_seqno, again.state.flushed_seqno);
            assert_eq!(state.next_file_id, again.state.next_file_id);
            assert_eq!(
                state.wal, again.state.wal,
                "snapshot round trip changed the WAL"
            );
            assert_eq!(state.wal_tracked, again.state.wal_tracked);
            assert_eq!(state.obsolete, again.state.obsolete);
            // Cutting the file where the replay says the last whole record ends (what the
            // next append does) leaves the same state and nothing torn.
            let len = usize::try_from(replayed.valid_len).expect("fits");
            let head = data.get(..len).expect("valid_len is within the input");
            let cut = replay(head, 1).expect("the whole records replay again");
            assert_eq!(&cut.state, state, "cutting the tail changed the state");
            assert_eq!(cut.torn_tail, None, "a cut file has no torn tail");
            if let Some((offset, _)) = replayed.torn_tail {
                assert!(
                    offset >= replayed.valid_len,
                    "the torn tail follows the records"
                );
            }
        }
        Err((offset, _)) => assert!(offset <= data.len() as u64, "error offset past the input"),
    }
    if let Ok(edits) = decode_record(data) {
        // Every readable version encodes its edits alike; only the version byte changes.
        let back = encode_record(&edits).expect("decoded edits encode");
        assert_eq!(
            back.get(1..),
            data.get(1..),
            "decode -> encode is not the identity"
        );
    }
    let _ = parse_current(data);
}
