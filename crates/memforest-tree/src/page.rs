//! The page codec: node pages and the meta page, byte for byte as in
//! `docs/format/tree-page.md`.
//!
//! Every page is `header | body | trailer`: an 8-byte common header (magic `MFTP`, format
//! version, page kind, two reserved zero bytes), a kind-specific body, and a 4-byte masked
//! CRC-32 ([`memforest_codec::checksum::masked_crc32`]) of everything before it. All integers
//! are little-endian. A parent stores its child's trailer value in the [`ChildRef`], so a page
//! that is intact but not the one the parent wrote (a lost or misdirected write) is caught too.
//!
//! Decoding never panics: any byte string gives a [`Page`] or a [`DecodeError`] naming the
//! offset within the page.
#![deny(clippy::indexing_slicing)]

use memforest_codec::checksum::masked_crc32;
use memforest_codec::{ByteReader, DecodeError};

use crate::config::{Branching, MAX_BRANCHING};
use crate::key::{LeafKey, Payload, PayloadKind, TimeRange};
use crate::kind::TreeKind;
use crate::meta::{RootRef, TreeMeta};
use crate::node::{ChildRef, LeafEntry, Node, NodeBody, NodeId, Summary};

/// First four bytes of every page.
pub const MAGIC: [u8; 4] = *b"MFTP";
/// The page format version this code writes and reads.
pub const FORMAT_VERSION: u8 = 1;
/// Size of the common header, in bytes.
pub const HEADER_LEN: usize = 8;
/// Size of the CRC trailer, in bytes.
pub const TRAILER_LEN: usize = 4;
/// Longest text (leaf text, summary, label) a page may carry, in bytes (1 MiB).
pub const MAX_TEXT_BYTES: usize = 1 << 20;

const KIND_BOTTOM: u8 = 1;
const KIND_BRANCH: u8 = 2;
const KIND_META: u8 = 3;
const FLAG_DIRTY: u8 = 1;
const FLAG_SUMMARY: u8 = 2;

/// A decoded page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// A node page (page kind 1 or 2).
    Node(Node),
    /// A tree's meta page (page kind 3).
    Meta(TreeMeta),
}

/// Encodes a node page.
#[must_use]
pub fn encode_node(node: &Node) -> Vec<u8> {
    let kind = match node.body {
        NodeBody::Leaves(_) => KIND_BOTTOM,
        NodeBody::Children(_) => KIND_BRANCH,
    };
    let mut out = header(kind);
    let time = node.time_range().unwrap_or(TimeRange { start: 0, end: 0 });
    let mut flags = 0;
    if node.dirty {
        flags |= FLAG_DIRTY;
    }
    if node.summary.is_some() {
        flags |= FLAG_SUMMARY;
    }
    out.push(node.level);
    out.push(flags);
    out.extend_from_slice(&saturating_u16(node.len()).to_le_bytes());
    out.extend_from_slice(&node.version.to_le_bytes());
    put_time(&mut out, time);
    out.extend_from_slice(&node.items().to_le_bytes());
    if let Some(summary) = &node.summary {
        out.extend_from_slice(&summary.input_hash.to_le_bytes());
        put_text(&mut out, &summary.text);
    }
    match &node.body {
        NodeBody::Leaves(leaves) => {
            for leaf in leaves {
                put_key(&mut out, &leaf.key);
                put_text(&mut out, &leaf.text);
            }
        }
        NodeBody::Children(children) => {
            for child in children {
                out.extend_from_slice(&child.id.0.to_le_bytes());
                put_key(&mut out, &child.first);
                put_time(&mut out, child.time);
                out.extend_from_slice(&child.items.to_le_bytes());
                out.extend_from_slice(&child.crc.to_le_bytes());
            }
        }
    }
    seal(out)
}

/// Encodes a meta page.
#[must_use]
pub fn encode_meta(meta: &TreeMeta) -> Vec<u8> {
    let mut out = header(KIND_META);
    out.push(meta.kind.as_u8());
    out.push(meta.root.map_or(0, |r| r.level));
    out.extend_from_slice(&meta.branching.get().to_le_bytes());
    out.extend_from_slice(&meta.root.map_or(0, |r| r.id.0).to_le_bytes());
    out.extend_from_slice(&meta.root.map_or(0, |r| r.crc).to_le_bytes());
    for v in [meta.items, meta.next_node, meta.version, meta.dirty_nodes] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    put_text(&mut out, &meta.label);
    seal(out)
}

