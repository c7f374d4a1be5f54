//! Entity trees: a candidate key becomes active after enough facts across enough sessions
//! with a specific-looking surface form; its tree is then backfilled with every earlier fact
//! of that entity (paper, "Entity trees").

use memforest_tree::{Payload, TreeKind, USER_ENTITY};

use crate::memory::extract::dates;
use crate::memory::record::{self, EntityState, FactRecord, ENTITY_PREFIX};
use crate::memory::route::{FactRef, Router};
use crate::memory::text::{is_cjk, is_stop_word, normalize};
use crate::memory::MemoryError;
use crate::schema::Table;

/// The normalized entity key of `surface`, or `None` when it is rejected: `user` or
/// `assistant`, a date, digits only, over 64 characters or over 8 words.
#[must_use]
pub fn entity_key(surface: &str) -> Option<String> {
    let key = normalize(surface);
    let words = key.split(' ').count();
    let rejected = key.is_empty()
        || key == USER_ENTITY
        || key == "assistant"
        || key.chars().count() > 64
        || words > 8
        || key.chars().all(|c| c.is_ascii_digit() || c == ' ')
        || !dates::find(surface, 0).is_empty();
    (!rejected).then_some(key)
}

/// A surface form that names something specific: it has a capital letter, a digit or a CJK
/// character (CJK text has no capitals; its entities are titles and names in `《》`, `「」`)
/// and a word that is not a stop word.
fn specific(surface: &str) -> bool {
    surface
        .chars()
        .any(|c| c.is_uppercase() || c.is_ascii_digit() || is_cjk(c))
        && normalize(surface).split(' ').any(|w| !is_stop_word(w))
}

impl Router<'_, '_> {
    /// Updates the state of every entity of `fact`; inserts into active entity trees and
    /// activates (with backfill) those that cross the thresholds.
    pub(super) fn route_entities(&mut self, fact: FactRef<'_>) -> Result<(), MemoryError> {
        for surface in &fact.rec.entities {
            let Some(key) = entity_key(surface) else {
                continue;
            };
            if self.forest.active_entities.contains(&key) {
                self.insert_fact(&key, fact.id, fact.rec)?;
                continue;
            }
            let state_key = record::prefixed(ENTITY_PREFIX, key.as_bytes());
            let mut state: EntityState = match self.st.get(Table::RouterState, &state_key)? {
                Some(b) => record::decode(&b, "entity state")?,
                None => EntityState {
                    surface: surface.clone(),
                    ..EntityState::default()
                },
            };
            // A key whose surface form is not specific can never activate: keeping its
            // fact list would only grow a value read and rewritten on every mention.
            if !state.active && !specific(&state.surface) {
                continue;
            }
            let before = state.clone();
            if state.active {
                self.insert_fact(&key, fact.id, fact.rec)?;
            } else {
                if !state.facts.contains(&fact.id) {
                    state.facts.push(fact.id);
                }
                let enough_sessions = state.sessions.len() >= self.opts.entity_min_sessions;
                if !enough_sessions && !state.sessions.iter().any(|s| s == fact.session) {
                    state.sessions.push(fact.session.to_owned());
                }
                if state.facts.len() >= self.opts.entity_min_facts
                    && state.sessions.len() >= self.opts.entity_min_sessions
                    && specific(&state.surface)
                {
                    self.activate(&key, &mut state, fact)?;
                }
            }
            if state != before {
                self.st
                    .put(Table::RouterState, &state_key, record::encode(&state)?);
            }
            if state.active {
                self.forest.active_entities.insert(key);
            }
        }
        Ok(())
    }

    /// Creates the entity's tree and inserts every fact listed in its state (backfill).
    fn activate(
        &mut self,
        key: &str,
        state: &mut EntityState,
        current: FactRef<'_>,
    ) -> Result<(), MemoryError> {
        for id in std::mem::take(&mut state.facts) {
            if id == current.id {
                self.insert_fact(key, id, current.rec)?;
                continue;
            }
            let Some(bytes) = self.st.get(Table::Facts, &id.to_be_bytes())? else {
                continue;
            };
            let rec: FactRecord = record::decode(&bytes, "fact")?;
            self.insert_fact(key, id, &rec)?;
        }
        state.active = true;
        Ok(())
    }

    fn insert_fact(&mut self, key: &str, id: u64, rec: &FactRecord) -> Result<(), MemoryError> {
        self.insert(
            TreeKind::Entity,
            key,
            Payload::fact(id),
            rec.time,
            &rec.text,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_roles_dates_digits_and_long_keys() {
        assert_eq!(
            entity_key("Melanie Smith").as_deref(),
            Some("melanie smith")
        );
        assert_eq!(entity_key("User"), None);
        assert_eq!(entity_key("assistant"), None);
        assert_eq!(entity_key("2023"), None);
        assert_eq!(entity_key("March 3, 2023"), None);
        assert_eq!(entity_key(&"x".repeat(65)), None);
        assert_eq!(entity_key("a b c d e f g h i"), None);
        assert!(specific("Paris") && specific("5 km") && !specific("the"));
        assert_eq!(entity_key("流浪地球").as_deref(), Some("流浪地球"));
        assert!(specific("流浪地球") && specific("イエスタデイ"));
        assert_eq!(entity_key("4月27号"), None, "a date");
    }
}
