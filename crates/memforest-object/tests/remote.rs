//! `Remote` against the in-memory store, through `FaultStore`: URLs, conditional creates,
//! part uploads that fail part-way, and injected failures.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::sync::Arc;

use bytes::Bytes;
use memforest_object::object_store::memory::InMemory;
use memforest_object::{Error, FaultStore, Remote};

fn faulty() -> (Arc<FaultStore>, Remote) {
    let store = Arc::new(FaultStore::new(Arc::new(InMemory::new())));
    let remote = Remote::new(Arc::clone(&store) as _, "/base/db/").unwrap();
    (store, remote)
}

#[test]
fn urls_select_the_store_and_the_prefix() {
    let remote = Remote::open("memory:///some/prefix", Vec::<(String, String)>::new()).unwrap();
    remote.put("a/b", Bytes::from_static(b"x")).unwrap();
    assert_eq!(remote.get("a/b").unwrap(), Bytes::from_static(b"x"));

    let dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", dir.path().display());
    let remote = Remote::open(&url, Vec::<(String, String)>::new()).unwrap();
    remote.put("sst/one", Bytes::from_static(b"bytes")).unwrap();
    assert_eq!(std::fs::read(dir.path().join("sst/one")).unwrap(), b"bytes");
    let listed = remote.list("sst").unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].name.as_str(), listed[0].size), ("one", 5));

    for bad in ["not a url", "nosuch://bucket/x"] {
        assert!(
            matches!(
                Remote::open(bad, Vec::<(String, String)>::new()),
                Err(Error::Url { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn a_conditional_create_succeeds_once() {
    let (_, remote) = faulty();
    remote
        .create("manifest/1", Bytes::from_static(b"first"))
        .unwrap();
    match remote.create("manifest/1", Bytes::from_static(b"second")) {
        Err(Error::AlreadyExists { object }) => assert_eq!(object, "base/db/manifest/1"),
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
    assert_eq!(
        remote.get("manifest/1").unwrap(),
        Bytes::from_static(b"first")
    );
}

#[test]
fn a_part_upload_that_fails_leaves_no_object() {
    let (store, remote) = faulty();
    let big = Bytes::from(vec![7u8; (8 << 20) * 2 + 123]);
    store.fail_puts(1);
    assert!(matches!(
        remote.put("sst/big", big.clone()),
        Err(Error::Store { op: "put", .. })
    ));
    assert!(remote.get("sst/big").is_err(), "no partial object");
    assert!(remote.list("sst").unwrap().is_empty());
    remote.put("sst/big", big.clone()).unwrap();
    assert_eq!(remote.get("sst/big").unwrap(), big);
}

#[test]
fn injected_failures_fail_one_request_each_and_requests_are_counted() {
    let (store, remote) = faulty();
    remote.put("x", Bytes::from_static(b"1")).unwrap();
    store.fail_gets(1);
    store.fail_lists(1);
    store.fail_deletes(1);
    assert!(remote.get("x").is_err());
    assert!(remote.list("").is_err());
    assert!(remote.delete("x").is_err());
    assert_eq!(remote.get("x").unwrap(), Bytes::from_static(b"1"));
    assert_eq!(remote.list("").unwrap().len(), 1);
    remote.delete("x").unwrap();
    remote.delete("x").unwrap();
    assert!(remote.list("").unwrap().is_empty());
    assert_eq!(
        (store.puts(), store.gets(), store.lists(), store.deletes()),
        (1, 2, 3, 3)
    );
}

#[test]
fn calls_and_drops_are_safe_from_another_runtime() {
    let other = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let (_, remote) = faulty();
    let remote = Arc::new(remote);
    remote.put("k", Bytes::from_static(b"v")).unwrap();
    let from_blocking = Arc::clone(&remote);
    let got = other
        .block_on(async move {
            tokio::task::spawn_blocking(move || from_blocking.get("k"))
                .await
                .unwrap()
        })
        .unwrap();
    assert_eq!(got, Bytes::from_static(b"v"));
    // Inside the other runtime's async context (a call there blocks its thread, but never
    // panics), and the last handle dropped there.
    let got = other.block_on(async move { remote.get("k") }).unwrap();
    assert_eq!(got, Bytes::from_static(b"v"));
    let (_, last) = faulty();
    other.block_on(async move { drop(last) });
}

#[test]
fn a_range_get_returns_and_counts_only_the_range() {
    let (store, remote) = faulty();
    let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    remote.put("sst/f", Bytes::from(data.clone())).unwrap();
    assert_eq!(
        remote.get_range("sst/f", 4_000..4_100).unwrap(),
        Bytes::copy_from_slice(&data[4_000..4_100])
    );
    assert_eq!((store.gets(), store.got_bytes()), (1, 100));
    remote.get("sst/f").unwrap();
    assert_eq!((store.gets(), store.got_bytes()), (2, 10_100));

    store.fail_gets(1);
    assert!(matches!(
        remote.get_range("sst/f", 0..10),
        Err(Error::Store {
            op: "get range",
            ..
        })
    ));
    assert_eq!(store.got_bytes(), 10_100);
    assert!(remote.get_range("sst/f", 9_990..10_000).is_ok());
}
