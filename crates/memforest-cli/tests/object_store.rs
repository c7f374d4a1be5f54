//! `--db URL --cache-dir DIR`: the built `memforest` binary on a store kept on an object
//! store (`file://`), written from one local directory and read from others.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use common::{fails, ok};

fn texts(out: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    v["hits"]
        .as_array()
        .or_else(|| v["memories"].as_array())
        .unwrap()
        .iter()
        .map(|h| h["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_store_on_an_object_store_is_written_and_read_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let url = common::object_store_url(tmp.path());
    let cache = |name: &str| tmp.path().join(name).to_str().unwrap().to_owned();
    let (writer, reader, other_writer) = (cache("writer"), cache("reader"), cache("writer2"));

    let at = |dir: &str| ["--db", url.as_str(), "--cache-dir", dir].map(str::to_owned);
    let run = |args: &[&str], dir: &str| {
        let mut all: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        all.extend(at(dir));
        ok(&all.iter().map(String::as_str).collect::<Vec<_>>())
    };
    run(
        &[
            "add",
            "--user",
            "alice",
            "--session",
            "s1",
            "--json",
            "My cat is called Miso.",
        ],
        &writer,
    );
    // Another machine's directory reads it from the object store (a replica).
    let hits = texts(&run(
        &[
            "search",
            "--user",
            "alice",
            "--json",
            "What is my cat called?",
        ],
        &reader,
    ));
    assert!(hits.iter().any(|t| t.contains("Miso")), "{hits:?}");
    let listed = texts(&run(&["list", "--user", "alice", "--json"], &reader));
    assert!(listed.iter().any(|t| t.contains("Miso")), "{listed:?}");
    let stats = run(&["stats", "--json"], &reader);
    assert!(stats.contains("alice"), "{stats}");
    // A replica whose cache keeps no file fetches what each read needs.
    let hits = texts(&run(
        &[
            "search",
            "--user",
            "alice",
            "--json",
            "--cache-max-mib",
            "0",
            "What is my cat called?",
        ],
        &cache("bounded"),
    ));
    assert!(hits.iter().any(|t| t.contains("Miso")), "{hits:?}");

    // A writer on a new directory continues the store; the reader's next open sees both.
    run(
        &[
            "add",
            "--user",
            "alice",
            "--session",
            "s2",
            "--json",
            "I moved to Lisbon.",
        ],
        &other_writer,
    );
    let listed = texts(&run(&["list", "--user", "alice", "--json"], &reader));
    assert!(
        listed.iter().any(|t| t.contains("Lisbon")) && listed.iter().any(|t| t.contains("Miso")),
        "{listed:?}"
    );
}

#[test]
fn object_store_flags_that_do_not_fit_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let url = format!("file://{dir}/objects");
    // `memforest list --user alice --db DB` and `flags`: its error.
    let list = |db: &str, flags: &[&str]| {
        let mut args = vec!["list", "--user", "alice", "--db", db];
        args.extend(flags);
        fails(&args)
    };
    let e = list(&url, &[]);
    assert!(e.contains("needs --cache-dir"), "{e}");
    let e = list(dir, &["--cache-dir", dir]);
    assert!(e.contains("are for a store on an object store"), "{e}");
    let e = list(dir, &["--cache-max-mib", "8"]);
    assert!(e.contains("are for a store on an object store"), "{e}");
    let e = list("memory://", &["--cache-dir", dir]);
    assert!(e.contains("gone when the command exits"), "{e}");
    // A cache inside the location (or holding it) would delete the location's files,
    // however the two are spelled: through a symbolic link, with percent-escapes.
    std::fs::create_dir_all(format!("{dir}/objects/sst")).unwrap();
    std::os::unix::fs::symlink(format!("{dir}/objects"), format!("{dir}/link")).unwrap();
    for (db, cache) in [
        (url.clone(), format!("{dir}/objects/cache")),
        (url.clone(), format!("{dir}/objects/./")),
        (url.clone(), dir.to_owned()),
        (url.clone(), format!("{dir}/link/sst")),
        (
            format!("file://{dir}/obj%65cts"),
            format!("{dir}/objects/sst"),
        ),
    ] {
        let e = list(&db, &["--cache-dir", &cache]);
        assert!(e.contains("overlap"), "{db} {cache}: {e}");
    }
    for one_slash in ["file:/abs/dir", "s3:/bucket/x", "file:relative"] {
        let e = list(one_slash, &[]);
        assert!(e.contains("two slashes"), "{one_slash}: {e}");
    }
    for relative in ["file://", "file://objects"] {
        let e = list(relative, &["--cache-dir", dir]);
        assert!(
            e.contains("--db") && e.contains("needs an absolute path"),
            "{e}"
        );
    }
    // An object store without a store: nothing to read, nothing to maintain.
    let e = list(&url, &["--cache-dir", &format!("{dir}/cache")]);
    assert!(e.contains("holds no MemForest manifest"), "{e}");
}

/// The directory of a writer with a bounded cache holds only part of the store: `repair`
/// on it alone is refused; `repair`, `compact` (which collects the location's garbage)
/// and `verify` with the location work, and nothing the writer added is lost.
#[test]
fn repair_and_verify_take_the_location() {
    let tmp = tempfile::tempdir().unwrap();
    let url = format!("file://{}/objects", tmp.path().display());
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_owned();
    let writer = dir("writer");
    for (session, text) in [
        ("s1", "My cat is called Miso."),
        ("s2", "I moved to Lisbon."),
    ] {
        ok(&[
            "add",
            "--user",
            "alice",
            "--session",
            session,
            "--db",
            &url,
            "--cache-dir",
            &writer,
            "--cache-max-mib",
            "0",
            text,
        ]);
    }
    let e = fails(&["repair", "--db", &writer]);
    assert!(e.contains("belongs to a store on an object store"), "{e}");
    ok(&[
        "repair",
        "--db",
        &url,
        "--cache-dir",
        &writer,
        "--cache-max-mib",
        "0",
    ]);
    // compact collects the location's garbage, under the default grace: nothing yet.
    let compacted: serde_json::Value = serde_json::from_str(&ok(&[
        "compact",
        "--json",
        "--db",
        &url,
        "--cache-dir",
        &writer,
    ]))
    .unwrap();
    assert_eq!(
        compacted["remote_gc"]["manifests_deleted"], 0,
        "{compacted}"
    );
    assert_eq!(compacted["remote_gc"]["segments_deleted"], 0, "{compacted}");
    let verified = ok(&["verify", "--db", &url, "--cache-dir", &dir("verifier")]);
    assert!(verified.starts_with("clean"), "{verified}");
    let listed = texts(&ok(&[
        "list",
        "--user",
        "alice",
        "--json",
        "--db",
        &url,
        "--cache-dir",
        &dir("reader"),
    ]));
    assert!(
        listed.iter().any(|t| t.contains("Miso")) && listed.iter().any(|t| t.contains("Lisbon")),
        "{listed:?}"
    );
}
