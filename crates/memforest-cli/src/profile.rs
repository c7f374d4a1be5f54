//! `memforest profile`: what the store knows about a user ([`memforest::Memory::profile`]).

use memforest::{CurrentValue, Profile};
use serde::Serialize;

use crate::records;

/// One entity of a profile.
#[derive(Debug, Clone, Serialize)]
pub struct Entity {
    /// The entity (its tree's label).
    pub entity: String,
    /// The root summary of its tree.
    pub summary: String,
    /// How much it is recalled (higher: hotter).
    pub heat: f64,
}

/// What `memforest profile` prints.
#[derive(Debug, Clone, Serialize)]
pub struct UserProfile {
    /// The user.
    pub user: String,
    /// What is true now: the newest memory of each subject and attribute.
    pub current: Vec<CurrentValue>,
    /// The summary of what is known about the user (`entity:user`); `null` before its first
    /// summary.
    pub summary: Option<String>,
    /// The hottest entities with a summary, hottest first.
    pub entities: Vec<Entity>,
}

impl UserProfile {
    /// `profile` of `user`.
    #[must_use]
    pub fn new(user: &str, profile: Profile) -> Self {
        Self {
            user: user.to_owned(),
            current: profile.current,
            summary: profile.user,
            entities: profile
                .entities
                .into_iter()
                .map(|e| Entity {
                    entity: e.entity,
                    summary: e.summary,
                    heat: e.heat,
                })
                .collect(),
        }
    }
}

/// `memforest profile`'s text.
#[must_use]
pub fn render(p: &UserProfile) -> String {
    if p.summary.is_none() && p.entities.is_empty() && p.current.is_empty() {
        return format!(
            "nothing known about user {:?} yet (summaries are written in the background \
             and when a writer closes)\n",
            p.user
        );
    }
    let mut out = String::new();
    let mut subject = None;
    for v in &p.current {
        if subject != Some(&v.subject) {
            out.push_str(&format!("{}:\n", v.subject));
            subject = Some(&v.subject);
        }
        let since = v.since.map_or_else(|| "-".to_owned(), records::time);
        out.push_str(&format!(
            "  {}: {}  (since {since}; memory {})\n",
            v.attribute, v.text, v.id
        ));
    }
    out.push_str(&format!(
        "user {:?}: {}\n",
        p.user,
        p.summary.as_deref().unwrap_or("(no summary yet)")
    ));
    for e in &p.entities {
        out.push_str(&format!("  {}: {}\n", e.entity, e.summary));
    }
    out
}
