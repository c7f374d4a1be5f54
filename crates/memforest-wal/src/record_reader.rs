//! [`LogReader`]: reads physical records from a byte slice, reassembles logical records,
//! and classifies everything else as a clean end or as [`Damage`].

use memforest_codec::ByteReader;

use crate::error::DamageReason;
use crate::format::{block_offset, record_crc, MetadataType, RecordType, BLOCK_SIZE, HEADER_SIZE};

/// What a logical record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// A data record (reassembled from `Full` or `First`..`Last` fragments).
    Data,
    /// A metadata record of the given type.
    Metadata(MetadataType),
}

/// One logical record read back from a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Data or metadata.
    pub kind: RecordKind,
    /// The record's payload, reassembled.
    pub payload: Vec<u8>,
    /// Byte offset of the record's first physical header in the log.
    pub start: u64,
    /// Byte offset just past its last physical fragment: where a log truncated after this
    /// record would end.
    pub end: u64,
}

/// A region of the log that is neither a valid record nor a clean (zeroed) end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// Byte offset in the log where the problem was detected.
    pub offset: u64,
    /// What is wrong there.
    pub reason: DamageReason,
}

/// Reads a whole log held in memory (RocksDB `log::Reader`).
///
/// Iterating yields, in file order, `Ok(record)` for each valid logical record and
/// `Err(damage)` for each damaged region; after a damaged record the reader resynchronises,
/// by the record's length when its header was sane, else at the next block boundary. The
/// iteration ends at the end of the slice or at a zeroed tail (every remaining byte zero),
/// which is a clean end. Never panics on any input.
#[derive(Debug)]
pub struct LogReader<'a> {
    data: &'a [u8],
    log_number: u64,
    pos: usize,
    /// Start offset and payload of a fragmented record being reassembled.
    partial: Option<(usize, Vec<u8>)>,
    done: bool,
}

/// One physical record, or what stopped it from being one.
enum Physical<'a> {
    Record {
        kind: RecordType,
        payload: &'a [u8],
        start: usize,
    },
    Damage(Damage),
    End,
}

impl<'a> LogReader<'a> {
    /// A reader over `data`, a whole log whose headers must carry `log_number`.
    #[must_use]
    pub fn new(data: &'a [u8], log_number: u64) -> Self {
        Self {
            data,
            log_number,
            pos: 0,
            partial: None,
            done: false,
        }
    }

    fn damage(offset: usize, reason: DamageReason) -> Damage {
        Damage {
            offset: offset as u64,
            reason,
        }
    }

    fn rest_is_zero(&self, from: usize) -> bool {
        self.data
            .get(from..)
            .unwrap_or_default()
            .iter()
            .all(|&b| b == 0)
    }

    fn next_block(pos: usize) -> usize {
        pos - block_offset(pos as u64) + BLOCK_SIZE
    }

    /// The header at `pos` if it is a whole, checksum-valid record (of any segment): its
    /// type byte, payload, and end offset.
    fn valid_at(&self, pos: usize) -> Option<(u8, &'a [u8], usize)> {
        let data: &'a [u8] = self.data;
        let mut header = ByteReader::new(data.get(pos..)?);
        let crc = header.u32("crc").ok()?;
        let len = usize::from(header.u16("length").ok()?);
        let type_byte = header.u8("type").ok()?;
        let segment = header.u64("segment id").ok()?;
        let end = pos + HEADER_SIZE + len;
        if type_byte == 0 || HEADER_SIZE + len > BLOCK_SIZE - block_offset(pos as u64) {
            return None;
        }
        let payload = data.get(pos + HEADER_SIZE..end)?;
        (record_crc(type_byte, segment, payload) == crc).then_some((type_byte, payload, end))
    }

    /// Where reading resumes after damage detected at `start`: the next position in the
    /// same block holding a valid record of this log (its header carries the segment id,
    /// so candidates are rare and each is verified by its checksum), else the next block.
    fn resync(&self, start: usize) -> usize {
        let block_end = Self::next_block(start).min(self.data.len());
        let id = self.log_number.to_le_bytes();
        (start + 1..block_end)
            .find(|&p| {
                self.data.get(p + 7..p + HEADER_SIZE) == Some(&id[..]) && self.valid_at(p).is_some()
            })
            .unwrap_or_else(|| Self::next_block(start))
    }

