//! The OpenAI-compatible client against a real HTTP/1.1 server on 127.0.0.1: normal replies,
//! missing usage, slow replies, 429 / 500 / 400, malformed, truncated, oversized and non-UTF-8
//! bodies, refused connections, and embeddings shape checks.
#![allow(clippy::unwrap_used, clippy::panic)]

mod llm_support;

use std::time::{Duration, Instant};

use llm_support::{chat_body, embeddings_body, Reply, TestServer};
use memforest::memory::model::Usage;
use memforest_llm::{ChatMessage, EmbedRequest, LlmClient, LlmConfig, LlmError};
use serde_json::json;

/// Short timeouts and millisecond backoff so every test finishes quickly.
fn config(server: &TestServer, retries: u32) -> LlmConfig {
    LlmConfig::new(server.base_url(), "test-model")
        .with_timeout(Duration::from_millis(200))
        .with_retries(retries, Duration::from_millis(1), Duration::from_secs(2))
}

fn ask(client: &LlmClient) -> Result<memforest_llm::ChatReply, LlmError> {
    client.chat(&[
        ChatMessage::system("be brief"),
        ChatMessage::user("hello there"),
    ])
}

/// A request checking the reply's dimension against `dims`.
fn expect(dims: Option<usize>) -> EmbedRequest<'static> {
    EmbedRequest {
        expect_dims: dims,
        ..EmbedRequest::default()
    }
}

#[test]
fn normal_reply_with_usage_and_the_request_it_answers() {
    let server = TestServer::start(vec![Reply::json(200, &chat_body("hi!", Some((21, 2))))]);
    std::env::set_var("MEMFOREST_TEST_KEY_NORMAL", "sk-test-123");
    let client =
        LlmClient::new(config(&server, 0).with_api_key_env("MEMFOREST_TEST_KEY_NORMAL")).unwrap();
    let reply = ask(&client).unwrap();
    assert_eq!(reply.content, "hi!");
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 21,
            completion_tokens: 2,
            reported: true
        }
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-123"));
    let body = request.json();
    assert_eq!(body["model"], "test-model");
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}])
    );
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert_eq!(body["stream"], false);
}

#[test]
fn json_mode_off_sends_no_response_format_and_no_key_sends_no_authorization() {
    let server = TestServer::start(vec![Reply::json(200, &chat_body("ok", None))]);
    let client = LlmClient::new(config(&server, 0).with_json_mode(false)).unwrap();
    ask(&client).unwrap();
    let request = &server.requests()[0];
    assert!(request.json().get("response_format").is_none());
    assert_eq!(request.header("authorization"), None);
}

#[test]
fn reply_without_usage_is_estimated() {
    let server = TestServer::start(vec![Reply::json(200, &chat_body("twelve chars", None))]);
    let reply = ask(&LlmClient::new(config(&server, 0)).unwrap()).unwrap();
    // "be brief" (8 bytes) -> 2, "hello there" (11 bytes) -> 3; "twelve chars" -> 3.
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 5,
            completion_tokens: 3,
            reported: false
        }
    );
}

