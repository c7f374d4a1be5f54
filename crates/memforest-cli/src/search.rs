//! `memforest search`: the memories of a user that best answer a question.

use memforest::Hit;
use serde::Serialize;

use crate::records::{self, span};

/// What `memforest search` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// The user searched.
    pub user: String,
    /// The question.
    pub question: String,
    /// The memories found, best first: id, text, score, event time, `current` and
    /// `valid_until`, sources.
    pub hits: Vec<Hit>,
}

/// `memforest search`'s text: two lines a hit.
#[must_use]
pub fn render(f: &Found) -> String {
    if f.hits.is_empty() {
        return format!("no memories of user {:?} match\n", f.user);
    }
    let mut out = String::new();
    for (i, h) in f.hits.iter().enumerate() {
        let status = match (h.current, h.valid_until) {
            (true, _) => "current".to_owned(),
            (false, Some(t)) => format!("superseded, valid until {}", records::time(t)),
            (false, None) => "superseded".to_owned(),
        };
        out.push_str(&format!(
            "{:>3}. [{:.3}] {}\n     {}  {}  {}  {}\n",
            i + 1,
            h.score,
            h.text,
            h.id,
            span(h.start, h.end),
            status,
            records::sources(&h.sources)
        ));
    }
    out
}
