//! MCP over streamable HTTP at `/mcp`, driven by rmcp's own client: the tools, their
//! schemas, and tenant isolation by key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use common::{make_keys, start};
use memforest_server::{Limits, Right};
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::{json, Value};

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(url: &str, key: Option<&str>) -> Result<Client, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(k) = key {
        config = config.auth_header(k);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    ClientConfig::default()
        .serve(transport)
        .await
        .map_err(|e| e.to_string())
}

async fn tool(client: &Client, name: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args))
        .await
        .unwrap()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn ok(r: &CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "{}", text(r));
    serde_json::from_str(&text(r)).unwrap_or(Value::String(text(r)))
}

#[test]
fn every_tool_works_for_its_tenant_and_fails_for_every_other() {
    let dir = tempfile::tempdir().unwrap();
    let (keys, clear) = make_keys(&[
        ("alice", &[("alice", Right::ReadWrite)]),
        ("bob", &[("bob", Right::ReadWrite)]),
    ]);
    let server = start(dir.path(), Some(keys), Limits::default());
    let url = server.url("/mcp");
    server.rt.block_on(async {
        assert!(connect(&url, None).await.is_err(), "no key: refused");
        assert!(connect(&url, Some("mf_wrong")).await.is_err(), "bad key: refused");
        let alice = connect(&url, Some(&clear["alice"])).await.unwrap();
        let bob = connect(&url, Some(&clear["bob"])).await.unwrap();

        let tools = alice.list_all_tools().await.unwrap();
        let mut names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "add_memory", "delete_memory", "get_context", "get_memory", "get_profile",
                "memory_history", "search_memory", "update_memory"
            ]
        );
        for t in &tools {
            assert!(t.description.as_ref().is_some_and(|d| d.len() > 20), "{}", t.name);
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")), "{}", t.name);
        }
        let add = tools.iter().find(|t| t.name == "add_memory").unwrap();
        let props = add.input_schema.get("properties").unwrap();
        assert!(props.get("session").is_some() && props.get("messages").is_some(), "{props}");

        let added = ok(&tool(&alice, "add_memory", json!({
            "session": "s1",
            "messages": [{"role": "user", "text": "I adopted a cat named Miso from the shelter."}]
        })).await);
        let id = added["memories"][0].as_str().unwrap().to_owned();
        let found = ok(&tool(&alice, "search_memory", json!({"query": "cat"})).await);
        assert_eq!(found["results"][0]["id"], json!(id));
        // A misspelt argument is refused, not passed over (the search would be unfiltered).
        for (name, args) in [
            ("search_memory", json!({"query": "cat", "latestonly": true})),
            ("get_context", json!({"query": "cat", "budget": 10})),
            ("add_memory", json!({"session": "s1", "message": []})),
            ("get_memory", json!({"id": id, "version": 1})),
        ] {
            let r = tool(&alice, name, args).await;
            assert_eq!(r.is_error, Some(true), "{name}: {}", text(&r));
        }
        let context = tool(&alice, "get_context", json!({"query": "What pet do I have?"})).await;
        assert!(text(&context).contains("Miso"), "{}", text(&context));
        assert_eq!(ok(&tool(&alice, "get_memory", json!({"id": id})).await)["id"], json!(id));
        let _profile = ok(&tool(&alice, "get_profile", json!({})).await);

        // Bob's key reaches none of Alice's data, by any tool.
        for (name, args) in [
            ("add_memory", json!({"user": "alice", "session": "s1", "messages": [{"role": "user", "text": "x"}]})),
            ("search_memory", json!({"user": "alice", "query": "cat"})),
            ("get_context", json!({"user": "alice", "query": "cat"})),
            ("get_memory", json!({"user": "alice", "id": id})),
            ("update_memory", json!({"user": "alice", "id": id, "text": "Miso is a dog."})),
            ("delete_memory", json!({"user": "alice", "id": id})),
            ("memory_history", json!({"user": "alice", "id": id})),
            ("get_profile", json!({"user": "alice"})),
        ] {
            let r = tool(&bob, name, args).await;
            assert_eq!(r.is_error, Some(true), "{name}: {}", text(&r));
            assert!(text(&r).contains("may not"), "{name}: {}", text(&r));
        }
        // In his own scope, Bob's key does not find Alice's memory by its id.
        let r = tool(&bob, "get_memory", json!({"id": id})).await;
        assert_eq!(r.is_error, Some(true));

        let new = ok(&tool(&alice, "update_memory", json!({"id": id, "text": "Miso is a black cat."})).await);
        let new_id = new["id"].as_str().unwrap().to_owned();
        let versions = ok(&tool(&alice, "memory_history", json!({"id": new_id})).await);
        assert!(versions["versions"].as_array().is_some_and(|v| !v.is_empty()), "{versions}");
        ok(&tool(&alice, "delete_memory", json!({"id": new_id})).await);
        let gone = tool(&alice, "get_memory", json!({"id": new_id})).await;
        assert_eq!(gone.is_error, Some(true));

        alice.cancel().await.unwrap();
        bob.cancel().await.unwrap();
    });
    server.stop();
}
