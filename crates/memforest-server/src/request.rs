//! The request bodies of the REST routes and the MCP tools, their decoder and their size
//! checks. [`decode`] is the one way a body becomes a request: any bytes give a request or
//! an [`ApiError`], never a panic (the `server_request` fuzz target drives it).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use memforest::{ListOptions, Message, Role, SearchOptions};
use schemars::JsonSchema;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};

use crate::error::ApiError;
use crate::limits::Limits;

/// An optional time in RFC 3339 (`2024-04-02T09:00:00Z`), the form `DateTime<Utc>`
/// parses; an error names the value (its first 64 characters) and the form expected.
fn rfc3339<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    text.parse().map(Some).map_err(|e| {
        let shown: String = text.chars().take(64).collect();
        D::Error::custom(format!(
            "{shown:?} is not an RFC 3339 time such as 2024-04-02T09:00:00Z ({e})"
        ))
    })
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleBody {
    /// The human user.
    User,
    /// The agent.
    Assistant,
    /// A system or tool message.
    System,
}

/// One message to remember.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageBody {
    /// Who said it: "user", "assistant" or "system".
    pub role: RoleBody,
    /// The text (1..=32 KiB of UTF-8).
    pub text: String,
    /// The speaker's name (e.g. "Alice"); default: the role.
    #[serde(default)]
    pub speaker: Option<String>,
    /// When it was said (RFC 3339); default: now.
    #[serde(default, deserialize_with = "rfc3339")]
    pub time: Option<DateTime<Utc>>,
    /// The caller's id for the message, unique in its session: resending an id stores
    /// nothing twice.
    #[serde(default)]
    pub id: Option<String>,
    /// Key-value pairs kept with the message.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

impl MessageBody {
    fn message(&self) -> Message {
        let role = match self.role {
            RoleBody::User => Role::User,
            RoleBody::Assistant => Role::Assistant,
            RoleBody::System => Role::System,
        };
        Message {
            role,
            speaker: self.speaker.clone().unwrap_or_default(),
            text: self.text.clone(),
            time: self.time,
            id: self.id.clone(),
            metadata: self.metadata.clone(),
        }
    }
}

/// Add messages to a session (`POST /v1/users/{user}/sessions/{session}/messages`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddRequest {
    /// The messages, in the order they were said (1..=batch limit).
    pub messages: Vec<MessageBody>,
    /// The agent the session belongs to (set by the session's first add that names one).
    #[serde(default)]
    pub agent: Option<String>,
    /// With a model extractor: wait for the model and list the memories it found (false:
    /// the reply comes once the messages are durable, and `pending` counts what the
    /// background still has to extract). The default extractor always runs in the call.
    #[serde(default)]
    pub wait: bool,
}

impl AddRequest {
    /// The messages as the `Memory` API takes them.
    #[must_use]
    pub fn messages(&self) -> Vec<Message> {
        self.messages.iter().map(MessageBody::message).collect()
    }

    /// The options of `Memory::add_with`.
    #[must_use]
    pub fn options(&self) -> memforest::AddOptions {
        memforest::AddOptions {
            agent: self.agent.clone(),
            wait: self.wait,
        }
    }
}

/// Search a user's memories (`POST /v1/users/{user}/search`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// The question or topic, in natural language.
    pub query: String,
    /// Memories to return (1..=1000, default 10).
    #[serde(default)]
    pub k: Option<usize>,
    /// Only memories whose event time ends at or after this time (RFC 3339).
    #[serde(default, deserialize_with = "rfc3339")]
    pub since: Option<DateTime<Utc>>,
    /// Only memories whose event time starts at or before this time (RFC 3339).
    #[serde(default, deserialize_with = "rfc3339")]
    pub until: Option<DateTime<Utc>>,
    /// Answer as of this time (RFC 3339): memories known then, current as of then.
    #[serde(default, deserialize_with = "rfc3339")]
    pub as_of: Option<DateTime<Utc>>,
    /// Only memories no newer memory about the same thing supersedes.
    #[serde(default)]
    pub latest_only: bool,
    /// Only memories said in this session.
    #[serde(default)]
    pub session: Option<String>,
    /// Only memories said in sessions of this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only memories with this person among their participants (the speaker of the
    /// messages they come from, or someone a model extractor named; case ignored).
    #[serde(default)]
    pub speaker: Option<String>,
}

impl SearchRequest {
    /// The search options.
    #[must_use]
    pub fn options(&self) -> SearchOptions {
        SearchOptions {
            k: self.k.unwrap_or(10),
            since: self.since,
            until: self.until,
            as_of: self.as_of,
            latest_only: self.latest_only,
            session: self.session.clone(),
            agent: self.agent.clone(),
            speaker: self.speaker.clone(),
            ..SearchOptions::default()
        }
    }
}

/// A prompt-ready context for a question (`POST /v1/users/{user}/context`): a search's
/// question, `k` (the memories to consider) and filters, and a token budget.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
pub struct ContextRequest {
    /// Budget of the text in tokens (bytes / 4; default 1000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// The question, the memories to consider and their filters; a `session` filter also
    /// picks the conversation whose recent messages are shown, and the recent messages are
    /// not filtered by the others.
    #[serde(flatten)]
    pub search: SearchRequest,
}

