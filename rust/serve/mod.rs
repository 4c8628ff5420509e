//! `kafkalog serve`: a read-only Kafka endpoint over backups. Any Kafka client (the Java
//! client, librdkafka, kafka-python, kcat, Spark's Kafka source) connects to it as to a
//! one-node cluster that leads every partition, and fetches the stored batches byte for byte,
//! with offsets, timestamps, headers, transactions and the backup's consumer groups as the dead
//! cluster had them. Nothing under the served paths is ever written.
//!
//! | file | what |
//! |---|---|
//! | `catalog.rs` | what is served: topics, ids, partitions, their segments and offsets, found once at start |
//! | `fetch.rs` | a partition's answer to a fetch: stored entries, sliced as a broker slices them |
//! | `codes.rs` | Kafka's error codes the endpoint answers with |
//! | `api.rs` | each API: the versions taken, the dispatch, Metadata and Fetch |
//! | `bounded.rs` | requests decoded with every element count checked against the bytes left |
//! | `offsets.rs` | ListOffsets and OffsetForLeaderEpoch |
//! | `group_offsets.rs` | OffsetCommit and OffsetFetch |
//! | `refuse.rs` | every API that would write, refused with a message |
//! | `configs.rs` | DescribeConfigs: the backup's topic overrides over Kafka's defaults |
//! | `groups.rs` | the classic group coordinator: joins, assignments, heartbeats, sessions |
//! | `state.rs` | committed offsets: the backup's, then new ones kept in the state directory |
//! | `versions.rs` | responses fitted to the version asked for (fields a later version adds left at their defaults) |
//! | `shared.rs` | what every connection shares: the catalog, the coordinator, the next-fetch hints |
//!
//! Bounded: a request larger than [`Options::max_request_bytes`] closes its connection, as
//! does a malformed one or an unknown API; at most [`Options::max_connections`] are open; an
//! idle connection is closed after [`Options::idle_timeout`]; a fetch answer holds at most
//! 64 MiB; a store that does not answer a partition's read in time makes that partition's
//! answer an error, never a stall of the others.

pub mod api;
mod bounded;
pub mod catalog;
pub mod codes;
mod configs;
pub mod fetch;
mod group_offsets;
pub mod groups;
mod offsets;
mod refuse;
mod shared;
pub mod state;
mod versions;
#[cfg(test)]
mod wire_tests;

pub use shared::{Hints, Shared};

use crate::error::{Error, ErrorKind, Result};
use crate::read::files::TopicFilter;
use crate::storage::Storage;
use bytes::{Buf, Bytes};
use catalog::Catalog;
use groups::Coordinator;
use kafka_protocol::messages::{ApiKey, RequestHeader};
use kafka_protocol::protocol::{Decodable, Encodable};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};

/// How the endpoint is set up.
#[derive(Clone, Debug)]
pub struct Options {
    /// What is served: anything a read takes (log directories, several brokers' volumes,
    /// object-store prefixes, tiered-storage buckets).
    pub paths: Vec<PathBuf>,
    /// Where to listen (`127.0.0.1:9092`; port 0 picks a free one).
    pub listen: String,
    /// The host and port clients are told to connect to; default: the listening address.
    pub advertise: Option<String>,
    /// Where committed offsets are kept across restarts; `None`: in memory.
    pub state: Option<PathBuf>,
    /// Which topics are served (Kafka's consumer pattern rule); `None`: all.
    pub topics: Option<String>,
    /// The largest request taken.
    pub max_request_bytes: usize,
    /// The most connections open at once.
    pub max_connections: usize,
    /// How long a connection may stay silent.
    pub idle_timeout: Duration,
    /// How long an empty group waits for more members before its first rebalance completes.
    pub initial_rebalance_delay: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            paths: Vec::new(),
            listen: "127.0.0.1:9092".to_string(),
            advertise: None,
            state: None,
            topics: None,
            max_request_bytes: 16 << 20,
            max_connections: 1024,
            // Kafka's `connections.max.idle.ms`.
            idle_timeout: Duration::from_secs(600),
            initial_rebalance_delay: Duration::from_millis(0),
        }
    }
}

/// A running endpoint.
pub struct Server {
    address: SocketAddr,
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Arc<Notify>,
}

