//! A scripted HTTP/1.1 server on 127.0.0.1 for the LLM client tests.
//!
//! It answers the i-th connection with the i-th scripted [`Reply`] (one request per
//! connection, `Connection: close`), records every request, and stops accepting when the
//! script is used up, when dropped, or after 10 s, so a test can neither hang nor leave a
//! thread behind. Connections are served on their own threads, so a slow reply does not hold
//! up the next attempt.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How the server answers one connection.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete HTTP reply.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// These exact bytes, then close (for broken replies).
    Raw(Vec<u8>),
    /// Wait, then answer.
    Delayed(Duration, Box<Reply>),
    /// Send these bytes, then hold the connection open for the duration before closing.
    Stall(Vec<u8>, Duration),
}

impl Reply {
    /// `status` with a JSON body.
    pub fn json(status: u16, body: &Value) -> Self {
        Self::body(status, serde_json::to_vec(body).unwrap())
    }

    /// `status` with `body` as is.
    pub fn body(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self::Http {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// Adds a header.
    pub fn header(self, name: &str, value: &str) -> Self {
        match self {
            Self::Http {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Self::Http {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }

    /// Answers after `delay`.
    pub fn after(self, delay: Duration) -> Self {
        Self::Delayed(delay, Box::new(self))
    }

    fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Http {
                status,
                headers,
                body,
            } => {
                let mut head = format!(
                    "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                let mut out = head.into_bytes();
                out.extend_from_slice(body);
                out
            }
            Self::Raw(bytes) | Self::Stall(bytes, _) => bytes.clone(),
            Self::Delayed(_, inner) => inner.bytes(),
        }
    }
}

/// A chat completion body with `content`, and `usage` when given.
pub fn chat_body(content: &str, usage: Option<(u64, u64)>) -> Value {
    let mut body = json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    });
    if let Some((prompt, completion)) = usage {
        body["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion});
    }
    body
}

/// An embeddings body with the given vectors (index = position).
pub fn embeddings_body(vectors: &[Vec<f32>]) -> Value {
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v}))
        .collect();
    json!({"object": "list", "data": data, "usage": {"prompt_tokens": 7, "total_tokens": 7}})
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// The running server.
pub struct TestServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts serving `script` on an ephemeral loopback port.
    pub fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let (requests, stop) = (Arc::clone(&requests), Arc::clone(&stop));
            std::thread::spawn(move || accept_loop(listener, script, requests, stop))
        };
        Self {
            addr,
            requests,
            stop,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
    }
}

fn accept_loop(
    listener: TcpListener,
    script: Vec<Reply>,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut workers = Vec::new();
    let mut script = script.into_iter();
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        match listener.accept() {
            Ok((stream, _)) => {
                let Some(reply) = script.next() else { break };
                let requests = Arc::clone(&requests);
                workers.push(std::thread::spawn(move || serve(stream, reply, &requests)));
                if script.len() == 0 {
                    break;
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    drop(listener);
    for worker in workers {
        let _ = worker.join();
    }
}

fn serve(mut stream: TcpStream, reply: Reply, requests: &Mutex<Vec<Request>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    if let Some(request) = read_request(&mut stream) {
        requests.lock().unwrap().push(request);
    }
    let mut reply = &reply;
    while let Reply::Delayed(delay, inner) = reply {
        std::thread::sleep(*delay);
        reply = inner;
    }
    let _ = stream.write_all(&reply.bytes());
    let _ = stream.flush();
    if let Reply::Stall(_, hold) = reply {
        std::thread::sleep(*hold);
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut buf).ok().filter(|&n| n > 0)?;
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let (method, path) = (
        request_line.next()?.to_owned(),
        request_line.next()?.to_owned(),
    );
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok().filter(|&n| n > 0)?;
        body.extend_from_slice(&buf[..n]);
    }
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}
