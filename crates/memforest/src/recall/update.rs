//! Knowledge updates: facts about the same entity and attribute (a slot,
//! [`crate::recall::index::slots`]) supersede each other by start time. The newest is
//! current; an older one stays in history with its validity ending where the next one
//! starts. Computed at read time from the slot index, so nothing is rewritten and both
//! versions remain queryable.

use crate::memory::record::FactRecord;
use crate::memory::MemoryError;
use crate::recall::index;
use crate::recall::reader::Reader;

/// The start time of the earliest fact that supersedes fact `id` (a later start in one of
/// its slots; equal starts are ordered by fact id), or `None` when it is current. With
/// `as_of` (microseconds), facts starting after it do not count: the answer is as of then.
/// A fact that states a past value ("used to", [`index::states_past`]) is superseded from
/// when it was said.
///
/// # Errors
/// Engine errors; corrupt slot entries.
pub fn superseded(
    r: &Reader<'_>,
    id: u64,
    rec: &FactRecord,
    as_of: Option<i64>,
) -> Result<Option<i64>, MemoryError> {
    if index::states_past(rec) {
        return Ok(Some(index::slot_start(rec)));
    }
    let mine = (index::slot_start(rec), id);
    let mut until: Option<i64> = None;
    for slot in index::slots(rec) {
        for (other, start) in index::slot_members(r, &slot)? {
            if (start, other) > mine && as_of.is_none_or(|t| start <= t) {
                until = Some(until.map_or(start, |u| u.min(start)));
            }
        }
    }
    Ok(until)
}
