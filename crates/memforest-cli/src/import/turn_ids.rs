//! [`TurnIds`]: ids for the turns a file gives none.

use std::collections::HashMap;

/// Numbers the turns of each (tenant, session) over a whole file, so that a session that
/// appears again later in the file continues its numbering: its turns get new ids and
/// are appended by `Memory::ingest_session` instead of being taken for the first appearance's
/// turns. The first appearance of a session is numbered from 0, so its ids are
/// `Memory::ingest_session`'s own default ids, and importing the same file again gives the
/// same ids (a no-op).
#[derive(Debug, Default)]
pub struct TurnIds(HashMap<(String, String), usize>);

impl TurnIds {
    /// Reserves `n` positions for the next appearance of `session` of `tenant`; returns
    /// the first, and whether the session appeared before in the file.
    pub fn reserve(&mut self, tenant: &str, session: &str, n: usize) -> (usize, bool) {
        let key = (tenant.to_owned(), session.to_owned());
        let seen = self.0.get(&key).copied();
        let first = seen.unwrap_or(0);
        self.0.insert(key, first.saturating_add(n));
        (first, seen.is_some())
    }

    /// The id of the turn at position `position` of `session`: `{session}#turn_{position}`.
    #[must_use]
    pub fn id(session: &str, position: usize) -> String {
        memforest::memory::record::default_turn_id(session, position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_seen_again_continues_its_numbering() {
        let mut ids = TurnIds::default();
        assert_eq!(ids.reserve("a", "s1", 2), (0, false));
        assert_eq!(ids.reserve("a", "s2", 1), (0, false));
        assert_eq!(ids.reserve("b", "s1", 1), (0, false));
        assert_eq!(ids.reserve("a", "s1", 3), (2, true));
        assert_eq!(ids.reserve("a", "s1", 0), (5, true));
        assert_eq!(TurnIds::id("s1", 5), "s1#turn_5");
    }
}
