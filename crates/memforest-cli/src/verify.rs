//! `verify`: checks every checksum of every file of a store and every tree's invariants.
//!
//! 1. `CURRENT` and the manifest: decoded record by record ([`manifest::load`]).
//! 2. Every segment file the manifest lists: size as recorded, footer, properties, bloom
//!    filter and index blocks ([`SstReader::open`]), then every data block (iterating
//!    every entry checks each block's checksum).
//! 3. The WAL: every segment replayed under `AbsoluteConsistency`, which refuses any
//!    damaged record ([`walcmd::check`]).
//! 4. With the files clean, the store is opened and every MemTree of every tenant is
//!    opened and checked ([`MemTree::verify`]: key order, time ranges, fill, parent
//!    links, dirty counts).
//!
//! The first damage found is returned as [`CliError::Damage`] naming the file and offset.

use std::path::Path;

use memforest_engine::manifest;
use memforest_engine::{Durability, EngineNodeStore, Table, WAL_DIR};
use memforest_sst::{EntrySource, SstError, SstReader};
use memforest_tree::{MemTree, TreeId};
use serde::Serialize;

use crate::error::{CliError, Result};
use crate::{store, walcmd};

/// What a clean `verify` checked.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// Segment files checked.
    pub segment_files: u64,
    /// Entries read from them (every data block).
    pub entries: u64,
    /// Bytes of segment files read.
    pub segment_bytes: u64,
    /// WAL segment files checked.
    pub wal_files: u64,
    /// WAL batches decoded.
    pub wal_batches: u64,
    /// Trees opened and verified.
    pub trees: u64,
    /// Tree nodes visited.
    pub tree_nodes: u64,
}

fn sst_damage(e: SstError) -> CliError {
    match e {
        SstError::Corrupt {
            path,
            offset,
            reason,
        } => CliError::Damage {
            path,
            offset,
            reason: reason.to_owned(),
        },
        other => CliError::Engine(other.into()),
    }
}

fn engine_damage(e: memforest_engine::Error) -> CliError {
    match e {
        memforest_engine::Error::Corrupt {
            path,
            offset,
            reason,
        } => CliError::Damage {
            path,
            offset,
            reason,
        },
        memforest_engine::Error::Sst(e) => sst_damage(e),
        other => CliError::Engine(other),
    }
}

/// Checks the store in `dir`.
///
/// # Errors
/// [`CliError::Damage`] naming the file and byte offset of the first damage;
/// [`CliError::Usage`] when `dir` is not a store; the engine's errors (lock held).
pub fn run(dir: &Path) -> Result<VerifyReport> {
    let mut r = VerifyReport::default();
    if !dir.join(manifest::CURRENT).is_file() {
        return Err(CliError::Usage(format!(
            "{} is not a MemForest store (no CURRENT file)",
            dir.display()
        )));
    }
    let (_, state) = manifest::load(&*memforest_io::default_storage(), dir)
        .map_err(engine_damage)?
        .unwrap_or_default();
    for (_, info) in &state.segments {
        let path = dir.join(memforest_sst::file_name(info.id));
        check_segment(&path, info.file_size, &mut r)?;
    }
    check_wal(&dir.join(WAL_DIR), &mut r)?;
    check_trees(dir, &mut r)?;
    Ok(r)
}

fn check_segment(path: &Path, size: u64, r: &mut VerifyReport) -> Result<()> {
    let len = std::fs::metadata(path)
        .map_err(CliError::io("stat", path))?
        .len();
    if len != size {
        return Err(CliError::Damage {
            path: path.to_path_buf(),
            offset: len.min(size),
            reason: format!("file is {len} bytes, the manifest records {size}"),
        });
    }
    let reader = SstReader::open(path).map_err(sst_damage)?;
    let mut it = reader.iter().map_err(sst_damage)?;
    it.seek_to_first().map_err(sst_damage)?;
    while it.next_entry().map_err(sst_damage)?.is_some() {
        r.entries += 1;
    }
    r.segment_files += 1;
    r.segment_bytes += len;
    Ok(())
}

fn check_wal(dir: &Path, r: &mut VerifyReport) -> Result<()> {
    if dir.is_dir() {
        let (p, files) = walcmd::check(dir)?;
        r.wal_files = files as u64;
        r.wal_batches = p.batches.len() as u64;
    }
    Ok(())
}

fn check_trees(dir: &Path, r: &mut VerifyReport) -> Result<()> {
    let db = store::open_existing(dir)?;
    for tenant in db.tenants()? {
        let store = EngineNodeStore::new(&db, tenant.clone(), Durability::Buffered);
        for kv in db.scan_prefix(&tenant, Table::Trees, &[], None)? {
            let (k, _) = kv?;
            let id = <[u8; 8]>::try_from(k.as_ref())
                .map(u64::from_be_bytes)
                .map_err(|_| CliError::Damage {
                    path: dir.to_path_buf(),
                    offset: 0,
                    reason: format!("tree record with a {}-byte key", k.len()),
                })?;
            let tree_err = |e: memforest_tree::TreeError| CliError::Damage {
                path: dir.to_path_buf(),
                offset: 0,
                reason: format!(
                    "tenant {} tree {id}: {e}",
                    String::from_utf8_lossy(tenant.name())
                ),
            };
            let tree = MemTree::open(&store, TreeId(id)).map_err(tree_err)?;
            let shape = tree.verify(&store).map_err(tree_err)?;
            r.trees += 1;
            r.tree_nodes += shape.nodes.iter().sum::<u64>();
        }
    }
    db.close()?;
    Ok(())
}
