//! The records the memory layer stores, their keys, and deterministic ids. Values are
//! encoded with `memforest_codec::serde_codec` (the workspace's pinned bincode-2 config);
//! keys are big-endian so they sort numerically. Layout: `docs/format/memory.md`.

use memforest_tree::hash::StableHasher;
use memforest_tree::TreeKind;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::memory::extract::{Origin, SemanticRole};
use crate::memory::session::Role;
use crate::memory::MemoryError;

/// `Sessions` key prefix of a session record (`s | session id`).
pub const SESSION_PREFIX: u8 = b's';
/// `Sessions` key prefix of a cell record (`c | cell id BE`).
pub const CELL_PREFIX: u8 = b'c';
/// `Sessions` key prefix of a session's agent (`a | session id`, value the agent name).
pub const AGENT_PREFIX: u8 = b'a';
/// `Sessions` key prefix of a turn's metadata (`m | turn key`, value a
/// `BTreeMap<String, String>`); absent when the turn has none.
pub const METADATA_PREFIX: u8 = b'm';
/// `RouterState` key prefix of an entity's state (`e | normalized key`).
pub const ENTITY_PREFIX: u8 = b'e';
/// `RouterState` key prefix of a scene's state (`s | scene number BE`).
pub const SCENE_PREFIX: u8 = b's';
/// `RouterState` key of the next scene number (u64 BE).
pub const NEXT_SCENE_KEY: &[u8] = b"n";
/// `RouterState` key prefix marking a cell whose extraction has not committed
/// (`p | cell id BE`, empty value).
pub const PENDING_PREFIX: u8 = b'p';
/// `RouterState` key prefix of a cell that can never be extracted (`f | cell id BE`,
/// value a [`FailedCellRecord`]); its raw turns stay stored.
pub const FAILED_PREFIX: u8 = b'f';

/// `RouterState` key of the name of the embedder that made the tenant's fact vectors
/// (`recall::vectors`; value its UTF-8 name).
pub const EMBEDDER_KEY: &[u8] = b"v";

/// A prefix byte followed by `rest`.
#[must_use]
pub fn prefixed(prefix: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + rest.len());
    k.push(prefix);
    k.extend_from_slice(rest);
    k
}

/// A session: what has been ingested so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Session id.
    pub id: String,
    /// Start, microseconds since the Unix epoch.
    pub start: i64,
    /// Turns stored (their indexes are `0..turns`).
    pub turns: u32,
    /// Cells cut so far (their indexes are `0..cells`).
    pub cells: u32,
    /// Resolved time of the last turn, microseconds.
    pub last_time: i64,
}

/// One raw turn (`Turns` table, key [`turn_key`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// Turn id (the caller's or `{session}#turn_{index}`).
    pub id: String,
    /// Speaker role.
    pub role: Role,
    /// Speaker name.
    pub speaker: String,
    /// Text.
    pub text: String,
    /// Resolved time, microseconds since the Unix epoch.
    pub time: i64,
}

impl TurnRecord {
    /// Who said it: the speaker's name, or the role's name (`user`, `assistant`) for a turn
    /// stored without one.
    #[must_use]
    pub fn speaker_name(&self) -> &str {
        if self.speaker.is_empty() {
            self.role.name()
        } else {
            &self.speaker
        }
    }
}

/// Why a cell was given up on (`RouterState`, `f | cell id BE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCellRecord {
    /// The error that made it unextractable (no turn text).
    pub reason: String,
}

/// A MemCell: turns `first..first + count` of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellRecord {
    /// Session id.
    pub session: String,
    /// Session start, microseconds.
    pub session_start: i64,
    /// Cell index within the session.
    pub index: u32,
    /// First turn index.
    pub first: u32,
    /// Number of turns.
    pub count: u32,
    /// First and last turn time, microseconds.
    pub time: (i64, i64),
}

/// Where a fact was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occurrence {
    /// Session id.
    pub session: String,
    /// Cell id.
    pub cell: u64,
    /// Source turn ids.
    pub turns: Vec<String>,
    /// Time span of this occurrence, microseconds.
    pub time: (i64, i64),
}

/// A canonical fact (`Facts` table, key = fact id BE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactRecord {
    /// The text of the first occurrence.
    pub text: String,
    /// Normalized text ([`crate::memory::text::normalize`]), the dedup key.
    pub norm: String,
    /// Whose statement it is.
    pub origin: Origin,
    /// Semantic role.
    pub role: SemanticRole,
    /// Participants.
    pub participants: Vec<String>,
    /// Entities.
    pub entities: Vec<String>,
    /// Topics.
    pub topics: Vec<String>,
    /// Attribute, domain and collection keys (up to 2 each).
    pub keys: Vec<String>,
    /// Time the fact is about: min start and max end over its occurrences, microseconds.
    pub time: (i64, i64),
    /// Every occurrence, in ingest order.
    pub occurrences: Vec<Occurrence>,
}

/// A tree descriptor (`Trees` table, key = tree id BE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeRecord {
    /// [`TreeKind::as_u8`].
    pub kind: u8,
    /// Label: session id, `user`, entity key, or `scene-N`.
    pub label: String,
}

/// An entity key's routing state (`RouterState`, `e | key`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EntityState {
    /// The surface form seen first.
    pub surface: String,
    /// Facts mentioning it while inactive (cleared on activation: the tree then holds them).
    pub facts: Vec<u64>,
    /// Distinct sessions it appeared in, up to the activation threshold.
    pub sessions: Vec<String>,
    /// Whether its tree exists.
    pub active: bool,
}