#[test]
fn slow_reply_times_out_and_the_retry_succeeds() {
    let server = TestServer::start(vec![
        Reply::json(200, &chat_body("late", None)).after(Duration::from_millis(600)),
        Reply::json(200, &chat_body("on time", None)),
    ]);
    let reply = ask(&LlmClient::new(config(&server, 1)).unwrap()).unwrap();
    assert_eq!(reply.content, "on time");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn persistently_slow_server_gives_up_with_timeout() {
    let slow = Reply::json(200, &chat_body("late", None)).after(Duration::from_millis(600));
    let server = TestServer::start(vec![slow.clone(), slow]);
    let started = Instant::now();
    match ask(&LlmClient::new(config(&server, 1)).unwrap()) {
        Err(LlmError::GaveUp { attempts: 2, last }) => {
            assert!(matches!(*last, LlmError::Timeout { .. }), "{last:?}")
        }
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "each attempt is bounded by the timeout"
    );
}

#[test]
fn rate_limited_429_honours_retry_after_then_succeeds() {
    let server = TestServer::start(vec![
        Reply::json(429, &json!({"error": {"message": "slow down"}})).header("Retry-After", "1"),
        Reply::json(200, &chat_body("thanks", Some((1, 1)))),
    ]);
    let started = Instant::now();
    let reply = ask(&LlmClient::new(config(&server, 2)).unwrap()).unwrap();
    assert_eq!(reply.content, "thanks");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}, Retry-After asked 1 s",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn server_error_then_success() {
    let server = TestServer::start(vec![
        Reply::json(500, &json!({"error": "boom"})),
        Reply::json(503, &json!({"error": "overloaded"})).header("retry-after-ms", "5"),
        Reply::json(200, &chat_body("recovered", None)),
    ]);
    assert_eq!(
        ask(&LlmClient::new(config(&server, 3)).unwrap())
            .unwrap()
            .content,
        "recovered"
    );
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn persistent_500_gives_up_after_the_retries_with_the_attempt_count() {
    let server = TestServer::start(vec![Reply::json(500, &json!({"error": "boom"})); 3]);
    match ask(&LlmClient::new(config(&server, 2)).unwrap()) {
        Err(err @ LlmError::GaveUp { attempts: 3, .. }) => {
            assert_eq!(err.status(), Some(500));
            assert!(
                err.to_string().contains("gave up after 3 attempts"),
                "{err}"
            );
            assert!(
                err.to_string().contains("boom"),
                "the body snippet is kept: {err}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn client_errors_are_not_retried() {
    let server = TestServer::start(vec![
        Reply::json(400, &json!({"error": "response_format not supported"})),
        Reply::json(200, &chat_body("never sent", None)),
    ]);
    match ask(&LlmClient::new(config(&server, 3)).unwrap()) {
        Err(LlmError::Status { status: 400, body }) => assert!(body.contains("response_format")),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn malformed_json_is_a_typed_error_with_offset_and_not_retried() {
    let server = TestServer::start(vec![Reply::body(200, r#"{"choices": [{"message": }]}"#)]);
    match ask(&LlmClient::new(config(&server, 3)).unwrap()) {
        // The offending `}` is byte 25.
        Err(LlmError::MalformedJson { offset, .. }) => assert_eq!(offset, 25),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn wrong_types_name_the_field() {
    let server = TestServer::start(vec![Reply::json(
        200,
        &json!({"choices": [{"message": {"content": ["a"]}}]}),
    )]);
    match ask(&LlmClient::new(config(&server, 0)).unwrap()) {
        Err(LlmError::WrongType { field, .. }) => assert_eq!(field, "choices[0].message.content"),
        other => panic!("{other:?}"),
    }
}

/// Content-Length promises 500 bytes, 40 arrive, the connection closes.
fn truncated() -> Reply {
    Reply::Raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\nConnection: close\r\n\r\n{\"choices\": [{\"message\": {\"content\": \"he".to_vec())
}

#[test]
fn a_body_that_stalls_mid_way_times_out() {
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"choices\": [";
    let stall = Reply::Stall(head.to_vec(), Duration::from_millis(800));
    let server = TestServer::start(vec![stall.clone(), stall]);
    let started = Instant::now();
    match ask(&LlmClient::new(config(&server, 1)).unwrap()) {
        Err(LlmError::GaveUp { attempts: 2, last }) => {
            assert!(matches!(*last, LlmError::Timeout { .. }), "{last:?}")
        }
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "the timeout covers the body: {:?}",
        started.elapsed()
    );
}

#[test]
fn truncated_body_is_retried() {
    let server = TestServer::start(vec![
        truncated(),
        Reply::json(200, &chat_body("whole", None)),
    ]);
    assert_eq!(
        ask(&LlmClient::new(config(&server, 1)).unwrap())
            .unwrap()
            .content,
        "whole"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn persistently_truncated_body_gives_up_with_a_transport_error() {
    let server = TestServer::start(vec![truncated(), truncated()]);
    match ask(&LlmClient::new(config(&server, 1)).unwrap()) {
        Err(LlmError::GaveUp { attempts: 2, last }) => {
            assert!(matches!(*last, LlmError::Transport(_)), "{last:?}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn oversized_and_non_utf8_bodies() {
    let big = chat_body(&"x".repeat(4000), None);
    let server = TestServer::start(vec![Reply::json(200, &big)]);
    let mut cfg = config(&server, 2);
    cfg.max_body_bytes = 1000;
    match ask(&LlmClient::new(cfg).unwrap()) {
        Err(LlmError::BodyTooLarge { limit: 1000 }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(
        server.requests().len(),
        1,
        "an oversized body is not retried"
    );

    let server = TestServer::start(vec![Reply::body(
        200,
        b"{\"choices\": \"\xc3\x28\"}".to_vec(),
    )]);
    match ask(&LlmClient::new(config(&server, 0)).unwrap()) {
        Err(LlmError::NotUtf8 { offset: 13 }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn refused_connection_is_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cfg = LlmConfig::new(format!("http://127.0.0.1:{port}/v1"), "m")
        .with_timeout(Duration::from_millis(200))
        .with_retries(2, Duration::from_millis(1), Duration::from_millis(5));
    match ask(&LlmClient::new(cfg).unwrap()) {
        Err(LlmError::GaveUp { attempts: 3, last }) => {
            assert!(matches!(*last, LlmError::Transport(_)), "{last:?}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn configuration_errors() {
    let missing = LlmConfig::new("http://127.0.0.1:9/v1", "m")
        .with_api_key_env("MEMFOREST_TEST_KEY_SURELY_UNSET");
    assert!(
        matches!(LlmClient::new(missing), Err(LlmError::MissingApiKey { var }) if var == "MEMFOREST_TEST_KEY_SURELY_UNSET")
    );
    assert!(matches!(
        LlmClient::new(LlmConfig::new("127.0.0.1:8000/v1", "m")),
        Err(LlmError::Config(_))
    ));
    assert!(matches!(
        LlmClient::new(LlmConfig::new("http://127.0.0.1:8000/v1", " ")),
        Err(LlmError::Config(_))
    ));
}

#[test]
fn embeddings_request_and_shape_checks() {
    let inputs: Vec<String> = vec!["alpha".into(), "beta".into()];
    let server = TestServer::start(vec![
        Reply::json(
            200,
            &embeddings_body(&[vec![0.5, 1.0, 0.0], vec![1.0, 0.0, 0.25]]),
        ),
        Reply::json(200, &embeddings_body(&[vec![0.5, 1.0, 0.0]])),
        Reply::json(
            200,
            &embeddings_body(&[vec![0.5, 1.0, 0.0], vec![1.0, 0.0]]),
        ),
        Reply::json(200, &embeddings_body(&[vec![0.5, 1.0], vec![1.0, 0.0]])),
    ]);
    let client = LlmClient::new(config(&server, 0)).unwrap();
    let reply = client.embed(&inputs, expect(Some(3))).unwrap();
    assert_eq!(
        reply.vectors,
        vec![vec![0.5, 1.0, 0.0], vec![1.0, 0.0, 0.25]]
    );
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 7,
            completion_tokens: 0,
            reported: true
        }
    );
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/embeddings");
    assert_eq!(request.json()["input"], json!(["alpha", "beta"]));

    assert!(matches!(
        client.embed(&inputs, expect(None)),
        Err(LlmError::EmbeddingCount {
            expected: 2,
            got: 1
        })
    ));
    assert!(matches!(
        client.embed(&inputs, expect(None)),
        Err(LlmError::EmbeddingDimension {
            index: 1,
            expected: 3,
            got: 2
        })
    ));
    assert!(matches!(
        client.embed(&inputs, expect(Some(3))),
        Err(LlmError::EmbeddingDimension {
            index: 0,
            expected: 3,
            got: 2
        })
    ));
}