impl Server {
    /// Finds what `options.paths` hold and starts serving it; returns once listening. `log`
    /// receives a line per refused request, dropped connection or failed read.
    pub fn start(
        storage: Arc<dyn Storage>,
        options: Options,
        log: shared::LogFn,
    ) -> Result<Server> {
        let filter = TopicFilter::new(options.topics.as_deref())?;
        let catalog = Catalog::build(storage.clone(), &options.paths, &filter)?;
        if catalog.topics.is_empty() {
            let why = if catalog.notes.is_empty() {
                String::new()
            } else {
                format!(": {}", catalog.notes.join("; "))
            };
            return Err(Error::invalid_argument(format!("nothing to serve{why}")));
        }
        let offsets = state::OffsetStore::load(&storage, &options.paths, options.state.as_deref())?;
        let topic_configs = topic_configs(&storage, &options.paths);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(16)
            .thread_name("kafkalog-serve")
            .enable_all()
            .build()
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot start the server: {e}")))?;
        let listener = runtime
            .block_on(TcpListener::bind(&options.listen))
            .map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot listen on {}: {e}", options.listen),
                )
            })?;
        let address = listener
            .local_addr()
            .map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?;
        let advertise = match &options.advertise {
            Some(a) => split_host_port(a)?,
            None => (address.ip().to_string(), address.port()),
        };
        let groups = {
            let _guard = runtime.enter();
            Coordinator::new(offsets, options.initial_rebalance_delay)
        };
        let mut notes = catalog.notes.clone();
        let shared = Arc::new(Shared {
            catalog,
            groups,
            advertise,
            hints: Hints::default(),
            max_timestamps: Mutex::new(HashMap::new()),
            topic_configs,
            closing: Notify::new(),
            log: Mutex::new(log),
        });
        for note in notes.drain(..) {
            shared.log(&note);
        }
        let stop = Arc::new(Notify::new());
        runtime.spawn(accept_loop(
            listener,
            Arc::clone(&shared),
            Arc::clone(&stop),
            options.clone(),
        ));
        let expiring = Arc::clone(&shared);
        runtime.spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            loop {
                tick.tick().await;
                expiring.groups.expire_sessions();
            }
        });
        Ok(Server {
            address,
            shared,
            runtime: Some(runtime),
            stop,
        })
    }

    /// The address listened on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// What is served.
    pub fn catalog(&self) -> &Catalog {
        &self.shared.catalog
    }

    /// Stops listening, closes every connection and waits (briefly) for the server's tasks.
    pub fn close(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            self.stop.notify_waiters();
            self.shared.closing.notify_waiters();
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.close();
    }
}

fn split_host_port(text: &str) -> Result<(String, u16)> {
    let bad = || Error::invalid_argument(format!("advertise {text:?} is not HOST:PORT"));
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    let port = port.parse().map_err(|_| bad())?;
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.trim_matches(['[', ']']).to_string(), port))
}

/// Topic configuration overrides recorded in the backup's KRaft metadata, where it has it.
fn topic_configs(
    storage: &Arc<dyn Storage>,
    paths: &[PathBuf],
) -> HashMap<String, BTreeMap<String, String>> {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    let mut out: HashMap<String, BTreeMap<String, String>> = HashMap::new();
    for path in paths {
        let has_metadata = matches!(
            storage.stat(&path.join("__cluster_metadata-0")),
            Ok(crate::storage::Stat::Dir)
        );
        if !has_metadata {
            continue;
        }
        let Ok((tables, _)) = crate::read::internal_topics::cluster_state(storage, path) else {
            continue;
        };
        let Some((_, configs)) = tables.iter().find(|(name, _)| *name == "configs") else {
            continue;
        };
        let column = |name: &str| configs.column_by_name(name).map(|c| c.as_string::<i32>());
        let (Some(kind), Some(resource), Some(name), Some(value)) = (
            column("resourceType"),
            column("resourceName"),
            column("name"),
            column("value"),
        ) else {
            continue;
        };
        for i in 0..configs.num_rows() {
            if kind.value(i) == "TOPIC" && !value.is_null(i) {
                out.entry(resource.value(i).to_string())
                    .or_default()
                    .insert(name.value(i).to_string(), value.value(i).to_string());
            }
        }
    }
    out
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    stop: Arc<Notify>,
    options: Options,
) {
    let slots = Arc::new(Semaphore::new(options.max_connections));
    loop {
        let accepted = tokio::select! {
            _ = stop.notified() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                shared.log(&format!("accept failed: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            shared.log(&format!(
                "{peer}: refused, {} connections are open already",
                options.max_connections
            ));
            drop(stream);
            continue;
        };
        let shared = Arc::clone(&shared);
        let stop = Arc::clone(&stop);
        let options = options.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let _ = stream.set_nodelay(true);
            tokio::select! {
                _ = stop.notified() => {}
                result = connection(stream, peer, &shared, &options) => {
                    if let Err(reason) = result {
                        shared.log(&format!("{peer}: connection closed: {reason}"));
                    }
                }
            }
        });
    }
}

