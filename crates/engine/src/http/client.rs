//! [`HttpClient`]: JSON over `POST` to one base URL, with the timeout, retries, cancellation and
//! key handling the module describes.

use std::fmt;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, RETRY_AFTER};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use super::HttpError;
use super::answer::{BodyError, MAX_ANSWER_BYTES, read_bounded};
use super::redact::redact_url_credentials;

/// First backoff delay; it doubles per retry.
const BACKOFF_BASE: Duration = Duration::from_millis(200);
/// Longest backoff delay.
const BACKOFF_CAP: Duration = Duration::from_secs(5);
/// Longest wait a server's `Retry-After` may ask for.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(10);
/// Longest error body kept in [`HttpError::Status`], in bytes.
const ERROR_BODY_LIMIT: usize = 512;
/// What replaces an API key, should a server echo it.
const REDACTED: &str = "[redacted]";

/// A `reqwest` client builder whose TLS uses ring's cryptography. reqwest is built without a
/// provider of its own (aws-lc takes a minute of a cold build), so the process-wide default is
/// installed here, once, before any client exists; building a client without it would panic.
pub fn client_builder() -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Err only when another provider is already installed, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

/// What an [`HttpClient`] is built from; `section` names the config section in errors
/// (`backend`, `retrieve.dense`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HttpSettings<'a> {
    pub section: &'a str,
    pub endpoint: &'a str,
    pub api_key_env: Option<&'a str>,
    pub timeout_ms: u64,
    pub retries: u32,
}

/// A JSON-over-HTTP client bound to one base URL. Cloning shares the connection pool.
#[derive(Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    base: String,
    key: Option<ApiKey>,
    timeout: Duration,
    retries: u32,
}

/// A bearer token. Its `Debug` never shows it.
#[derive(Clone)]
struct ApiKey(String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("base", &redact_url_credentials(&self.base))
            .field("key", &self.key)
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .finish_non_exhaustive()
    }
}

/// How one attempt ended.
enum Outcome {
    Done(Vec<u8>),
    /// Worth another attempt, after `after` if the server said so.
    Retry {
        error: HttpError,
        after: Option<Duration>,
    },
    Fail(HttpError),
}

