//! [`StoreArgs`]: where a command's store is (`--db`, `--cache-dir`), and the opens every
//! command makes through it: a local directory as it always was, or a store on an object
//! store (`file:///abs/dir`, `s3://bucket/prefix` in a build with the `s3` feature) whose
//! WAL, local manifest and cached segment files live in `--cache-dir`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memforest::{Memory, Options};
use memforest_object::Remote;

use crate::error::{CliError, Result};
use crate::store::{self, EmbedArgs};

/// The prefix of the environment variables handed to the object store as its settings
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_DEFAULT_REGION`,
/// `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `AWS_SESSION_TOKEN`, ...).
const ENV_PREFIX: &str = "AWS_";

/// `--db` and `--cache-dir`: the store a command opens.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// The store: a directory (created when a writing command finds it absent), or an
    /// object-store URL with --cache-dir: file:///abs/dir, or s3://bucket/prefix in a
    /// build with the `s3` feature (credentials, region and endpoint from the AWS_*
    /// environment variables).
    #[arg(long, value_name = "DIR|URL")]
    pub db: String,
    /// With a URL --db: this process's local directory of the store (its WAL, local
    /// manifest and cached segment files), created when absent. A writer and each
    /// replica need their own.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// With a URL --db: at most this many MiB of segment files kept in --cache-dir, the
    /// least recently read deleted first and fetched again when read
    /// (`Options::remote_cache_bytes`). Default: a copy of every live file.
    #[arg(long, value_name = "MIB")]
    pub cache_max_mib: Option<u64>,
}

/// Where a store is.
#[derive(Debug, Clone)]
pub enum Location {
    /// A local store directory.
    Dir(PathBuf),
    /// A store on an object store, with its local directory.
    Remote {
        /// The object-store location.
        remote: Arc<Remote>,
        /// The local directory (WAL, local manifest, cached segment files).
        cache_dir: PathBuf,
    },
}

/// The scheme of `db` when it is a URL (`scheme://...`), else `None`.
fn scheme(db: &str) -> Option<&str> {
    let (scheme, _) = db.split_once("://")?;
    let url_like = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    url_like.then_some(scheme)
}

/// The scheme of `db` when it reads as a URL missing the `//` after its colon
/// (`file:/abs`, `s3:bucket`): a word of two or more letters, digits, `+`, `-` or `.`,
/// starting with a letter, then `:`.
fn url_like(db: &str) -> Option<&str> {
    let (scheme, _) = db.split_once(':')?;
    let word = scheme.len() >= 2
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    word.then_some(scheme)
}

/// `path` made absolute, through symbolic links: its deepest existing ancestor
/// canonicalized, the rest appended with `.` and `..` resolved by their names (the
/// directories need not exist yet).
fn resolved(path: &Path) -> std::io::Result<PathBuf> {
    let mut lexical = PathBuf::new();
    for part in std::path::absolute(path)?.components() {
        match part {
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            std::path::Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return Ok(rest.iter().rev().fold(real, |p, part| p.join(part)));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return Ok(lexical),
        }
    }
}

/// Refuses a --cache-dir inside a `file://` location (or holding it), symbolic links and
/// percent-escapes resolved: the cache deletes its copies of segment files, and the
/// location's objects are not copies.
///
/// # Errors
/// [`CliError::Usage`] naming both; [`CliError::Io`] when the current directory is gone.
fn refuse_cache_inside(db: &str, cache_dir: &Path) -> Result<()> {
    let Some(root) = memforest_object::file_url_path(db) else {
        return Ok(());
    };
    let resolve = |p: &Path| resolved(p).map_err(CliError::io("resolve", p));
    let (root, cache) = (resolve(&root)?, resolve(cache_dir)?);
    if cache.starts_with(&root) || root.starts_with(&cache) {
        return Err(CliError::Usage(format!(
            "--cache-dir {} and --db {db} overlap: the cache directory must be outside the \
             store's location (and not hold it)",
            cache_dir.display()
        )));
    }
    Ok(())
}

impl StoreArgs {
    /// Where these flags put the store. A URL's object store is opened (nothing is read
    /// yet) with the `AWS_*` environment variables as its settings.
    ///
    /// # Errors
    /// [`CliError::Usage`] for a URL without --cache-dir, --cache-dir without a URL, a
    /// `memory://` URL (gone when the command exits), a `file://` URL whose path is empty
    /// or relative; [`CliError::Remote`] for a URL the
    /// object store refuses (a scheme this build lacks: `s3://` needs the `s3` feature).
    pub fn location(&self) -> Result<Location> {
        let Some(scheme) = scheme(&self.db) else {
            if let Some(like) = url_like(&self.db) {
                return Err(CliError::Usage(format!(
                    "--db {}: looks like a {like}: URL without its two slashes (file:///abs/dir, \
                     s3://bucket/prefix); a directory path would not start with {like}:",
                    self.db
                )));
            }
            if self.cache_dir.is_some() || self.cache_max_mib.is_some() {
                return Err(CliError::Usage(
                    "--cache-dir and --cache-max-mib are for a store on an object store (--db URL)"
                        .into(),
                ));
            }
            return Ok(Location::Dir(PathBuf::from(&self.db)));
        };
        if scheme.eq_ignore_ascii_case("memory") {
            return Err(CliError::Usage(
                "--db memory:// is an in-memory store, gone when the command exits".into(),
            ));
        }
        let path = self.db.split_once("://").map_or("", |(_, rest)| rest);
        if scheme.eq_ignore_ascii_case("file") && !path.starts_with('/') {
            return Err(CliError::Usage(format!(
                "--db {}: a file:// URL needs an absolute path, three slashes: file:///abs/dir",
                self.db
            )));
        }
        let cache_dir = self.cache_dir.clone().ok_or_else(|| {
            CliError::Usage(format!(
                "--db {} needs --cache-dir DIR: the local directory of the store's WAL, local manifest and cached segment files",
                self.db
            ))
        })?;
        refuse_cache_inside(&self.db, &cache_dir)?;
        let env = std::env::vars().filter(|(k, _)| k.starts_with(ENV_PREFIX));
        let remote = Arc::new(Remote::open(&self.db, env)?);
        Ok(Location::Remote { remote, cache_dir })
    }

