//! An empty directory path names no store: every open refuses it, saying so, before
//! anything is written (file names joined to `""` would land in the process's current
//! directory, and listing `""` fails with `NotFound`, which reads as an empty directory).
//! Its own test binary: it changes the process's current directory.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use memforest_engine::{Db, Error, Options};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_empty_path_is_refused_and_nothing_is_written_in_the_current_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), b"not a store").unwrap();
    std::env::set_current_dir(tmp.path()).unwrap();

    let refusals = [
        ("open", Db::open("", Options::default()).err()),
        (
            "open_read_only",
            Db::open_read_only("", Options::default()).err(),
        ),
        ("repair", Db::repair("", Options::default()).err()),
    ];
    for (what, err) in refusals {
        let Some(err) = err else {
            panic!("{what}(\"\") succeeded");
        };
        assert!(matches!(err, Error::InvalidArgument(_)), "{what}: {err:?}");
        assert!(err.to_string().contains("path is empty"), "{what}: {err}");
    }
    assert_eq!(names(tmp.path()), ["notes.txt"]);
}