impl HttpClient {
    /// Checks the endpoint and reads the API key from its environment variable, once.
    pub(crate) fn new(settings: HttpSettings<'_>) -> Result<HttpClient, HttpError> {
        let section = settings.section;
        let url = reqwest::Url::parse(settings.endpoint).map_err(|e| {
            HttpError::Config(format!(
                "{section}.endpoint `{}` is not a URL: {e}",
                redact_url_credentials(settings.endpoint)
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(HttpError::Config(format!(
                "{section}.endpoint `{}` is not an http or https URL",
                redact_url_credentials(settings.endpoint)
            )));
        }
        let key = match settings.api_key_env {
            None => None,
            Some(name) => match std::env::var(name) {
                Ok(value) if !value.trim().is_empty() => Some(ApiKey(value.trim().to_string())),
                _ => {
                    return Err(HttpError::Config(format!(
                        "{section}.api_key_env names `{name}`, which is not set (or empty)"
                    )));
                }
            },
        };
        let timeout = Duration::from_millis(settings.timeout_ms.max(1));
        let client = client_builder()
            .connect_timeout(timeout)
            .build()
            .map_err(|e| HttpError::Config(format!("{section}: HTTP client: {e}")))?;
        Ok(HttpClient {
            client,
            base: settings.endpoint.trim_end_matches('/').to_string(),
            key,
            timeout,
            retries: settings.retries,
        })
    }

    /// The URL of `path` (which starts with `/`). A base URL that already ends in `/v1` is not
    /// given a second one, so both `http://host:8080` and `http://host:8080/v1` work.
    pub(crate) fn url(&self, path: &str) -> String {
        match path.strip_prefix("/v1/") {
            Some(rest) if self.base.ends_with("/v1") => format!("{}/{rest}", self.base),
            _ => format!("{}{path}", self.base),
        }
    }

    /// [`HttpClient::url`] as it may be shown: without credentials.
    pub(crate) fn shown_url(&self, path: &str) -> String {
        redact_url_credentials(&self.url(path))
    }

    /// The base URL's host, lower-cased (empty if it has none).
    pub(crate) fn host(&self) -> String {
        reqwest::Url::parse(&self.base)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
            .unwrap_or_default()
    }

    /// `POST`s `body` as JSON to `path` and parses the JSON answer, with the retries, timeout and
    /// cancellation the module describes.
    pub(crate) async fn post_json<B, T>(
        &self,
        path: &str,
        body: &B,
        cancel: &CancellationToken,
    ) -> Result<T, HttpError>
    where
        B: Serialize + ?Sized,
        T: DeserializeOwned,
    {
        let url = self.url(path);
        let body = serde_json::to_vec(body).map_err(|e| HttpError::Malformed {
            endpoint: redact_url_credentials(&url),
            message: format!("cannot encode the request: {e}"),
        })?;
        let mut attempt = 0u32;
        loop {
            if cancel.is_cancelled() {
                return Err(HttpError::Cancelled);
            }
            let started = Instant::now();
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(HttpError::Cancelled),
                outcome = self.attempt(&url, body.clone()) => outcome,
            };
            let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
            let (error, after) = match outcome {
                Outcome::Done(bytes) => {
                    tracing::debug!(endpoint = %redact_url_credentials(&url), attempt, elapsed_ms, "http ok");
                    return serde_json::from_slice(&bytes).map_err(|e| HttpError::Malformed {
                        endpoint: redact_url_credentials(&url),
                        message: format!("unexpected JSON: {e}"),
                    });
                }
                Outcome::Fail(error) => {
                    tracing::debug!(endpoint = %redact_url_credentials(&url), attempt, elapsed_ms, kind = error.kind(), "http failed");
                    return Err(error);
                }
                Outcome::Retry { error, after } => (error, after),
            };
            if attempt >= self.retries {
                tracing::debug!(endpoint = %redact_url_credentials(&url), attempt, elapsed_ms, kind = error.kind(), "http failed, no retries left");
                return Err(error);
            }
            let delay = after.map_or_else(|| backoff(attempt), |d| d.min(RETRY_AFTER_CAP));
            tracing::debug!(
                endpoint = %redact_url_credentials(&url),
                attempt,
                elapsed_ms,
                kind = error.kind(),
                delay_ms = delay.as_millis() as u64,
                "http retry"
            );
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(HttpError::Cancelled),
                () = tokio::time::sleep(delay) => {}
            }
            attempt += 1;
        }
    }

    /// One request, bounded by the timeout.
    async fn attempt(&self, url: &str, body: Vec<u8>) -> Outcome {
        let timeout_ms = self.timeout.as_millis() as u64;
        match tokio::time::timeout(self.timeout, self.exchange(url, body)).await {
            Ok(outcome) => outcome,
            Err(_) => Outcome::Fail(HttpError::Timeout {
                endpoint: redact_url_credentials(url),
                after_ms: timeout_ms,
            }),
        }
    }

    async fn exchange(&self, url: &str, body: Vec<u8>) -> Outcome {
        let mut request = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body);
        if let Some(key) = &self.key {
            // reqwest marks the header sensitive, so its own Debug hides it too.
            request = request.bearer_auth(&key.0);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => return self.send_error(url, &e),
        };
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = read_bounded(response).await;
        if !status.is_success() {
            let body = match &bytes {
                Ok(b) => truncate(&String::from_utf8_lossy(b), ERROR_BODY_LIMIT),
                Err(_) => "(the body could not be read, or was too large)".to_string(),
            };
            let error = HttpError::Status {
                endpoint: redact_url_credentials(url),
                status: status.as_u16(),
                body: self.redact(&body),
            };
            return if status.as_u16() == 429 || status.is_server_error() {
                Outcome::Retry {
                    error,
                    after: retry_after(&headers),
                }
            } else {
                Outcome::Fail(error)
            };
        }
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(BodyError::TooLarge) => {
                return Outcome::Fail(HttpError::Malformed {
                    endpoint: redact_url_credentials(url),
                    message: format!(
                        "the answer is larger than {} MiB, the limit on a model server's answer",
                        MAX_ANSWER_BYTES >> 20
                    ),
                });
            }
            Err(BodyError::Read(e)) if e.is_timeout() => {
                return Outcome::Fail(HttpError::Timeout {
                    endpoint: redact_url_credentials(url),
                    after_ms: self.timeout.as_millis() as u64,
                });
            }
            Err(BodyError::Read(e)) => {
                return Outcome::Fail(HttpError::Malformed {
                    endpoint: redact_url_credentials(url),
                    message: self.redact(&format!("the body ended early: {}", chain(&e))),
                });
            }
        };
        if let Some(kind) = headers.get(CONTENT_TYPE) {
            let kind = String::from_utf8_lossy(kind.as_bytes()).to_string();
            if !is_json(&kind) {
                return Outcome::Fail(HttpError::Malformed {
                    endpoint: redact_url_credentials(url),
                    message: self.redact(&format!(
                        "content type `{}` is not JSON; body starts {:?}",
                        truncate(&kind, 100),
                        truncate(&String::from_utf8_lossy(&bytes), 80)
                    )),
                });
            }
        }
        Outcome::Done(bytes)
    }

    /// Classifies a failure before any response arrived.
    fn send_error(&self, url: &str, e: &reqwest::Error) -> Outcome {
        let message = self.redact(&chain(e));
        if e.is_timeout() {
            Outcome::Fail(HttpError::Timeout {
                endpoint: redact_url_credentials(url),
                after_ms: self.timeout.as_millis() as u64,
            })
        } else if e.is_connect() {
            Outcome::Retry {
                error: HttpError::Refused {
                    endpoint: redact_url_credentials(url),
                    message,
                },
                after: None,
            }
        } else {
            // Connected, but the connection closed or broke before a response: retried like a
            // refused connection, reported as a malformed exchange.
            Outcome::Retry {
                error: HttpError::Malformed {
                    endpoint: redact_url_credentials(url),
                    message: format!("no complete response: {message}"),
                },
                after: None,
            }
        }
    }

    /// `text` with the API key and any URL's credentials, should they appear, replaced.
    fn redact(&self, text: &str) -> String {
        let text = redact_url_credentials(text);
        match &self.key {
            Some(key) if !key.0.is_empty() => text.replace(&key.0, REDACTED),
            _ => text,
        }
    }
}