/// A scene's routing state (`RouterState`, `s | number`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SceneState {
    /// The scene tree's label (`scene-N`).
    pub label: String,
    /// Keyword counts over its facts.
    pub counts: Vec<(String, u32)>,
    /// Facts in the scene.
    pub facts: u32,
    /// Mean embedding of its facts (when an embedder is configured).
    pub centroid: Option<Vec<f32>>,
    /// In memory only (not stored): when a fact last joined, in the tenant's scene clock;
    /// the least recent open scene is closed first when too many are open.
    #[serde(skip)]
    pub tick: u64,
}

/// Encodes a record.
///
/// # Errors
/// [`MemoryError::Encode`] when the encoding is over the decoder's limit
/// (`memforest_codec::serde_codec::DECODE_LIMIT`, 16 MiB), so nothing is ever stored that
/// could not be read back (the serializer itself never fails for these plain types).
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, MemoryError> {
    let limit = memforest_codec::serde_codec::DECODE_LIMIT;
    let bytes = memforest_codec::serde_codec::encode(value)
        .map_err(|e| MemoryError::Encode(e.to_string()))?;
    if bytes.len() > limit {
        return Err(MemoryError::Encode(format!(
            "record of {} bytes is over the {limit}-byte record limit",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// Decodes a record of `table`/`key` (named in the error).
///
/// # Errors
/// [`MemoryError::Corrupt`] naming what failed to decode.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], what: &'static str) -> Result<T, MemoryError> {
    memforest_codec::serde_codec::decode(bytes).map_err(|e| MemoryError::Corrupt {
        what,
        detail: e.to_string(),
    })
}

fn hash(parts: &[&[u8]]) -> u64 {
    let mut h = StableHasher::new();
    for p in parts {
        h.write_u64(p.len() as u64);
        h.write(p);
    }
    h.finish()
}

/// The 8-byte key of a session's turns: FNV-1a 64 of the session id.
#[must_use]
pub fn session_hash(session: &str) -> u64 {
    hash(&[b"session", session.as_bytes()])
}

/// `Turns` key: session hash BE | turn index BE.
#[must_use]
pub fn turn_key(session: &str, index: u32) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..8].copy_from_slice(&session_hash(session).to_be_bytes());
    k[8..].copy_from_slice(&index.to_be_bytes());
    k
}

/// `Sessions` key of a turn's metadata: [`METADATA_PREFIX`] | [`turn_key`].
#[must_use]
pub fn metadata_key(session: &str, index: u32) -> Vec<u8> {
    prefixed(METADATA_PREFIX, &turn_key(session, index))
}

/// `Sessions` key of a session's agent: [`AGENT_PREFIX`] | session id.
#[must_use]
pub fn agent_key(session: &str) -> Vec<u8> {
    prefixed(AGENT_PREFIX, session.as_bytes())
}

/// The id of a turn given without one: `{session}#turn_{position}`, its position in the
/// `Session::turns` it came in.
#[must_use]
pub fn default_turn_id(session: &str, position: usize) -> String {
    format!("{session}#turn_{position}")
}

/// The position `N` when `id` has the form `{session}#turn_{N}` of a [`default_turn_id`]
/// of `session` (`u64::MAX` for a number of more digits than a `u64` holds); `None` for
/// any other id.
#[must_use]
pub fn default_turn_number(session: &str, id: &str) -> Option<u64> {
    id.strip_prefix(session)
        .and_then(|rest| rest.strip_prefix("#turn_"))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map(|n| n.parse().unwrap_or(u64::MAX))
}

/// Deterministic cell id: hash of session id and cell index.
#[must_use]
pub fn cell_id(session: &str, index: u32) -> u64 {
    hash(&[b"cell", session.as_bytes(), &index.to_be_bytes()])
}

/// Deterministic fact id for `seed`: a fact's normalized text, followed for a version
/// `Memory::update` states by its version key and the id of the memory it replaces (each
/// after a NUL); `probe` > 0 resolves hash collisions.
#[must_use]
pub fn fact_id(seed: &str, probe: u32) -> u64 {
    hash(&[b"fact", seed.as_bytes(), &probe.to_be_bytes()])
}

/// Deterministic tree id of the tree of `kind` labelled `label`.
#[must_use]
pub fn tree_id(kind: TreeKind, label: &str) -> u64 {
    hash(&[b"tree", &[kind.as_u8()], label.as_bytes()])
}

/// `FactTimeIndex` key: start time (sign bit flipped, BE, so negative times sort first) |
/// fact id BE.
#[must_use]
pub fn time_index_key(start: i64, fact: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&((start as u64) ^ (1 << 63)).to_be_bytes());
    k[8..].copy_from_slice(&fact.to_be_bytes());
    k
}

/// Two big-endian u64s (`Memberships`: fact | tree; `Embeddings`: tree | node).
#[must_use]
pub fn pair_key(a: u64, b: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&a.to_be_bytes());
    k[8..].copy_from_slice(&b.to_be_bytes());
    k
}

/// An `Embeddings` row value: the vector's `f32`s little-endian, back to back.
#[must_use]
pub fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The u64 of 8 big-endian bytes at the start of `bytes`.
#[must_use]
pub fn be_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_the_decoder_would_refuse_is_never_encoded() {
        let limit = memforest_codec::serde_codec::DECODE_LIMIT;
        let fits = "x".repeat(limit - 64);
        let back: String = decode(&encode(&fits).unwrap(), "turn").unwrap();
        assert_eq!(back.len(), fits.len());
        let over = "x".repeat(limit + 1);
        assert!(matches!(encode(&over), Err(MemoryError::Encode(_))));
    }
}
