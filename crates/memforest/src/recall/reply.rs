//! Replies: the facts of the turn that answers a question.
//!
//! In a conversation the words of a question are often in the turn that asks ("How do
//! you feel about starting this journey?") and the memory in the turn after it, which
//! shares none of them ("I'm so excited and inspired!"). When a ranked fact comes from a
//! turn that ends with a question mark, `Memory::query` places the facts of the next
//! turn of its session right after it, at its score (`recall::search`). The next turn is
//! found by the fusion step, which reads each pooled cell with its neighbours
//! (`recall::fuse`); its facts through the cell index (`recall::index::cell_facts`).
//!
//! An assistant's reply is brought only when the question asks what the assistant said
//! (`Asked::about_the_assistant`), as the assistant's facts are weighted down otherwise
//! (`fuse::ASSISTANT_WEIGHT`): a user who asks the assistant something has said what the
//! memory should keep in the question. A system or tool turn is no reply, and the turns
//! of `Memory::update`'s session (`api::UPDATES_SESSION`) are separate memories that
//! neither ask nor reply. On a store indexed before the cell index, replies come once a
//! query of a writable handle has backfilled it (`index::ensure`).

use crate::memory::record::FactRecord;
use crate::memory::MemoryError;
use crate::recall::index;
use crate::recall::query::Query;
use crate::recall::reader::Reader;
use crate::recall::search::load_fact;

/// The turn that replies to a ranked fact's source turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Session of both turns.
    pub session: String,
    /// The cell holding the replying turn.
    pub cell: u64,
    /// The replying turn's id.
    pub turn: String,
}

/// Whether a turn with text `text` asks: it ends with a question mark (`?` or `？`),
/// so the next turn replies to it.
#[must_use]
pub fn asks(text: &str) -> bool {
    text.trim_end().ends_with(['?', '？'])
}

/// The facts sourced by `reply`'s turn that `query` admits, in id order: the cell's
/// entries, each fact read and kept when one of its occurrences in the cell lists the
/// turn.
///
/// # Errors
/// Engine read errors; corrupt entries or fact records.
pub fn facts(
    r: &Reader<'_>,
    reply: &Reply,
    query: &Query,
) -> Result<Vec<(u64, FactRecord)>, MemoryError> {
    let mut out = Vec::new();
    for id in index::cell_facts(r, reply.cell)? {
        let Some(rec) = load_fact(r, id)? else {
            continue;
        };
        let said = rec.occurrences.iter().any(|o| {
            o.cell == reply.cell && o.session == reply.session && o.turns.contains(&reply.turn)
        });
        if said && query.admits(&rec) {
            out.push((id, rec));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::asks;

    #[test]
    fn a_turn_asks_when_it_ends_with_a_question_mark() {
        assert!(asks("How do you feel about it? "));
        assert!(asks("你去过北京吗？"));
        assert!(!asks("Is it? I think so."));
        assert!(!asks("Nice photo [image: a dog on a beach]"));
        assert!(!asks(""));
    }
}
