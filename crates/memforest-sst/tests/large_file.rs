//! Files over 4 GiB: 64-bit offsets in handles, footer and reader.
//!
//! Writes a real 4.3 GiB file (69 values of 64 MiB, one data block each), so it is ignored
//! by default. Run it with
//! `cargo test --release -p memforest-sst --test large_file -- --ignored`
//! (needs about 4.5 GiB of free disk in the temp directory and takes tens of seconds).
//! Handle and footer encoding of offsets around `u32::MAX` are also unit-tested in
//! `block_handle.rs` and `footer.rs`, which run on every CI pass.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

use memforest_sst::{EntrySource, Kind, Lookup, SstBuilder, SstOptions, SstReader, MAX_VALUE_LEN};

#[test]
#[ignore = "writes a 4.3 GiB file; see the module docs for the command"]
fn a_file_over_4_gib_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let count = 69u8;
    let mut b = SstBuilder::new(dir.path(), 1, SstOptions::default()).unwrap();
    for i in 0..count {
        b.add(&[i], 1, Kind::Put, &vec![i; MAX_VALUE_LEN]).unwrap();
    }
    let meta = b.finish().unwrap();
    assert!(
        meta.file_size > u64::from(u32::MAX),
        "size {}",
        meta.file_size
    );
    let reader = SstReader::open(&meta.path).unwrap();
    // The last blocks start past 4 GiB.
    for i in [0, 63, 64, count - 1] {
        let Some(Lookup::Put { value, .. }) = reader.get(&[i], 5).unwrap() else {
            panic!("key {i} missing")
        };
        assert_eq!(value.len(), MAX_VALUE_LEN);
        assert!(value.iter().all(|b| *b == i), "value of key {i}");
    }
    let mut it = reader.iter().unwrap();
    it.seek(&[count - 1], 5).unwrap();
    assert_eq!(
        &it.next_entry().unwrap().unwrap().user_key[..],
        &[count - 1]
    );
    assert_eq!(reader.file_crc32().unwrap(), meta.file_crc32);
}
