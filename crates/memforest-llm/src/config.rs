//! [`LlmConfig`]: where the OpenAI-compatible server is and how patiently to talk to it.

use std::time::Duration;

use super::LlmError;

/// Settings shared by the chat and embedding clients.
///
/// `base_url` is the API root *including* `/v1`, e.g. `http://127.0.0.1:8000/v1` (vLLM),
/// `http://127.0.0.1:8080/v1` (llama.cpp `llama-server`), `http://127.0.0.1:11434/v1`
/// (Ollama) or `https://api.openai.com/v1`. The client appends `/chat/completions` or
/// `/embeddings`. The API key is read from the environment variable named by `api_key_env`
/// when the client is built, and sent as `Authorization: Bearer <key>`; local servers
/// usually need none (`api_key_env: None`).
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// API root including the version segment (`http://host:port/v1`).
    pub base_url: String,
    /// Model name sent in every request (`"model"` field).
    pub model: String,
    /// Name of the environment variable holding the API key; `None` sends no key.
    pub api_key_env: Option<String>,
    /// Per-attempt limit on the whole exchange (connect, send, headers, body).
    pub timeout: Duration,
    /// Retries after the first attempt for transient failures (timeouts, connection
    /// errors, HTTP 429 and 5xx). 0 means one attempt only.
    pub max_retries: u32,
    /// Backoff before retry `n` (1-based) is drawn uniformly from
    /// `[0, min(backoff_max, backoff_base * 2^(n-1))]` ("full jitter").
    pub backoff_base: Duration,
    /// Upper bound of one backoff, and of a server's `Retry-After`.
    pub backoff_max: Duration,
    /// Send `response_format: {"type": "json_object"}` with chat requests. vLLM, llama.cpp,
    /// Ollama and OpenAI accept it; turn it off for servers that reject the field.
    pub json_mode: bool,
    /// Sampling temperature sent with chat requests; `None` leaves the server default.
    pub temperature: Option<f32>,
    /// `max_tokens` sent with chat requests; `None` leaves the server default.
    pub max_tokens: Option<u32>,
    /// Largest reply body read, in bytes; a longer one is [`LlmError::BodyTooLarge`].
    pub max_body_bytes: u64,
}

impl LlmConfig {
    /// A config for `model` at `base_url` with the defaults: no API key, 60 s timeout,
    /// 3 retries, backoff 500 ms doubling up to 30 s, JSON mode on, temperature 0,
    /// server-default `max_tokens`, 16 MiB body cap.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            timeout: Duration::from_secs(60),
            max_retries: 3,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            json_mode: true,
            temperature: Some(0.0),
            max_tokens: None,
            max_body_bytes: 16 << 20,
        }
    }

    /// Sets the environment variable the API key is read from (e.g. `OPENAI_API_KEY`).
    pub fn with_api_key_env(mut self, var: impl Into<String>) -> Self {
        self.api_key_env = Some(var.into());
        self
    }

    /// Sets the per-attempt timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the number of retries and the backoff bounds.
    pub fn with_retries(mut self, max_retries: u32, base: Duration, max: Duration) -> Self {
        self.max_retries = max_retries;
        self.backoff_base = base;
        self.backoff_max = max;
        self
    }

    /// Turns `response_format: json_object` on or off.
    pub fn with_json_mode(mut self, on: bool) -> Self {
        self.json_mode = on;
        self
    }

    /// The full URL of an endpoint below the base (`"chat/completions"`, `"embeddings"`).
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path)
    }

    /// True when `base_url`'s host is `localhost`, an IPv4 loopback address or `[::1]`.
    pub(crate) fn is_loopback(&self) -> bool {
        let rest = self.base_url.split_once("://").map_or("", |(_, rest)| rest);
        let authority = rest.split('/').next().unwrap_or("");
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = if host_port.starts_with('[') {
            host_port
                .split_once(']')
                .map_or(host_port, |(h, _)| h)
                .trim_start_matches('[')
        } else {
            host_port.split(':').next().unwrap_or("")
        };
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// Checks the settings and reads the API key from the environment.
    ///
    /// # Errors
    /// [`LlmError::Config`] for a base URL that is not `http://` or `https://`, an empty
    /// model or a zero timeout; [`LlmError::MissingApiKey`] when `api_key_env` names an unset
    /// variable.
    pub(crate) fn resolve_api_key(&self) -> Result<Option<String>, LlmError> {
        let url = self.base_url.as_str();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base_url {url:?} must start with http:// or https://"
            )));
        }
        if self.model.trim().is_empty() {
            return Err(LlmError::Config("model must not be empty".into()));
        }
        if self.timeout.is_zero() {
            return Err(LlmError::Config("timeout must be positive".into()));
        }
        match &self.api_key_env {
            None => Ok(None),
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.is_empty() => Ok(Some(key)),
                _ => Err(LlmError::MissingApiKey { var: var.clone() }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://127.0.0.1:8000/v1",
            "http://localhost/v1",
            "http://[::1]:80/v1",
            "http://127.1.2.3/v1",
            "http://u:p@LOCALHOST:1",
        ] {
            assert!(LlmConfig::new(url, "m").is_loopback(), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://10.0.0.1:8000/v1",
            "http://localhost.example.com/v1",
            "nonsense",
        ] {
            assert!(!LlmConfig::new(url, "m").is_loopback(), "{url}");
        }
    }
}
