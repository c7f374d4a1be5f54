//! Quickstart: a user's memory in a few calls. Alice lives in Paris in January and moves
//! to Berlin in April; the store remembers both with their times, answers as of a time,
//! lists her memories newest first, and forgets her on request, for good.
//!
//! `cargo run -p memforest --example quickstart` (the README's "Use it from Rust").

use chrono::{DateTime, TimeZone, Utc};
use memforest::{ListOptions, Memory, Message, SearchOptions};

/// 09:00 UTC on `day` `month` 2024.
fn date(month: u32, day: u32) -> Result<DateTime<Utc>, String> {
    Utc.with_ymd_and_hms(2024, month, day, 9, 0, 0)
        .single()
        .ok_or_else(|| format!("no date 2024-{month}-{day}"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let memory = Memory::open(dir.path())?; // offline defaults: no model, no network
    let exchanges = [
        (date(1, 10)?, "I live in Paris.", "Paris is lovely."),
        (date(2, 14)?, "My sister Emma is a nurse.", "Noted."),
        (date(4, 2)?, "I moved to Berlin last week.", "Welcome!"),
    ];
    for (n, (time, said, answer)) in exchanges.into_iter().enumerate() {
        let user = Message::user(said).by("Alice").at(time);
        let reply = Message::assistant(answer).at(time);
        memory.add("alice", &format!("s{n}"), &[user, reply])?; // one exchange at a time
    }
    // Both homes are remembered, each with the time it holds from; `until` bounds it.
    let question = "where does Alice live?";
    for hit in memory.search("alice", question, &SearchOptions::default())? {
        let from = hit.start.unwrap_or_default().date_naive();
        println!("{} [{:.2}] {} (from {from})", hit.id, hit.score, hit.text);
    }
    let before_april = SearchOptions {
        until: Some(date(3, 1)?),
        ..SearchOptions::default()
    };
    let then = memory.search("alice", question, &before_april)?;
    println!("before April: {:?}", then.first().map(|h| &h.text));
    for m in memory.list("alice", &ListOptions::default())? {
        let from = m.start.unwrap_or_default().date_naive();
        println!("{} {from} {}", m.id, m.text); // newest first
    }
    memory.delete_user("alice")?;
    memory.close()?;
    let reopened = Memory::open(dir.path())?;
    let left = reopened.list("alice", &ListOptions::default())?;
    println!("after delete_user and reopen: {} memories", left.len());
    if !left.is_empty() {
        return Err("alice's memories survived delete_user".into());
    }
    reopened.close()?;
    Ok(())
}
