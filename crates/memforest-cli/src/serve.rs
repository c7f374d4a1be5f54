//! `memforest serve`, `memforest mcp` and `memforest keys add`: the store behind the
//! server of [`memforest_server`], and the keys file it reads.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

use memforest::Memory;
use memforest_server::{keys, Keys, KeysFile, Limits, Right, ServeConfig, Server};

use crate::error::{CliError, Result};
use crate::location::StoreArgs;
use crate::store::ModelArgs;

/// The server's listener, keys and limits.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on, `IP:PORT` or `HOST:PORT` (the host's first address, e.g.
    /// `localhost:8080`). Anything but loopback needs --keys.
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = listen_address)]
    pub listen: SocketAddr,
    /// The keys file (`memforest keys add` writes it); without it every request may use
    /// every user's memory, so only loopback addresses are allowed.
    #[arg(long)]
    pub keys: Option<PathBuf>,
    /// Largest request body, bytes.
    #[arg(long, default_value_t = Limits::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// Most messages in one add.
    #[arg(long, default_value_t = Limits::default().max_batch)]
    pub max_batch: usize,
    /// Requests one key may have in flight (more get 429).
    #[arg(long, default_value_t = Limits::default().max_in_flight_per_key)]
    pub max_in_flight: usize,
    /// Seconds a request's whole body may take to arrive (slower ones get 408).
    #[arg(long, default_value_t = Limits::default().body_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_secs: u64,
    /// Seconds a request's headers may take, counted from the connection's accept or its
    /// previous response (slower and idle connections are closed).
    #[arg(long, default_value_t = Limits::default().header_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_secs: u64,
    /// Writer or read replica, and how each follows the object store.
    #[command(flatten)]
    pub role: RoleArgs,
}

/// Seconds between a URL writer's timed publications when --publish-interval is not given.
const DEFAULT_PUBLISH_SECS: u64 = 5;

/// How a long-running server (`serve`, `mcp`) holds its store: as its writer, publishing
/// to an object store every --publish-interval, or read-only, following the writer every
/// --refresh-interval.
#[derive(Debug, Clone, clap::Args)]
pub struct RoleArgs {
    /// Serve reads only: every write route and MCP write tool is refused. With a URL --db
    /// the server is a read replica of the store's writer, following what it publishes
    /// every --refresh-interval; with a directory it serves the state at start.
    #[arg(long)]
    pub read_only: bool,
    /// Seconds between a read replica's refreshes from the object store.
    #[arg(long, value_name = "SECS", default_value_t = 5, requires = "read_only",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub refresh_interval: u64,
    /// With a URL --db, as the store's writer: writes are flushed and published to the
    /// object store once they are this many seconds old (default 5), so a replica sees
    /// them within about that long and the loss of this machine loses at most about that
    /// much; a clean stop (SIGTERM, Ctrl-C, end of the MCP session) publishes everything.
    #[arg(long, value_name = "SECS", conflicts_with = "read_only",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub publish_interval: Option<u64>,
}

impl RoleArgs {
    /// Opens the store `store` names: read-only (a read replica for a URL) with
    /// --read-only, else for writing with `models`' settings and, on an object store, the
    /// timed publication of --publish-interval.
    ///
    /// # Errors
    /// [`CliError::Usage`] for --publish-interval with a directory --db; as
    /// [`StoreArgs::open_read_only_with`] and [`StoreArgs::open`].
    pub fn open(&self, store: &StoreArgs, models: &ModelArgs) -> Result<Memory> {
        if self.read_only {
            return store.open_read_only_with(&models.embed);
        }
        let mut options = models.options()?;
        options.engine.remote_flush_interval = self.publish_interval(store)?;
        store.open(options)
    }

    /// How often a read replica follows the writer: --refresh-interval with --read-only
    /// and a URL --db; `None` otherwise.
    #[must_use]
    pub fn refresh(&self, store: &StoreArgs) -> Option<Duration> {
        (self.read_only && store.is_remote()).then(|| Duration::from_secs(self.refresh_interval))
    }

    /// A writer's publication interval: --publish-interval (default 5 s) with a URL --db,
    /// `None` for a directory.
    fn publish_interval(&self, store: &StoreArgs) -> Result<Option<Duration>> {
        match (store.is_remote(), self.publish_interval) {
            (true, secs) => Ok(Some(Duration::from_secs(
                secs.unwrap_or(DEFAULT_PUBLISH_SECS),
            ))),
            (false, None) => Ok(None),
            (false, Some(_)) => Err(CliError::Usage(
                "--publish-interval is for a writer on an object store (--db URL); a local \
                 store's writes are in its directory's WAL"
                    .into(),
            )),
        }
    }
}

/// The address `--listen` names: an `IP:PORT`, or a `HOST:PORT` resolved to the host's
/// first address.
fn listen_address(s: &str) -> std::result::Result<SocketAddr, String> {
    if let Ok(addr) = s.parse() {
        return Ok(addr);
    }
    s.to_socket_addrs()
        .map_err(|e| format!("{s:?} is not IP:PORT or HOST:PORT: {e}"))?
        .next()
        .ok_or_else(|| format!("{s:?} resolves to no address"))
}

