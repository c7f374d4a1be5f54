//! The `Host` check of a loopback listener: a request whose `Host` (or HTTP/2 authority)
//! names anything but this machine is refused with 403. A web page can rebind its own
//! domain name to 127.0.0.1 (DNS rebinding) and then read a local server's answers as
//! its own; the browser still sends that domain as the `Host`. `/mcp` gets the same check
//! from its transport.

use std::net::IpAddr;

use axum::extract::Request;
use axum::http::header::HOST;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};

use crate::error::ApiError;

/// Longest `Host` value quoted in the refusal, characters.
const MAX_QUOTED: usize = 100;

/// Middleware for a loopback listener: refuses a request whose `Host` is not `localhost`
/// or a loopback address (any port); one without a `Host` (HTTP/1.0) passes.
pub async fn loopback_only(request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(HOST)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()));
    match host {
        Some(h) if !is_loopback_name(&h) => {
            ApiError::ForeignHost(h.chars().take(MAX_QUOTED).collect()).into_response()
        }
        _ => next.run(request).await,
    }
}

/// Whether `host` (`name`, `name:port`, `[v6]` or `[v6]:port`) names this machine.
fn is_loopback_name(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((v6, port)) if port.is_empty() || port.starts_with(':') => v6,
            _ => return false,
        },
        None => match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            Some(_) => return false,
            None => host,
        },
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::is_loopback_name;

    #[test]
    fn only_names_of_this_machine_pass() {
        for ok in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.0.0.1:3000",
            "127.1.2.3:9",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_loopback_name(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.evil.example",
            "10.0.0.1:80",
            "[::2]:80",
            "[::1]x",
            "localhost:80x",
            "",
        ] {
            assert!(!is_loopback_name(bad), "{bad}");
        }
    }
}
