//! [`MemoryTools`]: the store as MCP tools (rmcp), served over streamable HTTP at `/mcp`
//! (the user scope from the request's key) and over stdio (`memforest mcp --user`).

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Extensions, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler};
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::json;

use crate::access::Access;
use crate::error::ApiError;
use crate::keys::Right;
use crate::request::{memory_id, split_field, AddRequest, Checked, ContextRequest, SearchRequest};
use crate::state::Shared;

/// `add_memory`'s arguments.
#[derive(Debug, JsonSchema)]
pub struct AddMemory {
    /// The user whose memory this is; may be left out when the key reaches one user.
    #[serde(default)]
    pub user: Option<String>,
    /// The conversation (session) id the messages belong to; a new id starts a session.
    pub session: String,
    /// The messages and agent.
    #[serde(flatten)]
    pub body: AddRequest,
}

/// `search_memory`'s arguments.
#[derive(Debug, JsonSchema)]
pub struct SearchMemory {
    /// The user whose memory is searched; may be left out when the key reaches one user.
    #[serde(default)]
    pub user: Option<String>,
    /// The question and filters.
    #[serde(flatten)]
    pub body: SearchRequest,
}

/// `get_context`'s arguments.
#[derive(Debug, JsonSchema)]
pub struct GetContext {
    /// The user whose memory is read; may be left out when the key reaches one user.
    #[serde(default)]
    pub user: Option<String>,
    /// The question and budget.
    #[serde(flatten)]
    pub body: ContextRequest,
}

impl<'de> Deserialize<'de> for AddMemory {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (user, SessionAdd(session, body)) = split_field(d, "user")?;
        let session = session.ok_or_else(|| D::Error::missing_field("session"))?;
        Ok(Self {
            user,
            session,
            body,
        })
    }
}

/// An add's session and the rest of its arguments.
struct SessionAdd(Option<String>, AddRequest);

impl<'de> Deserialize<'de> for SessionAdd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (session, body) = split_field(d, "session")?;
        Ok(Self(session, body))
    }
}

impl<'de> Deserialize<'de> for SearchMemory {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (user, body) = split_field(d, "user")?;
        Ok(Self { user, body })
    }
}

impl<'de> Deserialize<'de> for GetContext {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (user, body) = split_field(d, "user")?;
        Ok(Self { user, body })
    }
}

/// Arguments naming one memory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryRef {
    /// The user whose memory it is; may be left out when the key reaches one user.
    #[serde(default)]
    pub user: Option<String>,
    /// The memory id (16 hex digits, as search_memory and add_memory return).
    pub id: String,
}

/// `update_memory`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMemory {
    /// The user whose memory it is; may be left out when the key reaches one user.
    #[serde(default)]
    pub user: Option<String>,
    /// The memory id (16 hex digits).
    pub id: String,
    /// The corrected text; the old text stays in the memory's history.
    pub text: String,
}

/// Arguments naming only the user.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserRef {
    /// The user; may be left out when the key reaches one user.
    #[serde(default)]
    pub user: Option<String>,
}

/// The MCP server: one instance per MCP session (HTTP) or process (stdio).
#[derive(Debug, Clone)]
pub struct MemoryTools {
    shared: Arc<Shared>,
    /// The access of every call (stdio); `None`: the access the HTTP layer found.
    fixed: Option<Access>,
    tool_router: ToolRouter<Self>,
}

/// A tool's answer: JSON text, or the error's message (a tool error the model sees).
type ToolReply = Result<String, String>;

fn answer<T: Serialize>(r: Result<T, ApiError>) -> ToolReply {
    let v = r.map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())
}

impl MemoryTools {
    /// Tools over `shared`, every call with `fixed` access (stdio) or with the access of
    /// its HTTP request (`None`).
    #[must_use]
    pub fn new(shared: Arc<Shared>, fixed: Option<Access>) -> Self {
        Self {
            shared,
            fixed,
            tool_router: Self::tool_router(),
        }
    }

    /// The user a call acts for, checked for `need`. Over stdio a call for another user
    /// than the one served is refused with a message that says which one is.
    fn user(&self, ext: &Extensions, given: Option<&str>, need: Right) -> Result<String, ApiError> {
        if let Some(fixed) = &self.fixed {
            return fixed.resolve(given, need).map_err(|e| match e {
                ApiError::Forbidden { need, user, .. } => ApiError::Forbidden {
                    by: "this MCP server serves one user (memforest mcp --user) and",
                    need,
                    user,
                },
                other => other,
            });
        }
        let from_http = ext
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Access>());
        let access = self
            .fixed
            .as_ref()
            .or(from_http)
            .ok_or(ApiError::Unauthorized)?;
        access.resolve(given, need)
    }

    fn checked<T: Checked>(&self, body: &T) -> Result<(), ApiError> {
        body.check(&self.shared.limits)
    }
}