impl ServeArgs {
    /// The limits these flags set.
    #[must_use]
    pub fn limits(&self) -> Limits {
        Limits {
            max_body_bytes: self.max_body_bytes,
            max_batch: self.max_batch,
            max_in_flight_per_key: self.max_in_flight,
            body_timeout: std::time::Duration::from_secs(self.body_timeout_secs),
            header_timeout: std::time::Duration::from_secs(self.header_timeout_secs),
            ..Limits::default()
        }
    }

    /// The server configuration for the store `store` names, reading the keys file; a
    /// read replica refreshes every --refresh-interval.
    ///
    /// # Errors
    /// [`CliError::Usage`] for an unreadable or invalid keys file.
    pub fn config(&self, store: &StoreArgs) -> Result<ServeConfig> {
        let keys = match &self.keys {
            Some(path) => Some(Keys::new(
                KeysFile::load(path).map_err(|e| CliError::Usage(e.to_string()))?,
            )),
            None => None,
        };
        Ok(ServeConfig {
            listen: self.listen,
            keys,
            limits: self.limits(),
            refresh: self.role.refresh(store),
        })
    }
}

/// Logs to stderr (`RUST_LOG` filters; default `info`), so stdout stays free (the MCP
/// stdio protocol).
pub fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| CliError::Io {
            op: "start the async runtime",
            path: PathBuf::new(),
            source,
        })
}

/// A server error as the CLI reports it (a usage error: a refused address, a port in use).
pub fn served(e: memforest_server::ServeError) -> CliError {
    CliError::Usage(e.to_string())
}

/// Serves `memory` with `config` on `listener` (bound by [`memforest_server::listen`]
/// before the store was opened) until SIGTERM or SIGINT, then drains and closes it.
/// Prints `listening on ADDR` to stdout.
///
/// # Errors
/// Serve errors; the store's close error.
pub fn serve(listener: std::net::TcpListener, memory: Memory, config: ServeConfig) -> Result<()> {
    runtime()?.block_on(async move {
        let server = Server::on(listener, memory, config).map_err(served)?;
        let addr = server.local_addr().map_err(|source| CliError::Io {
            op: "read the listener address",
            path: PathBuf::new(),
            source,
        })?;
        println!("listening on {addr}");
        server
            .run(memforest_server::shutdown_signal())
            .await
            .map_err(served)
    })
}

/// Serves `memory` as an MCP server over stdio for `user` until the client closes it or
/// a SIGTERM or SIGINT arrives (the store is closed either way); a read replica follows
/// its writer every `refresh`.
///
/// # Errors
/// The session's errors; the store's close error.
pub fn mcp(memory: Memory, user: &str, refresh: Option<Duration>) -> Result<()> {
    let rt = runtime()?;
    let served_out = rt
        .block_on(memforest_server::serve_stdio(
            memory,
            user,
            Limits::default(),
            refresh,
        ))
        .map_err(served);
    // A read of stdin still blocked on its thread must not hold up the exit after a signal.
    rt.shutdown_background();
    served_out
}

/// Parses `USER=RIGHT` (`read`, `read-write`, `r`, `rw`).
///
/// # Errors
/// A missing `=` or an unknown right.
pub fn parse_grant(s: &str) -> std::result::Result<(String, Right), String> {
    let (user, right) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not USER=read or USER=read-write"))?;
    Ok((
        user.to_owned(),
        right.parse().map_err(|e: keys::KeysError| e.to_string())?,
    ))
}

/// Makes a new key named `name` for `grants`, adds its digest to the keys file at `file`
/// (created when absent) and returns the key (shown once: only its digest is stored).
///
/// # Errors
/// [`CliError::Usage`] for a bad name, no grant, a taken name, an invalid keys file; I/O
/// errors.
pub fn add_key(file: &Path, name: &str, grants: &[(String, Right)]) -> Result<String> {
    let usage = |e: keys::KeysError| CliError::Usage(e.to_string());
    let mut keys = KeysFile::load_or_empty(file).map_err(usage)?;
    let tenants: BTreeMap<String, Right> = grants.iter().cloned().collect();
    let (key, entry) = keys::generate(name, tenants).map_err(usage)?;
    keys.add_and_save(entry, file).map_err(usage)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::listen_address;

    #[test]
    fn listen_takes_an_ip_or_a_host_with_a_port() {
        assert_eq!(
            listen_address("127.0.0.1:8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        let local = listen_address("localhost:8080").unwrap();
        assert!(local.ip().is_loopback() && local.port() == 8080, "{local}");
        let e = listen_address("localhost").unwrap_err();
        assert!(
            e.contains("\"localhost\" is not IP:PORT or HOST:PORT"),
            "{e}"
        );
    }
}
