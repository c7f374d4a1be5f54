//! The files of a database directory that the manifest does not list, and what an open
//! does with each: delete it only when it is provably garbage, set it aside (quarantine)
//! otherwise. Nothing else in the directory is touched.
//!
//! Provably garbage:
//! - a segment file the manifest itself removed from the live set ([`Edit::DeleteSegment`],
//!   a compaction's input, or carried by a snapshot as [`Edit::Obsolete`]): ids are never
//!   reused, so a later record cannot bring it back;
//! - a segment file every entry of which (key, seqno, kind and value) is also in a live
//!   segment file or in the replayed WAL: the output of a flush or compaction whose
//!   manifest commit a crash cut off, or a torn manifest record's files;
//! - an unfinished segment file (`<id>.sst.tmp`, renamed into place only once complete)
//!   and `CURRENT.tmp`;
//! - a manifest other than the current one, when the current one was read whole.
//!
//! Any other unlisted segment file (one that does not open, or holds an entry found
//! nowhere else) is renamed to `<name>.quarantine`: damage, reported by `Db::verify`,
//! [`crate::OpenReport`] and `memforest stats`, and adopted again by `Db::repair`.
//!
//! [`Edit::DeleteSegment`]: crate::manifest::Edit::DeleteSegment
//! [`Edit::Obsolete`]: crate::manifest::Edit::Obsolete

use std::path::Path;

use memforest_io::Storage;
use memforest_sst::{EntrySource, Kind, SstReader};

use crate::error::{Error, Result};
use crate::manifest::{self, ManifestState, CURRENT};
use crate::memtable::MemTable;
use crate::version::Version;

/// Suffix of a segment file set aside at open.
pub const QUARANTINE_SUFFIX: &str = ".quarantine";

/// Suffix of a segment file a repair set aside as another store's (`<id>.sst.foreign`,
/// `RepairReport::foreign`): never adopted, never deleted.
pub const FOREIGN_SUFFIX: &str = ".foreign";

/// What becomes of one unlisted file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// Deleted: provably garbage, for the reason given.
    Garbage(String),
    /// Renamed to `<name>.quarantine`, for the reason given.
    Quarantine(String),
}

/// One unlisted file and its fate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlisted {
    /// File name in the database directory.
    pub name: String,
    /// What an open does with it.
    pub fate: Fate,
}

/// The live data an unlisted segment file is checked against.
pub(crate) struct Live<'a> {
    /// The segment files the manifest lists.
    pub version: &'a Version,
    /// The WAL's batches above the flushed seqno.
    pub mem: &'a MemTable,
    /// For a read-only open beside a possible writer, the newest seqno it read (manifest
    /// and WAL): an unlisted segment file whose entries missing from the live files are
    /// all newer is the writer's output that the manifest did not list yet when it was
    /// read (a flush racing the open), not damage, and is left out.
    pub view: Option<u64>,
}

impl Live<'_> {
    /// Whether this exact version of `key` is live.
    fn holds(&self, key: &[u8], seqno: u64, kind: Kind, value: &[u8]) -> Result<bool> {
        let same = |found: Option<(u64, Kind, bytes::Bytes)>| {
            found.is_some_and(|(s, k, v)| s == seqno && k == kind && &v[..] == value)
        };
        if same(self.mem.get(key, seqno)) {
            return Ok(true);
        }
        Ok(same(self.version.get(key, seqno)?))
    }
}

/// The largest file id any name in `names` carries (segment files, quarantined or
/// unfinished ones, manifests), so a new file never reuses one.
#[must_use]
pub fn max_file_id(names: &[String]) -> u64 {
    names
        .iter()
        .filter_map(|n| {
            let base = n.strip_suffix(QUARANTINE_SUFFIX).unwrap_or(n);
            let base = base.strip_suffix(FOREIGN_SUFFIX).unwrap_or(base);
            let base = base.strip_suffix(".tmp").unwrap_or(base);
            segment_id(base).or_else(|| manifest::parse_file_name(base))
        })
        .max()
        .unwrap_or(0)
}

