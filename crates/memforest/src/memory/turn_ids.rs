//! Each session's turn-id index, so that an add finds a message id it already stores with
//! one point read instead of reading the whole session: `Sessions` key
//! [`TURN_ID_PREFIX`] `| session hash BE | turn id` holds the turn's index (u32 BE), and
//! [`INDEXED_PREFIX`] `| session hash BE` marks a session whose every turn is in the
//! index. A session stored before the index existed has no mark: the first add to it
//! indexes its turns in the same batch as its own.

use crate::memory::record::{self, TurnRecord};
use crate::memory::store::Staged;
use crate::memory::MemoryError;
use crate::schema::Table;

/// `Sessions` key prefix of a turn-id entry.
pub const TURN_ID_PREFIX: u8 = b'i';
/// `Sessions` key prefix of the mark of a fully indexed session.
pub const INDEXED_PREFIX: u8 = b'x';

/// The index key of turn `id` of `session`.
fn key(session: &str, id: &str) -> Vec<u8> {
    let mut k = record::prefixed(TURN_ID_PREFIX, &record::session_hash(session).to_be_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

/// The mark of `session`.
fn mark(session: &str) -> Vec<u8> {
    record::prefixed(INDEXED_PREFIX, &record::session_hash(session).to_be_bytes())
}

/// Whether every turn of `session` is in the index.
///
/// # Errors
/// Engine read errors.
pub fn complete(st: &Staged<'_>, session: &str) -> Result<bool, MemoryError> {
    Ok(st.get(Table::Sessions, &mark(session))?.is_some())
}

/// Marks `session` as fully indexed (its turns so far must be in the index).
pub fn mark_complete(st: &mut Staged<'_>, session: &str) {
    st.put(Table::Sessions, &mark(session), Vec::new());
}

/// Records turn `id` of `session` at `index`.
pub fn put(st: &mut Staged<'_>, session: &str, id: &str, index: u32) {
    st.put(
        Table::Sessions,
        &key(session, id),
        index.to_be_bytes().to_vec(),
    );
}

/// Forgets turn `id` of `session`.
pub fn remove(st: &mut Staged<'_>, session: &str, id: &str) {
    st.delete(Table::Sessions, &key(session, id));
}

/// Forgets the mark of `session` (its turn entries are removed one by one).
pub fn unmark(st: &mut Staged<'_>, session: &str) {
    st.delete(Table::Sessions, &mark(session));
}

/// The stored turn of `session` with id `id`, found through the index.
///
/// # Errors
/// Engine read errors; [`MemoryError::Corrupt`] for an index entry that is not 4 bytes;
/// a corrupt turn record.
pub fn find(st: &Staged<'_>, session: &str, id: &str) -> Result<Option<TurnRecord>, MemoryError> {
    let Some(v) = st.get(Table::Sessions, &key(session, id))? else {
        return Ok(None);
    };
    let index = <[u8; 4]>::try_from(v.as_slice())
        .map(u32::from_be_bytes)
        .map_err(|_| MemoryError::Corrupt {
            what: "turn id index",
            detail: format!(
                "entry of {id:?} in session {session:?} is {} bytes",
                v.len()
            ),
        })?;
    st.get(Table::Turns, &record::turn_key(session, index))?
        .map(|b| record::decode(&b, "turn"))
        .transpose()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use memforest_engine::TenantId;
    use memforest_wal::Durability;

    use super::*;
    use crate::{Memory, Message};

    fn said(id: &str, text: &str) -> Message {
        Message::user(text).with_id(id)
    }

    /// A session stored before the index (no mark, no entries) is read whole by its next
    /// add, which finds its ids all the same and indexes it.
    #[test]
    fn a_session_stored_before_the_index_is_indexed_by_its_next_add() {
        let dir = tempfile::tempdir().unwrap();
        let mem = Memory::open(dir.path()).unwrap();
        let first = [
            said("m1", "I adopted a cat."),
            said("m2", "Her name is Miso."),
        ];
        assert_eq!(mem.add("alice", "s1", &first).unwrap().messages, 2);
        let shared = mem.memory_shared().unwrap();
        let tenant = TenantId::new("alice").unwrap();
        let mut st = Staged::new(&shared.kv, tenant.clone());
        for id in ["m1", "m2"] {
            assert!(find(&st, "s1", id).unwrap().is_some());
            remove(&mut st, "s1", id);
        }
        unmark(&mut st, "s1");
        st.commit(Durability::Buffered).unwrap();

        let again = [
            said("m1", "I adopted a cat."),
            said("m2", "Miso is black."),
            said("m3", "She sleeps all day."),
        ];
        let added = mem.add("alice", "s1", &again).unwrap();
        assert_eq!(
            (added.messages, added.duplicates, added.conflicts),
            (1, 1, vec!["m2".to_owned()])
        );
        let st = Staged::new(&shared.kv, tenant);
        assert!(complete(&st, "s1").unwrap());
        let texts: Vec<String> = ["m1", "m2", "m3"]
            .iter()
            .map(|id| find(&st, "s1", id).unwrap().unwrap().text)
            .collect();
        assert_eq!(
            texts,
            [
                "I adopted a cat.",
                "Her name is Miso.",
                "She sleeps all day."
            ]
        );
    }

    /// Deleting a message frees its id: the same id can be added again.
    #[test]
    fn a_deleted_message_leaves_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let mem = Memory::open(dir.path()).unwrap();
        mem.add("alice", "s1", &[said("m1", "I adopted a cat.")])
            .unwrap();
        mem.delete_message("alice", "s1", "m1").unwrap();
        let shared = mem.memory_shared().unwrap();
        let st = Staged::new(&shared.kv, TenantId::new("alice").unwrap());
        assert!(find(&st, "s1", "m1").unwrap().is_none());
        let added = mem
            .add("alice", "s1", &[said("m1", "I adopted a dog.")])
            .unwrap();
        assert_eq!((added.messages, added.conflicts.len()), (1, 0));
        mem.delete_session("alice", "s1").unwrap();
        let st = Staged::new(&shared.kv, TenantId::new("alice").unwrap());
        assert!(find(&st, "s1", "m1").unwrap().is_none());
        assert!(!complete(&st, "s1").unwrap());
    }
}
