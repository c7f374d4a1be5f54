//! The keys file: API keys (stored as SHA-256 digests, never in clear), each scoped to one
//! or more tenants (users) with read or read-write rights.
//!
//! The file is JSON:
//!
//! ```json
//! {"keys": [
//!   {"name": "agent-a", "sha256": "<64 hex digits>", "tenants": {"alice": "read-write", "bob": "read"}}
//! ]}
//! ```
//!
//! A client presents the key itself (`Authorization: Bearer <key>` or `X-Api-Key: <key>`);
//! the server hashes it and looks the digest up. [`generate`] makes a new key and its entry.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// What a key may do with one tenant's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Right {
    /// Search, get, list, history, profile, stats, context.
    Read,
    /// Everything `Read` allows, plus add, update and delete.
    ReadWrite,
}

impl std::str::FromStr for Right {
    type Err = KeysError;

    fn from_str(s: &str) -> Result<Self, KeysError> {
        match s {
            "read" | "r" => Ok(Self::Read),
            "read-write" | "rw" => Ok(Self::ReadWrite),
            _ => Err(KeysError::Invalid(format!(
                "right {s:?} is neither read nor read-write"
            ))),
        }
    }
}

/// One key's entry in the keys file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// A name for logs and metrics (never the key): 1..=64 bytes of `[A-Za-z0-9_.-]`.
    pub name: String,
    /// The key's SHA-256 digest, 64 lowercase hex digits.
    pub sha256: String,
    /// The tenants (users) it may reach and how.
    pub tenants: BTreeMap<String, Right>,
}

/// The keys file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeysFile {
    /// The keys.
    pub keys: Vec<KeyEntry>,
}

/// Why a keys file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    /// Reading or writing the file failed.
    #[error("keys file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not valid JSON of the keys file's shape.
    #[error("keys file {path}: {detail}")]
    Parse {
        /// The file.
        path: String,
        /// The JSON decoder's message (line and column).
        detail: String,
    },
    /// An entry breaks a rule (bad name, digest, no tenant, duplicate).
    #[error("keys file: {0}")]
    Invalid(String),
}