/// Serves one connection, a request at a time (as a broker does: in order). Returns why it
/// closed, when it was not the client.
async fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    shared: &Arc<Shared>,
    options: &Options,
) -> std::result::Result<(), String> {
    let peer_host = peer.ip().to_string();
    loop {
        let size = match tokio::time::timeout(options.idle_timeout, stream.read_i32()).await {
            Err(_) => return Err("idle".to_string()),
            Ok(Err(_)) => return Ok(()), // the client closed it
            Ok(Ok(size)) => size,
        };
        if size < 8 || size as usize > options.max_request_bytes {
            return Err(format!(
                "a request of {size} bytes (the most taken is {})",
                options.max_request_bytes
            ));
        }
        let mut frame = vec![0u8; size as usize];
        match tokio::time::timeout(options.idle_timeout, stream.read_exact(&mut frame)).await {
            Ok(Ok(_)) => {}
            _ => return Err(format!("a request of {size} bytes ended early")),
        }
        let response = request(shared, Bytes::from(frame), &peer_host).await?;
        if let Some(body) = response {
            stream
                .write_all(&body)
                .await
                .map_err(|e| format!("writing a response: {e}"))?;
        }
    }
}

/// A request frame (without its size), split as the server reads it.
pub enum Parsed {
    /// A request the endpoint takes: its API, version, header and undecoded body.
    Request {
        /// The API.
        key: ApiKey,
        /// Its version.
        version: i16,
        /// The request header.
        header: RequestHeader,
        /// The body, undecoded.
        body: Bytes,
    },
    /// An ApiVersions request newer than the endpoint's: answered in version 0 (KIP-511).
    NewerApiVersions {
        /// The request's correlation id.
        correlation: i32,
    },
}

/// Splits a request frame; an error (unknown API, a version not taken, a malformed header)
/// closes the connection, with the reason in the log.
pub fn parse_frame(mut frame: Bytes) -> std::result::Result<Parsed, String> {
    if frame.len() < 8 {
        return Err(format!("a request of {} bytes", frame.len()));
    }
    let api_key = i16::from_be_bytes([frame[0], frame[1]]);
    let version = i16::from_be_bytes([frame[2], frame[3]]);
    let key = ApiKey::try_from(api_key).map_err(|_| format!("unknown API key {api_key}"))?;
    let Some((min, max)) = api::versions(key) else {
        return Err(format!("API {key:?} is not served"));
    };
    if !(min..=max).contains(&version) {
        if key == ApiKey::ApiVersions && version > max {
            let correlation = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
            return Ok(Parsed::NewerApiVersions { correlation });
        }
        return Err(format!(
            "{key:?} version {version} (this endpoint takes {min} to {max})"
        ));
    }
    // A header has no arrays (see `bounded.rs`), so the crate's decoder reads it directly.
    let header = RequestHeader::decode(&mut frame, key.request_header_version(version))
        .map_err(|e| format!("malformed {key:?} request header: {e}"))?;
    let body = frame.copy_to_bytes(frame.remaining());
    Ok(Parsed::Request {
        key,
        version,
        header,
        body,
    })
}

/// What the fuzz target `serve_request` runs: a frame split and its body decoded as the
/// endpoint would, which must never panic whatever the bytes.
pub fn fuzz_request(data: &[u8]) {
    if let Ok(Parsed::Request {
        key, version, body, ..
    }) = parse_frame(Bytes::copy_from_slice(data))
    {
        let _ = api::decode_only(key, version, body);
    }
}

/// One request's answer (None: none is sent); an error closes the connection.
async fn request(
    shared: &Arc<Shared>,
    frame: Bytes,
    peer: &str,
) -> std::result::Result<Option<bytes::BytesMut>, String> {
    match parse_frame(frame)? {
        Parsed::NewerApiVersions { correlation } => {
            let mut header = kafka_protocol::messages::ResponseHeader::default();
            header.correlation_id = correlation;
            let out = api::framed(|out| {
                header.encode(out, 0)?;
                api::api_versions(codes::code::UNSUPPORTED_VERSION).encode(out, 0)
            });
            out.map(Some).map_err(|e| e.to_string())
        }
        Parsed::Request {
            key,
            version,
            header,
            body,
        } => api::answer(shared, key, version, &header, body, peer)
            .await
            .map_err(|e| format!("malformed or failed {key:?} v{version} request: {e}")),
    }
}