    /// True when --db is a URL (a store on an object store).
    #[must_use]
    pub fn is_remote(&self) -> bool {
        scheme(&self.db).is_some()
    }

    /// Opens the store for writing with `options`, creating it when absent
    /// ([`store::open`]; on an object store, continuing from its newest manifest). On an
    /// object store, [`Memory::close`] flushes and publishes what the command wrote, so
    /// replicas and other machines see it.
    ///
    /// # Errors
    /// As [`StoreArgs::location`] and [`store::open`]; on an object store also
    /// object-store errors and `Fenced` when another writer took over.
    pub fn open(&self, options: Options) -> Result<Memory> {
        match self.location()? {
            Location::Dir(dir) => store::open(&dir, options),
            Location::Remote { remote, cache_dir } => {
                store::open(&cache_dir, self.with_remote(options, remote))
            }
        }
    }

    /// Opens an existing store for writing, for maintenance (`update`, `forget`,
    /// `compact`): [`store::open_existing`], or a store on an object store that holds a
    /// manifest.
    ///
    /// # Errors
    /// As [`StoreArgs::open`]; [`memforest_engine::Error::NoRemoteManifest`] for an object
    /// store without a store.
    pub fn open_existing(&self) -> Result<Memory> {
        match self.location()? {
            Location::Dir(dir) => store::open_existing(&dir),
            Location::Remote { remote, cache_dir } => {
                if memforest_engine::remote::manifest_numbers(&remote)?.is_empty() {
                    return Err(memforest_engine::Error::NoRemoteManifest {
                        location: remote.to_string(),
                    }
                    .into());
                }
                store::open(&cache_dir, self.with_remote(store::small_pools(), remote))
            }
        }
    }

    /// Opens the store for reading only, with the default embedder.
    ///
    /// # Errors
    /// As [`StoreArgs::open_read_only_with`].
    pub fn open_read_only(&self) -> Result<Memory> {
        self.open_read_only_with(&EmbedArgs::default())
    }

    /// `options` with the engine's object-storage tier at `remote` and the
    /// --cache-max-mib bound; a writer collects the tier's garbage automatically with the
    /// engine's defaults (`RemoteGc::default`).
    fn with_remote(&self, mut options: Options, remote: Arc<Remote>) -> Options {
        options.engine.remote = Some(remote);
        options.engine.remote_cache_bytes = self.cache_bytes();
        options.engine.remote_gc = Some(memforest_engine::remote_gc::RemoteGc::default());
        options
    }

    /// Opens the store for reading only, with the embedder `embed` names: a directory
    /// with [`store::open_read_only_with`] (no lock: works beside a writer); a store on an
    /// object store as a read replica ([`Memory::open_replica`]) of what its writer has
    /// published, caching segment files in --cache-dir (never the writer's).
    ///
    /// # Errors
    /// As [`StoreArgs::location`]; the opens' errors.
    pub fn open_read_only_with(&self, embed: &EmbedArgs) -> Result<Memory> {
        match self.location()? {
            Location::Dir(dir) => store::open_read_only_with(&dir, embed),
            Location::Remote { remote, cache_dir } => {
                let mut options = store::small_pools();
                embed.apply(&mut options.memory)?;
                Ok(open_replica(&cache_dir, self.with_remote(options, remote))?)
            }
        }
    }
}

impl StoreArgs {
    /// The local directory: the store directory, or --cache-dir for a URL.
    ///
    /// # Errors
    /// As [`StoreArgs::location`].
    pub fn local_dir(&self) -> Result<PathBuf> {
        Ok(match self.location()? {
            Location::Dir(dir) => dir,
            Location::Remote { cache_dir, .. } => cache_dir,
        })
    }

    /// The engine options for maintenance on the store itself (`repair`): the defaults,
    /// with the object store and the --cache-max-mib bound for a URL.
    ///
    /// # Errors
    /// As [`StoreArgs::location`].
    pub fn engine_options(&self) -> Result<memforest_engine::Options> {
        let mut options = memforest_engine::Options::default();
        if let Location::Remote { remote, .. } = self.location()? {
            options.remote = Some(remote);
            options.remote_cache_bytes = self.cache_bytes();
        }
        Ok(options)
    }

    /// The --cache-max-mib bound in bytes.
    fn cache_bytes(&self) -> Option<u64> {
        self.cache_max_mib.map(|m| m.saturating_mul(1 << 20))
    }
}

/// [`Memory::open_replica`] in `dir`.
fn open_replica(dir: &Path, options: Options) -> Result<Memory> {
    Ok(Memory::open_replica(dir, options)?)
}
