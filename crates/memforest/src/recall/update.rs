//! Knowledge updates: facts about the same entity and attribute (a slot,
//! [`crate::recall::index::slots`]) supersede each other by start time. The newest is
//! current; an older one stays in history with its validity ending where the next one
//! starts. Computed at read time from the slot index, so nothing is rewritten and both
//! versions remain queryable.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use crate::memory::record::FactRecord;
use crate::memory::MemoryError;
use crate::recall::index;
use crate::recall::reader::Reader;

/// Supersession answers for one read: each slot's members are read once, sorted by
/// `(start, fact id)`, and every later question about the slot is a binary search (a
/// search asks about each fact it returns, and those often share a slot).
pub struct Supersession<'r, 'a> {
    reader: &'r Reader<'a>,
    slots: HashMap<String, Vec<(i64, u64)>>,
}

impl<'r, 'a> Supersession<'r, 'a> {
    /// Answers read through `reader`.
    #[must_use]
    pub fn new(reader: &'r Reader<'a>) -> Self {
        Self {
            reader,
            slots: HashMap::new(),
        }
    }

    /// The start time of the earliest fact that supersedes fact `id` (a later start in
    /// one of its slots; equal starts are ordered by fact id), or `None` when it is
    /// current. With `as_of` (microseconds), facts starting after it do not count: the
    /// answer is as of then. A fact that states a past value ("used to",
    /// [`index::states_past`]) is superseded from when it was said.
    ///
    /// # Errors
    /// Engine errors; corrupt slot entries.
    pub fn until(
        &mut self,
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
            let members = match self.slots.entry(slot) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let mut m: Vec<(i64, u64)> = index::slot_members(self.reader, e.key())?
                        .into_iter()
                        .map(|(fact, start)| (start, fact))
                        .collect();
                    m.sort_unstable();
                    e.insert(m)
                }
            };
            // The first member after this fact starts earliest among those after it.
            let next = members
                .get(members.partition_point(|&m| m <= mine))
                .map(|&(start, _)| start)
                .filter(|&start| as_of.is_none_or(|t| start <= t));
            if let Some(start) = next {
                until = Some(until.map_or(start, |u| u.min(start)));
            }
        }
        Ok(until)
    }
}
