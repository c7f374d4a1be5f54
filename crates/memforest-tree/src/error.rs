//! The error type of every tree operation.

use memforest_codec::DecodeError;

use crate::config::ConfigError;
use crate::key::LeafKey;
use crate::node::{NodeId, TreeId};
use crate::store::StoreError;

/// Why a tree operation failed. Corruption variants name the tree and node; page decoding
/// errors also carry the byte offset within the page.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TreeError {
    /// A page failed to decode (bad CRC, bad layout).
    #[error("tree {tree} node {node}: bad page: {source}")]
    Page {
        /// Owning tree.
        tree: TreeId,
        /// Page's node id ([`NodeId::META`] for the meta page).
        node: NodeId,
        /// What was wrong, at which byte offset within the page.
        #[source]
        source: DecodeError,
    },
    /// A page is intact but is not the page its parent (or the meta page) recorded: a lost,
    /// stale or misdirected write.
    #[error("tree {tree} node {node}: page CRC {found:#010x} is not the {expected:#010x} its parent recorded")]
    ChecksumMismatch {
        /// Owning tree.
        tree: TreeId,
        /// The child whose page does not match.
        node: NodeId,
        /// CRC recorded by the parent.
        expected: u32,
        /// CRC of the page found.
        found: u32,
    },
    /// A page decoded but does not fit where it was found (wrong level, wrong page kind).
    #[error("tree {tree} node {node}: corrupt: {what}")]
    Corrupt {
        /// Owning tree.
        tree: TreeId,
        /// The page.
        node: NodeId,
        /// What does not fit.
        what: &'static str,
    },
    /// A page referenced by its parent (or the meta page) is absent from the store.
    #[error("tree {tree} node {node}: page missing")]
    MissingPage {
        /// Owning tree.
        tree: TreeId,
        /// The absent page.
        node: NodeId,
    },
    /// The node store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A configuration value was rejected.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `create` found a meta page already stored for this tree id.
    #[error("tree {tree}: already exists")]
    TreeExists {
        /// The tree id.
        tree: TreeId,
    },
    /// The key is already in the tree, with another text.
    #[error("tree {tree}: key {key} already present with another text")]
    DuplicateKey {
        /// The tree.
        tree: TreeId,
        /// The key.
        key: LeafKey,
    },
    /// A key's time range has `start > end`.
    #[error("time range start {start} is after end {end}")]
    InvalidTimeRange {
        /// Start, microseconds since the Unix epoch.
        start: i64,
        /// End, microseconds since the Unix epoch.
        end: i64,
    },
    /// A text (leaf text, summary, label) is over [`crate::page::MAX_TEXT_BYTES`].
    #[error("text of {len} bytes exceeds the 1 MiB limit")]
    TextTooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The node id is not (or no longer) a node of this tree.
    #[error("tree {tree} node {node}: not a node of this tree")]
    UnknownNode {
        /// The tree.
        tree: TreeId,
        /// The node id asked for.
        node: NodeId,
    },
    /// A summary input was asked for a node whose child is still dirty: refresh lower levels
    /// first (the refresh plan's level order does).
    #[error("tree {tree} node {node}: child {child} is dirty; refresh lower levels first")]
    ChildDirty {
        /// The tree.
        tree: TreeId,
        /// The node.
        node: NodeId,
        /// Its dirty child.
        child: NodeId,
    },
    /// A summary was made from an input that is no longer the node's input (its page changed
    /// since, see [`crate::refresh::InputStamp`]); it was rejected and the node stays dirty.
    #[error("tree {tree} node {node}: the node changed since its summary's input was read (page crc {read_at:#010x} then, {current:#010x} now)")]
    StaleSummary {
        /// The tree.
        tree: TreeId,
        /// The node.
        node: NodeId,
        /// The node's page CRC when the summary's input was read.
        read_at: u32,
        /// The node's current page CRC.
        current: u32,
    },
    /// [`crate::tree::MemTree::verify`] found a broken invariant.
    #[error("tree {tree} node {node}: invariant violated: {what}")]
    Invariant {
        /// The tree.
        tree: TreeId,
        /// Where.
        node: NodeId,
        /// Which invariant.
        what: String,
    },
}
