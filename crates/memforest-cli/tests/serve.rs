//! `memforest serve`, `memforest mcp` and `memforest keys add` as processes: keys from the
//! command, the loopback rule (a refused address makes no store), SIGTERM during a burst of adds, MCP over stdio with rmcp's
//! client, a writer on an object store publishing on its timer and at SIGTERM, read-only
//! servers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::{fails, ok};

/// A `memforest serve` process and the address it printed.
struct Serve {
    child: Child,
    addr: String,
}

fn serve(args: &[&str]) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memforest"))
        .arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    Serve { child, addr }
}

fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn post(agent: &ureq::Agent, url: &str, key: Option<&str>, body: &str) -> u16 {
    let mut req = agent.post(url).header("content-type", "application/json");
    if let Some(k) = key {
        req = req.header("x-api-key", k);
    }
    req.send(body).map_or(0, |r| r.status().as_u16())
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn keys_made_by_keys_add_open_only_their_tenant_and_an_open_public_listener_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let file = dir.path().join("keys.json");
    let file_s = file.to_str().unwrap();
    let key = ok(&[
        "keys", "add", "--file", file_s, "--name", "a", "--tenant", "alice=rw",
    ]);
    let key = key.trim();
    assert!(key.starts_with("mf_"));
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(!stored.contains(key), "only the digest is stored");
    let text = fails(&[
        "keys", "add", "--file", file_s, "--name", "a", "--tenant", "bob=read",
    ]);
    assert!(text.contains("twice"), "{text}");

    let text = fails(&["serve", "--db", db, "--listen", "0.0.0.0:0"]);
    assert!(text.contains("refusing"), "{text}");
    assert!(!Path::new(db).exists(), "a refused address makes no store");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    let text = fails(&["serve", "--db", db, "--listen", &taken]);
    assert!(
        text.contains(&format!("cannot listen on {taken}")),
        "{text}"
    );
    assert!(!Path::new(db).exists(), "a port in use makes no store");

    let mut s = serve(&["--db", db, "--keys", file_s]);
    let agent = http();
    let body = r#"{"messages":[{"role":"user","text":"I keep my bike in the garage."}]}"#;
    let url = |u: &str| format!("http://{}/v1/users/{u}/sessions/s/messages", s.addr);
    assert_eq!(post(&agent, &url("alice"), None, body), 401);
    assert_eq!(post(&agent, &url("alice"), Some(key), body), 200);
    assert_eq!(post(&agent, &url("bob"), Some(key), body), 403);
    sigterm(&s.child);
    assert!(s.child.wait().unwrap().success());
}

#[test]
fn sigterm_during_a_burst_of_adds_loses_no_acknowledged_add() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut s = serve(&["--db", db.to_str().unwrap()]);
    let base = format!("http://{}/v1/users/u/sessions", s.addr);
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let base = base.clone();
            let started = started_tx.clone();
            std::thread::spawn(move || {
                let agent = http();
                let mut acked = Vec::new();
                for i in 0..100_000 {
                    let body = format!(
                        r#"{{"messages":[{{"role":"user","text":"note {i}: the meeting moved to room {i}","id":"m{i}"}}]}}"#
                    );
                    if post(&agent, &format!("{base}/w{w}/messages"), None, &body) != 200 {
                        break;
                    }
                    acked.push(format!("m{i}"));
                    if i == 10 {
                        let _ = started.send(());
                    }
                }
                acked
            })
        })
        .collect();
    for _ in 0..8 {
        started_rx.recv().unwrap();
    }
    sigterm(&s.child);
    assert!(
        s.child.wait().unwrap().success(),
        "clean exit after SIGTERM"
    );
    let acked: Vec<Vec<String>> = workers.into_iter().map(|h| h.join().unwrap()).collect();
    let memory = memforest::Memory::open(&db).unwrap();
    for (w, acked) in acked.iter().enumerate() {
        assert!(acked.len() > 10);
        let stored: std::collections::BTreeSet<String> = memory
            .messages("u", &format!("w{w}"))
            .unwrap()
            .into_iter()
            .filter_map(|m| m.id)
            .collect();
        for id in acked {
            assert!(stored.contains(id), "acknowledged add w{w}/{id} lost");
        }
    }
}

