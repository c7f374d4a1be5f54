//! A real server on a free 127.0.0.1 port, driven by a real HTTP client (ureq).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use memforest::Memory;
use memforest_server::{
    keys, Keys, KeysFile, Limiter, Limits, Right, ServeConfig, ServeError, Server,
};
use tokio::sync::oneshot;

/// A running server; [`Running::stop`] shuts it down gracefully.
pub struct Running {
    pub addr: SocketAddr,
    pub limiter: Limiter,
    pub rt: tokio::runtime::Runtime,
    stop: Option<oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<Result<(), ServeError>>>,
}

/// Keys for `tenants` per key name: (name, [(tenant, right)]). Returns the keys and the
/// clear keys by name.
pub fn make_keys(spec: &[(&str, &[(&str, Right)])]) -> (Keys, BTreeMap<String, String>) {
    let mut file = KeysFile::default();
    let mut clear = BTreeMap::new();
    for (name, tenants) in spec {
        let t = tenants.iter().map(|(u, r)| ((*u).to_owned(), *r)).collect();
        let (key, entry) = keys::generate(name, t).unwrap();
        file.keys.push(entry);
        clear.insert((*name).to_owned(), key);
    }
    (Keys::new(file), clear)
}

pub fn start(dir: &Path, keys: Option<Keys>, limits: Limits) -> Running {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let memory = Memory::open(dir).unwrap();
    let config = ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        keys,
        limits,
        refresh: None,
    };
    let server = rt.block_on(Server::bind(memory, config)).unwrap();
    let addr = server.local_addr().unwrap();
    let limiter = server.limiter().clone();
    let (tx, rx) = oneshot::channel();
    let done = rt.spawn(server.run(async {
        let _ = rx.await;
    }));
    Running {
        addr,
        limiter,
        rt,
        stop: Some(tx),
        done: Some(done),
    }
}

impl Running {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Signals shutdown and waits for the store to close.
    pub fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(done) = self.done.take() {
            self.rt.block_on(done).unwrap().unwrap();
        }
    }

    /// Signals shutdown without waiting.
    pub fn signal_stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }

    /// Waits for a signalled shutdown to finish.
    pub fn wait(mut self) {
        if let Some(done) = self.done.take() {
            self.rt.block_on(done).unwrap().unwrap();
        }
    }
}

/// An HTTP client that returns 4xx/5xx responses instead of failing on them.
pub fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// `method url` with `key` and `body`: (status, body text).
pub fn call(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    key: Option<&str>,
    body: Option<&str>,
) -> (u16, String) {
    let mut req = ureq::http::Request::builder().method(method).uri(url);
    if let Some(k) = key {
        req = req.header("authorization", format!("Bearer {k}"));
    }
    if body.is_some() {
        req = req.header("content-type", "application/json");
    }
    let req = req.body(body.unwrap_or("").to_owned()).unwrap();
    match agent.run(req) {
        Ok(mut r) => {
            let status = r.status().as_u16();
            (status, r.body_mut().read_to_string().unwrap_or_default())
        }
        Err(e) => (0, e.to_string()),
    }
}

/// A JSON value of a response body.
pub fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or(serde_json::Value::Null)
}