/// The id of a segment file name as [`memforest_sst::file_name`] writes it (`<20
/// digits>.sst`); other names are not ours.
pub(crate) fn segment_id(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".sst")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Decides the fate of every unlisted file among `names` (the directory's entries).
/// `torn` says the current manifest's last record was dropped: other manifests are then
/// left alone (`Db::repair` may want them). A segment file newer than `live`'s view is
/// left out (see [`Live::view`]).
///
/// # Errors
/// Corruption of a live segment file met while checking an unlisted one.
pub(crate) fn survey(
    fs: &dyn Storage,
    dir: &Path,
    names: &[String],
    state: &ManifestState,
    current: u64,
    torn: bool,
    live: &Live<'_>,
) -> Result<Vec<Unlisted>> {
    let mut out = Vec::new();
    for name in names {
        let fate = if name == "CURRENT.tmp" {
            Some(Fate::Garbage(format!("an unfinished {CURRENT}")))
        } else if name.strip_suffix(".tmp").and_then(segment_id).is_some() {
            Some(Fate::Garbage("an unfinished segment file".into()))
        } else if let Some(id) = segment_id(name) {
            if state.segments.iter().any(|(_, s)| s.id == id) {
                None
            } else if state.obsolete.contains(&id) {
                Some(Fate::Garbage(
                    "the manifest removed it from the live set".into(),
                ))
            } else {
                check_redundant(fs, &dir.join(name), live)?
            }
        } else if let Some(id) = manifest::parse_file_name(name) {
            (id != current && !torn).then(|| Fate::Garbage("a superseded manifest".into()))
        } else {
            None
        };
        if let Some(fate) = fate {
            out.push(Unlisted {
                name: name.clone(),
                fate,
            });
        }
    }
    Ok(out)
}

/// Garbage when every entry of the segment file at `path` is live; none (left out) when
/// the entries that are not are all newer than `live`'s view ([`Live::view`]);
/// quarantine otherwise.
fn check_redundant(fs: &dyn Storage, path: &Path, live: &Live<'_>) -> Result<Option<Fate>> {
    let unreadable =
        |e: memforest_sst::SstError| Some(Fate::Quarantine(format!("does not read: {e}")));
    let reader = match SstReader::open_with(fs, path) {
        Ok(r) => r,
        Err(e) => return Ok(unreadable(e)),
    };
    let mut it = match reader.iter() {
        Ok(it) => it,
        Err(e) => return Ok(unreadable(e)),
    };
    if let Err(e) = it.seek_to_first() {
        return Ok(unreadable(e));
    }
    let (mut entries, mut elsewhere, mut newer) = (0u64, 0u64, 0u64);
    loop {
        let e = match it.next_entry() {
            Ok(Some(e)) => e,
            Ok(None) => break,
            Err(e) => return Ok(unreadable(e)),
        };
        entries += 1;
        if live.holds(&e.user_key, e.seqno, e.kind, &e.value)? {
            elsewhere += 1;
        } else if live.view.is_some_and(|v| e.seqno > v) {
            newer += 1;
        }
    }
    if newer > 0 && elsewhere + newer == entries {
        return Ok(None);
    }
    Ok(Some(if elsewhere == entries {
        Fate::Garbage(format!(
            "all {entries} entries are also in live files or the WAL"
        ))
    } else {
        Fate::Quarantine(format!(
            "{} of its {entries} entries are in no live file and not in the WAL",
            entries - elsewhere
        ))
    }))
}

/// Deletes the garbage and quarantines the rest, then syncs the directory.
///
/// # Errors
/// [`Error::Io`] naming the file; a failed rename stops before anything else is deleted.
pub(crate) fn settle(fs: &dyn Storage, dir: &Path, unlisted: &[Unlisted]) -> Result<()> {
    // Quarantine first: if a rename fails, nothing has been deleted yet.
    for u in unlisted {
        if let Fate::Quarantine(_) = u.fate {
            let from = dir.join(&u.name);
            let to = dir.join(format!("{}{QUARANTINE_SUFFIX}", u.name));
            fs.rename(&from, &to).map_err(Error::io("rename", &from))?;
        }
    }
    for u in unlisted {
        if let Fate::Garbage(_) = u.fate {
            let path = dir.join(&u.name);
            fs.remove_file(&path).map_err(Error::io("remove", &path))?;
        }
    }
    if !unlisted.is_empty() {
        manifest::sync_dir(fs, dir)?;
    }
    Ok(())
}

/// Names of the quarantined files among `names`.
#[must_use]
pub fn quarantined(names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| n.ends_with(QUARANTINE_SUFFIX))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_every_kind_of_our_file_name() {
        let names: Vec<String> = [
            "00000000000000000007.sst",
            "00000000000000000012.sst.quarantine",
            "00000000000000000009.sst.tmp",
            "MANIFEST-000011",
            "notes.sst",
            "LOCK",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(max_file_id(&names), 12);
        assert_eq!(segment_id("notes.sst"), None);
        assert_eq!(segment_id(".sst"), None);
        assert_eq!(segment_id("123.sst"), None);
    }
}
