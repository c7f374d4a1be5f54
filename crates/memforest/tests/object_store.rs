//! A memory store whose engine keeps its files on an object store (`engine.remote`): what
//! one machine flushed, another continues from an empty directory, and a read replica of
//! the engine serves it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use std::sync::Arc;

use memforest::{Memory, Message, Options, SearchOptions};
use memforest_object::object_store::memory::InMemory;
use memforest_object::Remote;

fn options(store: &Arc<InMemory>) -> Options {
    let mut options = Options::default();
    options.engine.remote = Some(Arc::new(
        Remote::new(Arc::clone(store) as _, "memories").unwrap(),
    ));
    options
}

#[test]
fn a_new_machine_continues_a_memory_store_from_the_object_store() {
    let store = Arc::new(InMemory::new());
    let first = tempfile::tempdir().unwrap();
    let mem = Memory::open_with(first.path(), options(&store)).unwrap();
    mem.add(
        "alice",
        "s1",
        &[
            Message::user("My cat is called Miso and she loves tuna."),
            Message::assistant("Miso sounds lovely!"),
        ],
    )
    .unwrap();
    mem.flush_summaries().unwrap();
    mem.db().flush().unwrap();
    mem.close().unwrap();
    drop(first);

    let second = tempfile::tempdir().unwrap();
    let mem = Memory::open_with(second.path(), options(&store)).unwrap();
    let hits = mem
        .search("alice", "What is my cat called?", &SearchOptions::default())
        .unwrap();
    assert!(hits.iter().any(|h| h.text.contains("Miso")), "{hits:?}");
    mem.add(
        "alice",
        "s2",
        &[Message::user("I moved to Lisbon last spring.")],
    )
    .unwrap();
    mem.db().flush().unwrap();

    let replica_dir = tempfile::tempdir().unwrap();
    let replica =
        memforest_engine::Db::open_replica(replica_dir.path(), options(&store).engine).unwrap();
    assert!(
        !replica.tenants().unwrap().is_empty(),
        "the replica serves the store"
    );
    mem.close().unwrap();
}

#[test]
fn a_replica_memory_serves_what_the_writer_publishes_after_a_refresh() {
    let store = Arc::new(InMemory::new());
    let writer_dir = tempfile::tempdir().unwrap();
    let writer = Memory::open_with(writer_dir.path(), options(&store)).unwrap();
    writer
        .add("alice", "s1", &[Message::user("My cat is called Miso.")])
        .unwrap();
    writer.db().flush().unwrap();

    let replica_dir = tempfile::tempdir().unwrap();
    let replica = Memory::open_replica(replica_dir.path(), options(&store)).unwrap();
    assert!(replica.is_read_only());
    let search = |q: &str| {
        replica
            .search("alice", q, &SearchOptions::default())
            .unwrap()
    };
    assert!(search("What is my cat called?")
        .iter()
        .any(|h| h.text.contains("Miso")));
    // Asked before the memory exists. The recall caches' generations are process-wide,
    // so in this process the writer's own adds invalidate them too; a replica in a
    // process of its own (`memforest serve --read-only`, crates/memforest-cli/tests/serve.rs)
    // depends on the refresh's invalidation alone.
    assert!(!search("Where did I move to, Lisbon?")
        .iter()
        .any(|h| h.text.contains("Lisbon")));
    assert!(!replica.refresh().unwrap(), "nothing new published yet");

    writer
        .add(
            "alice",
            "s2",
            &[Message::user("I moved to Lisbon last spring.")],
        )
        .unwrap();
    writer.db().flush().unwrap();
    assert!(replica.refresh().unwrap());
    let hits = search("Where did I move to, Lisbon?");
    assert!(hits.iter().any(|h| h.text.contains("Lisbon")), "{hits:?}");
    assert!(
        replica
            .add("alice", "s3", &[Message::user("refused")])
            .is_err(),
        "a replica refuses writes"
    );
    replica.close().unwrap();
    writer.close().unwrap();
}