#[tool_router]
impl MemoryTools {
    /// Stores messages of a conversation; facts are extracted from them into memories.
    #[tool(
        description = "Remember messages of a conversation for a user. Give the session (conversation) id and the messages in order, each with role (user, assistant or system) and text, optionally time (RFC 3339), speaker and id. Returns the ids of the memories (facts) the messages created."
    )]
    async fn add_memory(&self, ext: Extensions, Parameters(p): Parameters<AddMemory>) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::ReadWrite)?;
            self.checked(&p.body)?;
            let session = p.session;
            let body = p.body;
            self.shared
                .run(move |m| m.add_with(&user, &session, &body.messages(), &body.options()))
                .await
        };
        answer(r.await)
    }

    /// Memories that answer a question, best first.
    #[tool(
        description = "Search a user's long-term memory for facts relevant to a question. Returns memories best first, each with id, text, score, event time (start, end), whether it is still current, and the session and messages it came from. Filters: k, since, until, as_of, latest_only, session, agent, speaker (who said it)."
    )]
    async fn search_memory(
        &self,
        ext: Extensions,
        Parameters(p): Parameters<SearchMemory>,
    ) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::Read)?;
            self.checked(&p.body)?;
            let body = p.body;
            let hits = self
                .shared
                .run(move |m| m.search(&user, &body.query, &body.options()))
                .await?;
            Ok(json!({ "results": hits }))
        };
        answer(r.await)
    }

    /// A prompt-ready text for a question.
    #[tool(
        description = "Get a prompt-ready text from a user's memory for a question: the relevant memories with their dates, then the latest messages of the conversation, within max_tokens (default 1000). Takes search_memory's k and filters. Put it in your context before answering."
    )]
    async fn get_context(
        &self,
        ext: Extensions,
        Parameters(p): Parameters<GetContext>,
    ) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::Read)?;
            self.checked(&p.body)?;
            let body = p.body;
            self.shared
                .run(move |m| {
                    let options = body.search.options();
                    m.context(&user, &body.search.query, body.max_tokens(), &options)
                })
                .await
        };
        r.await.map_err(|e| e.to_string())
    }

    /// One memory by id.
    #[tool(description = "Get one memory of a user by its id: text, event time and sources.")]
    async fn get_memory(&self, ext: Extensions, Parameters(p): Parameters<MemoryRef>) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::Read)?;
            let id = memory_id(&p.id)?;
            self.shared
                .run(move |m| m.get(&user, id))
                .await?
                .ok_or_else(|| ApiError::NotFound(format!("no memory {id}")))
        };
        answer(r.await)
    }

    /// Replaces a memory's text.
    #[tool(
        description = "Correct a memory of a user: replace its text. The old text stays in memory_history. Returns the id of the new version."
    )]
    async fn update_memory(
        &self,
        ext: Extensions,
        Parameters(p): Parameters<UpdateMemory>,
    ) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::ReadWrite)?;
            let id = memory_id(&p.id)?;
            self.checked(&crate::request::UpdateRequest {
                text: p.text.clone(),
            })?;
            let text = p.text;
            let new = self.shared.run(move |m| m.update(&user, id, &text)).await?;
            Ok(json!({ "id": new }))
        };
        answer(r.await)
    }

    /// Deletes a memory.
    #[tool(description = "Delete one memory of a user by its id (forget a fact).")]
    async fn delete_memory(
        &self,
        ext: Extensions,
        Parameters(p): Parameters<MemoryRef>,
    ) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::ReadWrite)?;
            let id = memory_id(&p.id)?;
            self.shared.run(move |m| m.delete(&user, id)).await
        };
        answer(r.await)
    }

    /// A memory's versions.
    #[tool(
        description = "The versions of a memory of a user, oldest first, each with its text and when it stopped being valid."
    )]
    async fn memory_history(
        &self,
        ext: Extensions,
        Parameters(p): Parameters<MemoryRef>,
    ) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::Read)?;
            let id = memory_id(&p.id)?;
            let versions = self.shared.run(move |m| m.history(&user, id)).await?;
            Ok(json!({ "versions": versions }))
        };
        answer(r.await)
    }

    /// What is known about the user.
    #[tool(
        description = "A user's profile: the current value of each known attribute (where they live, work, ...) and summaries of the user and of the people and things they talk about most."
    )]
    async fn get_profile(&self, ext: Extensions, Parameters(p): Parameters<UserRef>) -> ToolReply {
        let r = async {
            let user = self.user(&ext, p.user.as_deref(), Right::Read)?;
            self.shared.run(move |m| m.profile(&user)).await
        };
        answer(r.await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("memforest", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Long-term memory for this user: add_memory after each exchange, search_memory or get_context before answering, get_profile for what is known about them.",
            )
    }
}