/// The SHA-256 digest of `key`, as 64 lowercase hex digits.
#[must_use]
pub fn digest(key: &str) -> String {
    hex(&Sha256::digest(key.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// A new random key (`mf_` and 64 hex digits: 256 bits from the OS) and its entry named
/// `name` with `tenants`.
///
/// # Errors
/// [`KeysError::Invalid`] for a bad name or no tenant.
pub fn generate(
    name: &str,
    tenants: BTreeMap<String, Right>,
) -> Result<(String, KeyEntry), KeysError> {
    let mut raw = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut raw);
    let key = format!("mf_{}", hex(&raw));
    let entry = KeyEntry {
        name: name.to_owned(),
        sha256: digest(&key),
        tenants,
    };
    entry.check()?;
    Ok((key, entry))
}

impl KeyEntry {
    fn check(&self) -> Result<(), KeysError> {
        let name_ok = (1..=64).contains(&self.name.len())
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !name_ok {
            return Err(KeysError::Invalid(format!(
                "key name {:?} is not 1..=64 characters of [A-Za-z0-9_.-]",
                self.name
            )));
        }
        let digest_ok =
            self.sha256.len() == 64 && self.sha256.bytes().all(|b| b.is_ascii_hexdigit());
        if !digest_ok {
            return Err(KeysError::Invalid(format!(
                "key {:?}: sha256 is not 64 hex digits",
                self.name
            )));
        }
        if self.tenants.is_empty() {
            return Err(KeysError::Invalid(format!(
                "key {:?} names no tenant",
                self.name
            )));
        }
        if let Some((tenant, e)) = self
            .tenants
            .keys()
            .find_map(|t| memforest_engine::TenantId::new(t).err().map(|e| (t, e)))
        {
            return Err(KeysError::Invalid(format!(
                "key {:?}: tenant {tenant:?} is not a user name: {e}",
                self.name
            )));
        }
        Ok(())
    }
}

impl KeysFile {
    /// Reads and checks the keys file at `path`.
    ///
    /// # Errors
    /// [`KeysError`]: unreadable, not JSON of this shape, a bad entry, two entries with
    /// the same name or digest.
    pub fn load(path: &Path) -> Result<Self, KeysError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeysError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let file: Self = serde_json::from_str(&text).map_err(|e| KeysError::Parse {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        file.check()?;
        Ok(file)
    }

    /// Reads the keys file at `path`, or an empty one when it does not exist.
    ///
    /// # Errors
    /// As [`KeysFile::load`].
    pub fn load_or_empty(path: &Path) -> Result<Self, KeysError> {
        if path.exists() {
            Self::load(path)
        } else {
            Ok(Self::default())
        }
    }

    fn check(&self) -> Result<(), KeysError> {
        let mut names = std::collections::BTreeSet::new();
        let mut digests = std::collections::BTreeSet::new();
        for k in &self.keys {
            k.check()?;
            if !names.insert(k.name.as_str()) || !digests.insert(k.sha256.to_ascii_lowercase()) {
                return Err(KeysError::Invalid(format!(
                    "key {:?} appears twice (by name or digest)",
                    k.name
                )));
            }
        }
        Ok(())
    }

    /// Adds `entry` and writes the file to `path` (a temporary file renamed over it, mode
    /// 0600 on Unix).
    ///
    /// # Errors
    /// [`KeysError::Invalid`] for an entry whose name or digest is taken; I/O errors.
    pub fn add_and_save(&mut self, entry: KeyEntry, path: &Path) -> Result<(), KeysError> {
        self.keys.push(entry);
        if let Err(e) = self.check() {
            self.keys.pop();
            return Err(e);
        }
        let io = |source| KeysError::Io {
            path: path.display().to_string(),
            source,
        };
        let text =
            serde_json::to_string_pretty(self).map_err(|e| KeysError::Invalid(e.to_string()))?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text + "\n").map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        }
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// The keys a server accepts, by digest.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    by_digest: HashMap<String, KeyEntry>,
}

impl Keys {
    /// The keys of `file`.
    #[must_use]
    pub fn new(file: KeysFile) -> Self {
        Self {
            by_digest: file
                .keys
                .into_iter()
                .map(|k| (k.sha256.to_ascii_lowercase(), k))
                .collect(),
        }
    }

    /// The entry of the presented key `key`, if any.
    #[must_use]
    pub fn find(&self, key: &str) -> Option<&KeyEntry> {
        self.by_digest.get(&digest(key))
    }

    /// True when no key is accepted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_is_found_by_itself_only_and_its_digest_is_what_is_stored() {
        let tenants = BTreeMap::from([("alice".to_owned(), Right::ReadWrite)]);
        let (key, entry) = generate("agent-a", tenants).unwrap();
        assert!(!serde_json::to_string(&entry).unwrap().contains(&key));
        let keys = Keys::new(KeysFile { keys: vec![entry] });
        assert_eq!(keys.find(&key).map(|e| e.name.as_str()), Some("agent-a"));
        assert!(keys.find("mf_not-the-key").is_none());
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn bad_entries_and_duplicates_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.json");
        let mut file = KeysFile::default();
        let one = BTreeMap::from([("u".to_owned(), Right::Read)]);
        let (_, a) = generate("a", one.clone()).unwrap();
        file.add_and_save(a.clone(), &path).unwrap();
        assert!(file.add_and_save(a, &path).is_err());
        assert!(generate("bad name", one).is_err());
        assert!(generate("a2", BTreeMap::new()).is_err());
        let nameless = BTreeMap::from([(String::new(), Right::Read)]);
        assert!(generate("a3", nameless).is_err());
        assert_eq!(KeysFile::load(&path).unwrap().keys.len(), 1);
        std::fs::write(
            &path,
            r#"{"keys":[{"name":"x","sha256":"00","tenants":{"u":"read"}}]}"#,
        )
        .unwrap();
        assert!(KeysFile::load(&path).is_err());
    }
}