impl<'de> Deserialize<'de> for ContextRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (max_tokens, search) = split_field(d, "max_tokens")?;
        Ok(Self { max_tokens, search })
    }
}

impl ContextRequest {
    /// The token budget.
    #[must_use]
    pub fn max_tokens(&self) -> usize {
        self.max_tokens.unwrap_or(1000)
    }
}

/// Reads a JSON object as its field `name` (absent or null: `None`) and the rest of its
/// fields as a `T`, whose own checks (unknown fields refused, each error with its path)
/// apply to the rest. serde's `flatten` would pass unknown fields over in silence.
///
/// # Errors
/// Not an object; the field or the rest not of their types.
pub fn split_field<'de, D, F, T>(d: D, name: &str) -> Result<(Option<F>, T), D::Error>
where
    D: Deserializer<'de>,
    F: DeserializeOwned,
    T: DeserializeOwned,
{
    let mut object = serde_json::Map::deserialize(d)?;
    let field = match object.remove(name) {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => {
            Some(serde_json::from_value(v).map_err(|e| D::Error::custom(format!("{name}: {e}")))?)
        }
    };
    let rest =
        serde_path_to_error::deserialize(serde_json::Value::Object(object)).map_err(|e| match e
            .path()
            .to_string()
            .as_str()
        {
            "." => D::Error::custom(e.inner()),
            at => D::Error::custom(format!("{at}: {}", e.inner())),
        })?;
    Ok((field, rest))
}

/// Replace a memory's text (`PUT /v1/users/{user}/memories/{id}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateRequest {
    /// The new text.
    pub text: String,
}

/// Which memories to list (`GET /v1/users/{user}/memories?...`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRequest {
    /// At most this many (default 100, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// After skipping this many.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Only memories whose event time starts at or after this time (RFC 3339).
    #[serde(default, deserialize_with = "rfc3339")]
    pub since: Option<DateTime<Utc>>,
    /// Only memories whose event time starts at or before this time (RFC 3339).
    #[serde(default, deserialize_with = "rfc3339")]
    pub until: Option<DateTime<Utc>>,
    /// Only memories said in this session.
    #[serde(default)]
    pub session: Option<String>,
    /// Only memories said in sessions of this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only memories no newer memory about the same thing supersedes.
    #[serde(default)]
    pub latest_only: bool,
}

impl ListRequest {
    /// The list options.
    #[must_use]
    pub fn options(&self) -> ListOptions {
        ListOptions {
            limit: self.limit.unwrap_or(100),
            offset: self.offset.unwrap_or(0),
            since: self.since,
            until: self.until,
            session: self.session.clone(),
            agent: self.agent.clone(),
            latest_only: self.latest_only,
        }
    }
}

/// The memory id `s` (16 hex digits).
///
/// # Errors
/// [`ApiError::BadRequest`] for anything else.
pub fn memory_id(s: &str) -> Result<memforest::MemoryId, ApiError> {
    s.parse()
        .map_err(|e: memforest::BadMemoryId| ApiError::BadRequest(e.to_string()))
}

/// A request's size checks against the server's [`Limits`].
pub trait Checked {
    /// Ok when within `limits`.
    ///
    /// # Errors
    /// [`ApiError::TooLarge`] for a batch or text over its limit; [`ApiError::BadRequest`]
    /// for an empty batch or an out-of-range count.
    fn check(&self, limits: &Limits) -> Result<(), ApiError>;
}

fn text_within(what: &str, text: &str, max: usize) -> Result<(), ApiError> {
    if text.len() > max {
        return Err(ApiError::TooLarge(format!(
            "{what} is {} bytes, over the limit of {max}",
            text.len()
        )));
    }
    Ok(())
}

fn count_within(what: &str, n: Option<usize>, max: usize) -> Result<(), ApiError> {
    match n {
        Some(n) if n == 0 || n > max => Err(ApiError::BadRequest(format!(
            "{what} must be 1..={max}, not {n}"
        ))),
        _ => Ok(()),
    }
}

impl Checked for AddRequest {
    fn check(&self, limits: &Limits) -> Result<(), ApiError> {
        if self.messages.is_empty() {
            return Err(ApiError::BadRequest("messages is empty".into()));
        }
        if self.messages.len() > limits.max_batch {
            return Err(ApiError::TooLarge(format!(
                "{} messages, over the batch limit of {}",
                self.messages.len(),
                limits.max_batch
            )));
        }
        self.messages
            .iter()
            .try_for_each(|m| text_within("a message's text", &m.text, limits.max_turn_bytes))
    }
}

impl Checked for SearchRequest {
    fn check(&self, limits: &Limits) -> Result<(), ApiError> {
        count_within("k", self.k, limits.max_k)?;
        text_within("the query", &self.query, limits.max_turn_bytes)
    }
}

