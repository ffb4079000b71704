//! Model backends and what they stand on: the embedded model (its tokenizer and kept KV caches),
//! HTTP backends against real servers and injected faults, the `dense` retriever's embeddings
//! server, and fetching models.

mod dense;
#[cfg(feature = "embedded")]
pub mod embedded;
mod http;
#[cfg(feature = "embedded")]
mod kv_reuse;
#[cfg(feature = "embedded")]
mod likelihood;
mod model_fetch;
pub mod servers;
#[cfg(feature = "embedded")]
pub mod tokenizer;
