//! What the files of a store hold, for the erasure checks of the API tests.

use std::path::Path;

/// Whether any file under `dir` (recursively) contains `needle`.
pub fn any_file_holds(dir: &Path, needle: &[u8]) -> bool {
    std::fs::read_dir(dir).unwrap().any(|e| {
        let p = e.unwrap().path();
        if p.is_dir() {
            any_file_holds(&p, needle)
        } else {
            std::fs::read(&p)
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
        }
    })
}
