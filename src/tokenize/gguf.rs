//! Reading a GGUF file's metadata (its key/value section), without loading tensors.

use std::collections::BTreeMap;
use std::path::Path;

use super::TokenizeError;

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufValue {
    U64(u64),
    I64(i64),
    F64(f64),
    Bool(bool),
    String(String),
    Array(Vec<GgufValue>),
}

/// The key/value metadata of a GGUF file.
pub type GgufMetadata = BTreeMap<String, GgufValue>;

/// Reads the metadata section of a GGUF file (versions 2 and 3).
pub fn read_metadata(path: &Path) -> Result<GgufMetadata, TokenizeError> {
    let _ = path;
    todo!("tokenize: GGUF metadata")
}