    /// Damage at `start`; reading resumes at [`Self::resync`].
    fn damaged(&mut self, start: usize, reason: DamageReason) -> Physical<'a> {
        self.pos = self.resync(start);
        Physical::Damage(Self::damage(start, reason))
    }

    /// Reads the physical record at `self.pos` and moves past it.
    fn read_physical(&mut self) -> Physical<'a> {
        loop {
            let left_in_block = BLOCK_SIZE - block_offset(self.pos as u64);
            if left_in_block < HEADER_SIZE {
                // A zero-filled block tail.
                self.pos += left_in_block;
                continue;
            }
            let start = self.pos;
            let rest = self.data.get(start..).unwrap_or_default();
            if rest.is_empty() {
                return Physical::End;
            }
            if rest.len() < HEADER_SIZE {
                self.pos = self.data.len();
                if self.rest_is_zero(start) {
                    return Physical::End;
                }
                return Physical::Damage(Self::damage(start, DamageReason::TruncatedHeader));
            }
            let mut header = ByteReader::new(rest);
            let (Ok(_crc), Ok(len), Ok(type_byte), Ok(segment)) = (
                header.u32("crc"),
                header.u16("length"),
                header.u8("type"),
                header.u64("segment id"),
            ) else {
                // Unreachable: the slice holds at least a header.
                self.pos = self.data.len();
                return Physical::Damage(Self::damage(start, DamageReason::TruncatedHeader));
            };
            if type_byte == 0 {
                if self.rest_is_zero(start) {
                    self.pos = self.data.len();
                    return Physical::End;
                }
                return self.damaged(start, DamageReason::ZerosThenData);
            }
            let len_usize = usize::from(len);
            if HEADER_SIZE + len_usize > left_in_block {
                return self.damaged(start, DamageReason::LengthPastBlock { len });
            }
            if start + HEADER_SIZE + len_usize > self.data.len() {
                return self.damaged(start, DamageReason::TruncatedPayload { len });
            }
            let Some((_, payload, end)) = self.valid_at(start) else {
                return self.damaged(start, DamageReason::ChecksumMismatch);
            };
            if segment != self.log_number {
                return self.damaged(start, DamageReason::WrongSegment { found: segment });
            }
            self.pos = end;
            let Some(kind) = RecordType::from_byte(type_byte) else {
                return Physical::Damage(Self::damage(start, DamageReason::UnknownType(type_byte)));
            };
            return Physical::Record {
                kind,
                payload,
                start,
            };
        }
    }
}

impl Iterator for LogReader<'_> {
    type Item = Result<LogRecord, Damage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            let before = self.pos;
            let physical = self.read_physical();
            // A pending fragmented record is abandoned by anything but Middle/Last.
            let continues = matches!(
                physical,
                Physical::Record {
                    kind: RecordType::Middle | RecordType::Last,
                    ..
                }
            );
            if !continues {
                if let Some((start, _)) = self.partial.take() {
                    // Re-read this physical record on the next call.
                    self.pos = before;
                    return Some(Err(Self::damage(start, DamageReason::UnfinishedRecord)));
                }
            }
            match physical {
                Physical::End => {
                    self.done = true;
                    return None;
                }
                Physical::Damage(damage) => return Some(Err(damage)),
                Physical::Record {
                    kind,
                    payload,
                    start,
                } => {
                    let whole = |kind, payload: Vec<u8>, start: usize| LogRecord {
                        kind,
                        payload,
                        start: start as u64,
                        end: self.pos as u64,
                    };
                    match kind {
                        RecordType::Full => {
                            return Some(Ok(whole(RecordKind::Data, payload.to_vec(), start)))
                        }
                        RecordType::Metadata(m) => {
                            return Some(Ok(whole(
                                RecordKind::Metadata(m),
                                payload.to_vec(),
                                start,
                            )))
                        }
                        RecordType::First => self.partial = Some((start, payload.to_vec())),
                        RecordType::Middle | RecordType::Last => {
                            let Some((first, mut buf)) = self.partial.take() else {
                                return Some(Err(Self::damage(
                                    start,
                                    DamageReason::OrphanFragment,
                                )));
                            };
                            buf.extend_from_slice(payload);
                            if kind == RecordType::Last {
                                return Some(Ok(whole(RecordKind::Data, buf, first)));
                            }
                            self.partial = Some((first, buf));
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record_writer::LogWriter;

    fn log(records: &[Vec<u8>]) -> (Vec<u8>, Vec<u64>) {
        let mut w = LogWriter::new(Vec::new(), 3);
        let mut ends = Vec::new();
        for r in records {
            w.add_record(r).unwrap();
            ends.push(w.len());
        }
        (w.into_inner(), ends)
    }

    #[test]
    fn round_trip_with_fragments_and_ends() {
        let records = vec![vec![], vec![1; 10], vec![2; 3 * BLOCK_SIZE + 5], vec![3; 7]];
        let (bytes, ends) = log(&records);
        let read: Vec<LogRecord> = LogReader::new(&bytes, 3).map(Result::unwrap).collect();
        assert_eq!(read.len(), records.len());
        for ((r, want), end) in read.iter().zip(&records).zip(&ends) {
            assert_eq!(&r.payload, want);
            assert_eq!(r.end, *end);
            assert_eq!(r.kind, RecordKind::Data);
        }
    }

    #[test]
    fn zero_tail_is_clean_but_zeros_then_data_is_damage() {
        let (mut bytes, _) = log(&[vec![5; 100]]);
        bytes.extend_from_slice(&[0; 5000]);
        assert_eq!(LogReader::new(&bytes, 3).count(), 1);
        bytes.push(1);
        let items: Vec<_> = LogReader::new(&bytes, 3).collect();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[1],
            Err(Damage {
                offset: (HEADER_SIZE + 100) as u64,
                reason: DamageReason::ZerosThenData
            })
        );
    }

    #[test]
    fn wrong_log_number_is_damage() {
        let (bytes, _) = log(&[vec![5; 10]]);
        let items: Vec<_> = LogReader::new(&bytes, 4).collect();
        assert_eq!(
            items,
            vec![Err(Damage {
                offset: 0,
                reason: DamageReason::WrongSegment { found: 3 }
            })]
        );
    }
}
