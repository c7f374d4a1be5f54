//! Quickstart: a user's memory in a few calls. Alice lives in Paris in January and moves
//! to Berlin in April: the store keeps her exchanges with their times, records the change
//! as a new version of the memory (the old one stays in its history), and forgets her on
//! request, for good.
//!
//! `cargo run -p memforest --example quickstart` (the README's Rust quickstart).

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
    let memory = Memory::open(dir.path())?; // offline defaults: no model server, no network
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
    // The move makes the Paris memory stale: record it. Paris stays, in history.
    let question = "where does Alice live?";
    let hits = memory.search("alice", question, &SearchOptions::default())?;
    let paris = hits
        .iter()
        .find(|h| h.text.contains("Paris"))
        .ok_or("no Paris")?;
    let berlin = memory.update("alice", paris.id, "Alice lives in Berlin.")?;
    let latest = SearchOptions {
        latest_only: true,
        ..SearchOptions::default()
    };
    for hit in memory.search("alice", question, &latest)? {
        println!("{} [{:.2}] {}", hit.id, hit.score, hit.text); // Berlin, not Paris
    }
    for v in memory.history("alice", berlin)? {
        println!("{} (valid until {:?})", v.text, v.valid_until); // Paris: until now
    }
    memory.delete_user("alice")?;
    memory.close()?;
    let reopened = Memory::open(dir.path())?;
    let left = reopened.list("alice", &ListOptions::default())?; // newest first
    println!("after delete_user and reopen: {} memories", left.len());
    if !left.is_empty() {
        return Err("alice's memories survived delete_user".into());
    }
    reopened.close()?;
    Ok(())
}