/// At most `limit` bytes of `text`, cut at a character boundary, with `…` when cut.
fn truncate(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Whether a `Content-Type` value names JSON.
fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

/// `Retry-After` in seconds, when the server gave a number (HTTP dates fall back to backoff).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let seconds: f64 = value.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// The delay before retry `attempt + 1`: exponential, capped, scaled by a random factor in
/// [0.5, 1] so that clients that failed together do not retry together.
fn backoff(attempt: u32) -> Duration {
    let exponential = BACKOFF_BASE.saturating_mul(1u32 << attempt.min(16));
    let random = std::collections::hash_map::RandomState::new().hash_one(attempt);
    let factor = 0.5 + 0.5 * (random >> 11) as f64 / (1u64 << 53) as f64;
    exponential.min(BACKOFF_CAP).mul_f64(factor)
}

/// An error and its sources, joined with `: `.
fn chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !message.contains(&next) {
            message.push_str(": ");
            message.push_str(&next);
        }
        source = s.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    /// reqwest is built without a crypto provider of its own: a client built without one
    /// installed would panic, and an `https` endpoint needs it to connect.
    #[test]
    fn clients_build_with_rings_provider_for_https() {
        let client = client_builder().build();
        assert!(client.is_ok(), "{:?}", client.err());
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        let https = HttpClient::new(HttpSettings {
            section: "backend",
            endpoint: "https://127.0.0.1:9",
            api_key_env: None,
            timeout_ms: 1000,
            retries: 0,
        });
        assert!(https.is_ok());
    }

    fn client(endpoint: &str) -> HttpClient {
        HttpClient::new(HttpSettings {
            section: "backend",
            endpoint,
            api_key_env: None,
            timeout_ms: 1000,
            retries: 0,
        })
        .expect("valid settings")
    }

    #[test]
    fn a_clients_urls_and_debug_hide_credentials() {
        let http = client("http://user:s3cret@127.0.0.1:1");
        assert_eq!(
            http.shown_url("/completion"),
            "http://***@127.0.0.1:1/completion"
        );
        assert!(!format!("{http:?}").contains("s3cret"));
    }

    #[test]
    fn urls_join_without_doubling_v1() {
        let rows = [
            ("http://h:1", "/v1/completions", "http://h:1/v1/completions"),
            (
                "http://h:1/",
                "/v1/completions",
                "http://h:1/v1/completions",
            ),
            (
                "http://h:1/v1",
                "/v1/completions",
                "http://h:1/v1/completions",
            ),
            (
                "http://h:1/v1/",
                "/v1/embeddings",
                "http://h:1/v1/embeddings",
            ),
            ("http://h:1/v1", "/completion", "http://h:1/v1/completion"),
            (
                "http://h:1/api",
                "/api/generate",
                "http://h:1/api/api/generate",
            ),
        ];
        for (base, path, want) in rows {
            assert_eq!(client(base).url(path), want, "{base} + {path}");
        }
        assert_eq!(client("http://API.openai.com/v1").host(), "api.openai.com");
    }

    #[test]
    fn bad_endpoints_and_missing_keys_are_config_errors() {
        for endpoint in ["", "localhost:8080", "ftp://h/"] {
            let e = HttpClient::new(HttpSettings {
                section: "backend",
                endpoint,
                api_key_env: None,
                timeout_ms: 1,
                retries: 0,
            })
            .expect_err("bad endpoint");
            assert_eq!(e.kind(), "config", "{endpoint}: {e}");
        }
        let e = HttpClient::new(HttpSettings {
            section: "retrieve.dense",
            endpoint: "http://h",
            api_key_env: Some("CROSSFILE_TEST_SURELY_UNSET_KEY"),
            timeout_ms: 1,
            retries: 0,
        })
        .expect_err("unset key");
        assert!(
            e.to_string()
                .contains("retrieve.dense.api_key_env names `CROSSFILE_TEST_SURELY_UNSET_KEY`"),
            "{e}"
        );
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "abc…");
        assert_eq!(truncate("é🙂", 3), "é…");
        assert_eq!(truncate("🙂", 0), "…");
    }

    #[test]
    fn json_content_types() {
        for yes in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/problem+json",
        ] {
            assert!(is_json(yes), "{yes}");
        }
        for no in [
            "text/html",
            "text/plain; charset=utf-8",
            "",
            "application/x-ndjson",
        ] {
            assert!(!is_json(no), "{no}");
        }
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        for attempt in [0u32, 1, 2, 5, 40, u32::MAX] {
            let d = backoff(attempt);
            let full = BACKOFF_BASE
                .saturating_mul(1u32 << attempt.min(16))
                .min(BACKOFF_CAP);
            assert!(d >= full / 2 && d <= full, "{attempt}: {d:?}");
        }
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "2".parse().expect("header"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().expect("header"),
        );
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn debug_never_shows_the_key() {
        let mut c = client("http://h:1");
        c.key = Some(ApiKey("sk-very-secret".into()));
        let shown = format!("{c:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains(REDACTED), "{shown}");
        assert_eq!(c.redact("echo sk-very-secret"), "echo [redacted]");
    }
}
