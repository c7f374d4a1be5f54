//! The metadata record that opens every segment and chains it to its predecessor.

use memforest_codec::ByteReader;

/// Magic bytes at the start of the segment metadata payload.
pub const MAGIC: [u8; 8] = *b"MFWALSEG";

/// Format version written by this crate.
pub const FORMAT_VERSION: u32 = 1;

/// Encoded size of [`SegmentMeta`], in bytes.
pub const ENCODED_LEN: usize = 8 + 4 + 8 + 8 + 8;

/// Payload of the [`crate::format::MetadataType::SEGMENT_META`] record, the first record of
/// every segment. Chaining each segment to its predecessor's id and last sequence number
/// lets recovery detect a missing or truncated earlier segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentMeta {
    /// This segment's id (also in its file name).
    pub segment_id: u64,
    /// Id of the segment written just before this one; 0 for the first segment of a log.
    pub predecessor_id: u64,
    /// Last sequence number written before this segment was started (0 when none).
    pub predecessor_last_seqno: u64,
}

impl SegmentMeta {
    /// The payload: magic, format version u32, segment id u64, predecessor id u64,
    /// predecessor last seqno u64, all little-endian.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(ENCODED_LEN);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&self.segment_id.to_le_bytes());
        out.extend_from_slice(&self.predecessor_id.to_le_bytes());
        out.extend_from_slice(&self.predecessor_last_seqno.to_le_bytes());
        out
    }

    /// Decodes a payload written by [`Self::encode`].
    ///
    /// # Errors
    /// A static reason when the magic, version or length is wrong.
    pub fn decode(payload: &[u8]) -> Result<Self, &'static str> {
        let mut r = ByteReader::new(payload);
        let magic: [u8; 8] = r.array("magic").map_err(|e| e.reason)?;
        if magic != MAGIC {
            return Err("bad magic");
        }
        if r.u32("version").map_err(|e| e.reason)? != FORMAT_VERSION {
            return Err("unsupported format version");
        }
        let meta = Self {
            segment_id: r.u64("segment id").map_err(|e| e.reason)?,
            predecessor_id: r.u64("predecessor id").map_err(|e| e.reason)?,
            predecessor_last_seqno: r.u64("predecessor last seqno").map_err(|e| e.reason)?,
        };
        if !r.is_empty() {
            return Err("trailing bytes");
        }
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let m = SegmentMeta {
            segment_id: 9,
            predecessor_id: 8,
            predecessor_last_seqno: 1234,
        };
        let bytes = m.encode();
        assert_eq!(bytes.len(), ENCODED_LEN);
        assert_eq!(SegmentMeta::decode(&bytes), Ok(m));
        assert_eq!(SegmentMeta::decode(&bytes[..10]), Err("version"));
        let mut bad = bytes.clone();
        bad[0] ^= 1;
        assert_eq!(SegmentMeta::decode(&bad), Err("bad magic"));
    }
}