/// Calls the MCP tool `name` with the JSON object `args`: whether the result is an error,
/// and its text.
async fn call_tool(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    name: &'static str,
    args: serde_json::Value,
) -> (Option<bool>, String) {
    let serde_json::Value::Object(args) = args else {
        panic!("tool arguments must be an object")
    };
    let params = rmcp::model::CallToolRequestParams::new(name).with_arguments(args);
    let result = client.call_tool(params).await.unwrap();
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    (result.is_error, text)
}

#[test]
fn mcp_over_stdio_serves_the_tools_for_its_user_with_rmcp_client() {
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt as _;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_memforest"));
        cmd.args(["mcp", "--db", db.to_str().unwrap(), "--user", "alice"]);
        let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 8);
        let (error, text) = call_tool(
            &client,
            "add_memory",
            serde_json::json!({"session": "s", "messages": [{"role": "user", "text": "I adopted a cat named Miso."}]}),
        )
        .await;
        assert_ne!(error, Some(true), "{text}");
        let (_, text) = call_tool(&client, "search_memory", serde_json::json!({"query": "cat"})).await;
        assert!(text.contains("Miso"), "{text}");
        let (error, text) = call_tool(
            &client,
            "search_memory",
            serde_json::json!({"user": "bob", "query": "cat"}),
        )
        .await;
        assert_eq!(error, Some(true), "stdio serves only --user");
        assert!(
            text.contains("serves one user") && text.contains("\"bob\""),
            "{text}"
        );
        client.cancel().await.unwrap();
    });
    // The server closed the store when the client went away: it opens again.
    let mut opened = memforest::Memory::open(&db);
    for _ in 0..100 {
        if opened.is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        opened = memforest::Memory::open(&db);
    }
    assert_eq!(
        opened
            .unwrap()
            .list("alice", &Default::default())
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_read_only_server_on_an_object_store_follows_its_writer_and_refuses_writes() {
    use std::sync::Arc;

    let tmp = tempfile::tempdir().unwrap();
    let url = common::object_store_url(tmp.path());
    let mut options = memforest::Options::default();
    options.engine.remote = Some(Arc::new(
        memforest_object::Remote::open(&url, std::iter::empty::<(&str, &str)>()).unwrap(),
    ));
    let writer = memforest::Memory::open_with(tmp.path().join("writer"), options).unwrap();
    writer
        .add(
            "alice",
            "s1",
            &[memforest::Message::user("My cat is called Miso.")],
        )
        .unwrap();
    writer.db().flush().unwrap();

    let replica_dir = tmp.path().join("replica");
    let replica_dir = replica_dir.to_str().unwrap();
    let mut s = serve(&[
        "--read-only",
        "--db",
        &url,
        "--cache-dir",
        replica_dir,
        "--refresh-interval",
        "1",
    ]);
    let agent = http();
    let search_url = format!("http://{}/v1/users/alice/search", s.addr);
    let found = |text: &str| {
        let mut r = agent
            .post(&search_url)
            .header("content-type", "application/json")
            .send(r#"{"query":"Where do I live now, Lisbon?"}"#)
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        r.body_mut().read_to_string().unwrap().contains(text)
    };
    assert!(!found("Lisbon"), "not written yet");

    writer
        .add(
            "alice",
            "s2",
            &[memforest::Message::user("I moved to Lisbon last spring.")],
        )
        .unwrap();
    writer.db().flush().unwrap();
    // Polled, not timed: the refresh runs every second; the deadline only ends a hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !found("Lisbon") {
        assert!(
            std::time::Instant::now() < deadline,
            "the replica never served the new memory"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }

    let mut r = agent
        .post(&format!(
            "http://{}/v1/users/alice/sessions/s3/messages",
            s.addr
        ))
        .header("content-type", "application/json")
        .send(r#"{"messages":[{"role":"user","text":"refused"}]}"#)
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    let body = r.body_mut().read_to_string().unwrap();
    assert!(body.contains("read-only"), "{body}");

    sigterm(&s.child);
    assert!(s.child.wait().unwrap().success());
    writer.close().unwrap();
}

/// The messages a replica in `cache_dir` sees in `user`'s session `session` of the store
/// at `url` (a fresh `memforest messages` process), as JSON; empty while the replica has
/// no such session.
fn replica_messages(url: &str, cache_dir: &str, user: &str, session: &str) -> String {
    let out = common::memforest(&[
        "messages",
        "--db",
        url,
        "--cache-dir",
        cache_dir,
        "--user",
        user,
        "--session",
        session,
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && stderr.contains("no session") {
        return String::new();
    }
    assert!(out.status.success(), "messages failed: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_writer_server_on_an_object_store_publishes_on_its_timer_and_at_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let url = common::object_store_url(tmp.path());
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_owned();
    let (writer, reader) = (dir("writer"), dir("reader"));
    let agent = http();
    let add = |s: &Serve, session: &str, text: &str| {
        let body = format!(r#"{{"messages":[{{"role":"user","text":"{text}"}}]}}"#);
        let url = format!(
            "http://{}/v1/users/alice/sessions/{session}/messages",
            s.addr
        );
        assert_eq!(post(&agent, &url, None, &body), 200);
    };

    // The timer publishes while the server runs.
    let mut s = serve(&[
        "--db",
        &url,
        "--cache-dir",
        &writer,
        "--publish-interval",
        "1",
    ]);
    add(&s, "s1", "My cat is called Miso.");
    // Polled, not timed: the deadline only ends a hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !replica_messages(&url, &reader, "alice", "s1").contains("Miso") {
        assert!(
            std::time::Instant::now() < deadline,
            "the running writer never published"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    sigterm(&s.child);
    assert!(s.child.wait().unwrap().success());

    // A clean stop publishes what the timer has not yet.
    let mut s = serve(&[
        "--db",
        &url,
        "--cache-dir",
        &writer,
        "--publish-interval",
        "3600",
    ]);
    add(&s, "s2", "I moved to Lisbon.");
    assert!(
        !replica_messages(&url, &reader, "alice", "s2").contains("Lisbon"),
        "published before the stop"
    );
    sigterm(&s.child);
    assert!(s.child.wait().unwrap().success());
    assert!(replica_messages(&url, &reader, "alice", "s2").contains("Lisbon"));
    assert!(replica_messages(&url, &reader, "alice", "s1").contains("Miso"));

    let e = fails(&["serve", "--db", &dir("local"), "--publish-interval", "5"]);
    assert!(
        e.contains("--publish-interval is for a writer on an object store"),
        "{e}"
    );
    let e = fails(&[
        "serve",
        "--db",
        &url,
        "--cache-dir",
        &writer,
        "--publish-interval",
        "0",
    ]);
    assert!(e.contains("--publish-interval"), "{e}");
}

#[test]
fn mcp_read_only_on_an_object_store_serves_reads_and_refuses_write_tools() {
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt as _;

    let tmp = tempfile::tempdir().unwrap();
    let url = common::object_store_url(tmp.path());
    let dir = |name: &str| tmp.path().join(name).to_str().unwrap().to_owned();
    ok(&[
        "add",
        "--db",
        &url,
        "--cache-dir",
        &dir("writer"),
        "--user",
        "alice",
        "--session",
        "s1",
        "My cat is called Miso.",
    ]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_memforest"));
        cmd.args([
            "mcp",
            "--read-only",
            "--refresh-interval",
            "1",
            "--user",
            "alice",
        ])
        .args(["--db", &url, "--cache-dir", &dir("replica")]);
        let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let (_, text) = call_tool(
            &client,
            "search_memory",
            serde_json::json!({"query": "cat"}),
        )
        .await;
        assert!(text.contains("Miso"), "{text}");
        let (error, text) = call_tool(
            &client,
            "add_memory",
            serde_json::json!({"session": "s2", "messages": [{"role": "user", "text": "refused"}]}),
        )
        .await;
        assert_eq!(error, Some(true), "{text}");
        assert!(text.contains("read-only"), "{text}");
        client.cancel().await.unwrap();
    });
    let e = fails(&[
        "mcp",
        "--publish-interval",
        "5",
        "--read-only",
        "--user",
        "a",
        "--db",
        &url,
    ]);
    assert!(
        e.contains("--publish-interval") && e.contains("--read-only"),
        "{e}"
    );
}