/// The trailer of an encoded page: the masked CRC-32 a parent records for it. `None` when the
/// slice is shorter than a trailer.
#[must_use]
pub fn page_crc(page: &[u8]) -> Option<u32> {
    let at = page.len().checked_sub(TRAILER_LEN)?;
    let bytes: [u8; 4] = page.get(at..)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

/// Decodes any page, checking its CRC and every structural rule of the format.
///
/// # Errors
/// [`DecodeError`] with the offset within `bytes` of the first thing that is wrong: short page,
/// CRC mismatch, bad magic/version/kind, out-of-range count or level, entries out of key order,
/// header fields that disagree with the entries, invalid UTF-8, or trailing bytes.
pub fn decode(bytes: &[u8]) -> Result<Page, DecodeError> {
    let body_len = bytes
        .len()
        .checked_sub(TRAILER_LEN)
        .filter(|&n| n >= HEADER_LEN)
        .ok_or(DecodeError::new(0, "page shorter than header and trailer"))?;
    let (body, _) = bytes.split_at(body_len);
    if page_crc(bytes) != Some(masked_crc32(&[body])) {
        return Err(DecodeError::new(body_len, "page checksum mismatch"));
    }
    let mut r = ByteReader::new(body);
    if r.array::<4>("magic")? != MAGIC {
        return Err(DecodeError::new(0, "bad magic"));
    }
    if r.u8("format version")? != FORMAT_VERSION {
        return Err(DecodeError::new(4, "unsupported format version"));
    }
    let kind = r.u8("page kind")?;
    if r.u16("reserved")? != 0 {
        return Err(DecodeError::new(6, "reserved bytes not zero"));
    }
    let page = match kind {
        KIND_BOTTOM | KIND_BRANCH => Page::Node(decode_node(&mut r, kind)?),
        KIND_META => Page::Meta(decode_meta(&mut r)?),
        _ => return Err(DecodeError::new(5, "unknown page kind")),
    };
    if !r.is_empty() {
        return Err(DecodeError::new(
            r.position(),
            "trailing bytes before trailer",
        ));
    }
    Ok(page)
}

fn decode_node(r: &mut ByteReader<'_>, kind: u8) -> Result<Node, DecodeError> {
    let at = r.position();
    let level = r.u8("level")?;
    if (kind == KIND_BOTTOM) != (level == 1) || level == 0 {
        return Err(DecodeError::new(at, "level does not match page kind"));
    }
    let at = r.position();
    let flags = r.u8("flags")?;
    if flags & !(FLAG_DIRTY | FLAG_SUMMARY) != 0 {
        return Err(DecodeError::new(at, "unknown flag bits"));
    }
    let at = r.position();
    let count = usize::from(r.u16("entry count")?);
    if count == 0 || count > usize::from(MAX_BRANCHING) {
        return Err(DecodeError::new(at, "entry count out of range"));
    }
    let version = r.u64("version")?;
    let header_at = r.position();
    let time = get_time(r)?;
    let items = r.u64("item count")?;
    let summary = if flags & FLAG_SUMMARY == 0 {
        None
    } else {
        let input_hash = r.u64("summary input hash")?;
        let text = get_text(r, "summary text")?;
        Some(Summary { input_hash, text })
    };
    let body = if kind == KIND_BOTTOM {
        NodeBody::Leaves(decode_leaves(r, count)?)
    } else {
        NodeBody::Children(decode_children(r, count)?)
    };
    let node = Node {
        level,
        version,
        dirty: flags & FLAG_DIRTY != 0,
        summary,
        body,
    };
    if node.time_range() != Some(time) {
        return Err(DecodeError::new(
            header_at,
            "time range disagrees with entries",
        ));
    }
    if node.items() != items {
        return Err(DecodeError::new(
            header_at + 16,
            "item count disagrees with entries",
        ));
    }
    Ok(node)
}

fn decode_leaves(r: &mut ByteReader<'_>, count: usize) -> Result<Vec<LeafEntry>, DecodeError> {
    let mut leaves: Vec<LeafEntry> = Vec::with_capacity(count);
    for _ in 0..count {
        let at = r.position();
        let key = get_key(r)?;
        if leaves.last().is_some_and(|prev| prev.key >= key) {
            return Err(DecodeError::new(at, "leaves out of key order"));
        }
        let text = get_text(r, "leaf text")?;
        leaves.push(LeafEntry { key, text });
    }
    Ok(leaves)
}

fn decode_children(r: &mut ByteReader<'_>, count: usize) -> Result<Vec<ChildRef>, DecodeError> {
    let mut children: Vec<ChildRef> = Vec::with_capacity(count);
    let mut items = 0u64;
    for _ in 0..count {
        let at = r.position();
        let id = NodeId(r.u64("child id")?);
        let first = get_key(r)?;
        let time = get_time(r)?;
        let child_items = r.u64("child item count")?;
        let crc = r.u32("child crc")?;
        if id == NodeId::META || child_items == 0 {
            return Err(DecodeError::new(at, "child id 0 or empty child"));
        }
        if children.last().is_some_and(|prev| prev.first >= first) {
            return Err(DecodeError::new(at, "children out of key order"));
        }
        if time.start != first.time.start || time.end < first.time.end {
            return Err(DecodeError::new(
                at,
                "child time range disagrees with its first key",
            ));
        }
        items = items
            .checked_add(child_items)
            .ok_or(DecodeError::new(at, "item count overflows"))?;
        children.push(ChildRef {
            id,
            first,
            time,
            items: child_items,
            crc,
        });
    }
    Ok(children)
}

fn decode_meta(r: &mut ByteReader<'_>) -> Result<TreeMeta, DecodeError> {
    let at = r.position();
    let kind =
        TreeKind::from_u8(r.u8("tree kind")?).ok_or(DecodeError::new(at, "unknown tree kind"))?;
    let root_level = r.u8("root level")?;
    let at = r.position();
    let branching = Branching::new(r.u16("branching")?)
        .map_err(|_| DecodeError::new(at, "branching factor out of range"))?;
    let root_at = r.position();
    let root_id = NodeId(r.u64("root id")?);
    let root_crc = r.u32("root crc")?;
    let items = r.u64("item count")?;
    let next_node = r.u64("next node id")?;
    let version = r.u64("version")?;
    let dirty_nodes = r.u64("dirty node count")?;
    let label = get_text(r, "label")?;
    let root = match (root_level, root_id) {
        (0, NodeId::META) if items == 0 && root_crc == 0 => None,
        (level, id) if level > 0 && id != NodeId::META && items > 0 && id.0 < next_node => {
            Some(RootRef {
                id,
                level,
                crc: root_crc,
            })
        }
        _ => {
            return Err(DecodeError::new(
                root_at,
                "root, level and item count disagree",
            ))
        }
    };
    Ok(TreeMeta {
        kind,
        label,
        branching,
        root,
        items,
        next_node,
        version,
        dirty_nodes,
    })
}

fn header(kind: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&MAGIC);
    out.push(FORMAT_VERSION);
    out.push(kind);
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

fn seal(mut out: Vec<u8>) -> Vec<u8> {
    let crc = masked_crc32(&[&out]);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn put_time(out: &mut Vec<u8>, time: TimeRange) {
    out.extend_from_slice(&time.start.to_le_bytes());
    out.extend_from_slice(&time.end.to_le_bytes());
}

fn put_key(out: &mut Vec<u8>, key: &LeafKey) {
    put_time(out, key.time);
    out.push(key.payload.kind.as_u8());
    out.extend_from_slice(&key.payload.id.to_le_bytes());
}

/// Writes a `u32` length and the bytes. Callers keep texts within [`MAX_TEXT_BYTES`] (the tree
/// rejects longer ones), so the length always fits.
fn put_text(out: &mut Vec<u8>, text: &str) {
    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// Entry counts are bounded by [`MAX_BRANCHING`], so this never saturates for a valid node.
fn saturating_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn get_time(r: &mut ByteReader<'_>) -> Result<TimeRange, DecodeError> {
    let at = r.position();
    let start = i64::from_le_bytes(r.array("time start")?);
    let end = i64::from_le_bytes(r.array("time end")?);
    TimeRange::new(start, end).ok_or(DecodeError::new(at, "time range start after end"))
}

fn get_key(r: &mut ByteReader<'_>) -> Result<LeafKey, DecodeError> {
    let time = get_time(r)?;
    let at = r.position();
    let kind = PayloadKind::from_u8(r.u8("payload kind")?)
        .ok_or(DecodeError::new(at, "unknown payload kind"))?;
    let id = r.u64("payload id")?;
    Ok(LeafKey {
        time,
        payload: Payload { kind, id },
    })
}

fn get_text(r: &mut ByteReader<'_>, what: &'static str) -> Result<String, DecodeError> {
    let at = r.position();
    let bytes = r.len_prefixed(what)?;
    if bytes.len() > MAX_TEXT_BYTES {
        return Err(DecodeError::new(at, "text longer than 1 MiB"));
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::new(at + 4, "text is not UTF-8"))
}