impl Checked for ContextRequest {
    fn check(&self, limits: &Limits) -> Result<(), ApiError> {
        count_within("max_tokens", self.max_tokens, limits.max_context_tokens)?;
        self.search.check(limits)
    }
}

impl Checked for UpdateRequest {
    fn check(&self, limits: &Limits) -> Result<(), ApiError> {
        text_within("the text", &self.text, limits.max_turn_bytes)
    }
}

impl Checked for ListRequest {
    fn check(&self, limits: &Limits) -> Result<(), ApiError> {
        count_within("limit", self.limit, limits.max_k)
    }
}

/// Decodes a JSON body into a `T` and checks it against `limits`.
///
/// # Errors
/// [`ApiError::TooLarge`] for a body over `limits.max_body_bytes`; [`ApiError::BadRequest`]
/// for bytes that are not JSON of `T`'s shape (naming the field, as `messages[0].time`);
/// [`Checked::check`]'s errors.
pub fn decode<T: DeserializeOwned + Checked>(body: &[u8], limits: &Limits) -> Result<T, ApiError> {
    if body.len() > limits.max_body_bytes {
        return Err(ApiError::TooLarge(format!(
            "the body is {} bytes, over the limit of {}",
            body.len(),
            limits.max_body_bytes
        )));
    }
    // serde's derive also reads a struct from an array, by position: `["pilot"]` would be
    // a search for "pilot". Every body is an object.
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b != b'{') {
        return Err(ApiError::BadRequest(
            "invalid JSON body: expected a JSON object ({...})".into(),
        ));
    }
    let mut json = serde_json::Deserializer::from_slice(body);
    let value: T = serde_path_to_error::deserialize(&mut json).map_err(|e| {
        let at = e.path().to_string();
        match at.as_str() {
            "." => ApiError::BadRequest(format!("invalid JSON body: {}", e.inner())),
            _ => ApiError::BadRequest(format!("invalid JSON body: {at}: {}", e.inner())),
        }
    })?;
    json.end()
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?;
    value.check(limits)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_decode_or_fail_with_the_right_status() {
        let l = Limits::default();
        let ok: AddRequest = decode(
            br#"{"messages":[{"role":"user","text":"I moved to Lisbon"}]}"#,
            &l,
        )
        .unwrap();
        assert_eq!(ok.messages().len(), 1);
        let bad = |b: &[u8]| decode::<AddRequest>(b, &l).unwrap_err().status().as_u16();
        assert_eq!(bad(b"{"), 400);
        assert_eq!(bad(br#"{"messages":[]}"#), 400);
        assert_eq!(bad(br#"{"messages":[{"role":"robot","text":"x"}]}"#), 400);
        let long = format!(
            r#"{{"messages":[{{"role":"user","text":"{}"}}]}}"#,
            "a".repeat(l.max_turn_bytes + 1)
        );
        assert_eq!(bad(long.as_bytes()), 413);
        let many = format!(
            r#"{{"messages":[{}]}}"#,
            vec![r#"{"role":"user","text":"x"}"#; l.max_batch + 1].join(",")
        );
        assert_eq!(bad(many.as_bytes()), 413);
        let k0 = decode::<SearchRequest>(br#"{"query":"q","k":0}"#, &l);
        assert_eq!(k0.unwrap_err().status().as_u16(), 400);
        // A struct's fields by position are not a body.
        let array = decode::<SearchRequest>(br#" ["pilot"]"#, &l).unwrap_err();
        assert_eq!(array.status().as_u16(), 400);
        assert!(
            array.to_string().contains("expected a JSON object"),
            "{array}"
        );
    }

    #[test]
    fn a_bad_time_names_its_field_and_the_form_wanted() {
        let l = Limits::default();
        let add = |time: &str| {
            let body = format!(r#"{{"messages":[{{"role":"user","text":"x","time":"{time}"}}]}}"#);
            decode::<AddRequest>(body.as_bytes(), &l)
        };
        let ok = add("2024-04-02T09:00:00Z").unwrap().messages();
        assert_eq!(
            ok[0].time.map(|t| t.to_rfc3339()).as_deref(),
            Some("2024-04-02T09:00:00+00:00")
        );
        for bad in [
            "yesterday",
            "2024-04-02",
            "99999-01-01T00:00:00Z",
            "2024-02-30T00:00:00Z",
        ] {
            let e = add(bad).unwrap_err();
            assert_eq!(e.status().as_u16(), 400);
            let m = e.to_string();
            assert!(m.contains("messages[0].time"), "{m}");
            assert!(
                m.contains(&format!("{bad:?} is not an RFC 3339 time")),
                "{m}"
            );
        }
        let e = decode::<SearchRequest>(br#"{"query":"q","as_of":"soon"}"#, &l).unwrap_err();
        assert!(
            e.to_string().contains("as_of: \"soon\" is not an RFC 3339"),
            "{e}"
        );
        let e = decode::<SearchRequest>(br#"{"query":"q"} x"#, &l).unwrap_err();
        assert!(e.to_string().contains("trailing"), "{e}");
    }
}
