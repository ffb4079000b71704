//! Reading a GGUF file's metadata (its key/value section), without loading tensors.
//!
//! Hand-written rather than taken from a crate: the GGUF crates on crates.io are small
//! single-maintainer parsers (some read the tensor index or the whole file, some allocate what a
//! length field says), and llama.cpp's own reader is only there with the `embedded` feature,
//! while HTTP backends need the vocabulary without it. The format is simple: a header, then
//! key/value pairs, little-endian (versions 2 and 3; version 1 used 32-bit lengths and is
//! long gone). Every length is checked against the bytes left in the file before anything is
//! allocated, so a corrupt length is an error, never a huge allocation.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
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

impl GgufValue {
    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            GgufValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as an unsigned integer, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            GgufValue::U64(v) => Some(v),
            GgufValue::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an array, if it is one.
    pub fn as_array(&self) -> Option<&[GgufValue]> {
        match self {
            GgufValue::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// The key/value metadata of a GGUF file.
pub type GgufMetadata = BTreeMap<String, GgufValue>;

/// Reads the metadata section of a GGUF file (versions 2 and 3).
pub fn read_metadata(path: &Path) -> Result<GgufMetadata, TokenizeError> {
    let file = File::open(path).map_err(|error| TokenizeError::Read {
        path: path.into(),
        error,
    })?;
    let len = file
        .metadata()
        .map_err(|error| TokenizeError::Read {
            path: path.into(),
            error,
        })?
        .len();
    let mut reader = Reader {
        inner: BufReader::with_capacity(1 << 16, file),
        left: len,
        path,
        key: String::new(),
    };
    reader.header()?;
    let count = reader.u64()?;
    let mut metadata = GgufMetadata::new();
    for _ in 0..count {
        reader.key = "(a key)".to_string();
        let key = reader.string()?;
        reader.key = key;
        let kind = reader.u32()?;
        let value = reader.value(kind, 0)?;
        metadata.insert(std::mem::take(&mut reader.key), value);
    }
    Ok(metadata)
}

const MAGIC: &[u8; 4] = b"GGUF";
/// Arrays of arrays nest at most this deep (real files use none).
const MAX_DEPTH: u32 = 4;

/// A bounded little-endian reader: it knows how many bytes the file has left.
struct Reader<'a> {
    inner: BufReader<File>,
    left: u64,
    path: &'a Path,
    /// The key being read, for errors.
    key: String,
}

impl Reader<'_> {
    fn header(&mut self) -> Result<(), TokenizeError> {
        let not_gguf = |why: String| TokenizeError::NotGguf {
            path: self.path.into(),
            why,
        };
        if self.left < 24 {
            return Err(not_gguf(format!("{} bytes is too short", self.left)));
        }
        let magic: [u8; 4] = self.array()?;
        if &magic != MAGIC {
            return Err(not_gguf(format!("magic {magic:02x?} is not \"GGUF\"")));
        }
        let version = self.u32()?;
        match version {
            2 | 3 => {}
            1 => return Err(not_gguf("GGUF version 1 is not supported".to_string())),
            v if v.swap_bytes() <= 3 => {
                return Err(not_gguf("big-endian GGUF is not supported".to_string()));
            }
            v => return Err(not_gguf(format!("unknown GGUF version {v}"))),
        }
        let _tensor_count = self.u64()?;
        Ok(())
    }

    fn error(&self, why: String) -> TokenizeError {
        TokenizeError::Metadata {
            path: self.path.into(),
            key: self.key.clone(),
            why,
        }
    }

    /// Claims `n` bytes of the file, failing if it has fewer left.
    fn claim(&mut self, n: u64) -> Result<(), TokenizeError> {
        if n > self.left {
            return Err(self.error(format!(
                "needs {n} bytes but the file has {} left (truncated or corrupt)",
                self.left
            )));
        }
        self.left -= n;
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], TokenizeError> {
        self.claim(N as u64)?;
        let mut buf = [0u8; N];
        self.inner
            .read_exact(&mut buf)
            .map_err(|error| TokenizeError::Read {
                path: self.path.into(),
                error,
            })?;
        Ok(buf)
    }

    fn u32(&mut self) -> Result<u32, TokenizeError> {
        self.array().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, TokenizeError> {
        self.array().map(u64::from_le_bytes)
    }

    fn string(&mut self) -> Result<String, TokenizeError> {
        let len = self.u64()?;
        self.claim(len)?;
        let len = usize::try_from(len).map_err(|_| self.error(format!("string of {len} bytes")))?;
        let mut bytes = vec![0u8; len];
        self.inner
            .read_exact(&mut bytes)
            .map_err(|error| TokenizeError::Read {
                path: self.path.into(),
                error,
            })?;
        // GGUF strings are UTF-8; a stray invalid byte is kept visible rather than fatal.
        Ok(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// A value of GGUF type `kind`.
    fn value(&mut self, kind: u32, depth: u32) -> Result<GgufValue, TokenizeError> {
        Ok(match kind {
            0 => GgufValue::U64(u64::from(u8::from_le_bytes(self.array()?))),
            1 => GgufValue::I64(i64::from(i8::from_le_bytes(self.array()?))),
            2 => GgufValue::U64(u64::from(u16::from_le_bytes(self.array()?))),
            3 => GgufValue::I64(i64::from(i16::from_le_bytes(self.array()?))),
            4 => GgufValue::U64(u64::from(self.u32()?)),
            5 => GgufValue::I64(i64::from(i32::from_le_bytes(self.array()?))),
            6 => GgufValue::F64(f64::from(f32::from_le_bytes(self.array()?))),
            7 => match self.array::<1>()? {
                [0] => GgufValue::Bool(false),
                [1] => GgufValue::Bool(true),
                [b] => return Err(self.error(format!("bool byte {b} is neither 0 nor 1"))),
            },
            8 => GgufValue::String(self.string()?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(self.error(format!("arrays nested deeper than {MAX_DEPTH}")));
                }
                let item_kind = self.u32()?;
                let count = self.u64()?;
                let min_size = min_size(item_kind)
                    .ok_or_else(|| self.error(format!("unknown array item type {item_kind}")))?;
                // Every item takes at least `min_size` bytes, so a count the file cannot
                // hold is caught before allocating.
                if count.saturating_mul(min_size) > self.left {
                    return Err(self.error(format!(
                        "array of {count} items cannot fit in the {} bytes left",
                        self.left
                    )));
                }
                let mut items = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
                for _ in 0..count {
                    items.push(self.value(item_kind, depth + 1)?);
                }
                GgufValue::Array(items)
            }
            10 => GgufValue::U64(self.u64()?),
            11 => GgufValue::I64(i64::from_le_bytes(self.array()?)),
            12 => GgufValue::F64(f64::from_le_bytes(self.array()?)),
            other => return Err(self.error(format!("unknown value type {other}"))),
        })
    }
}

/// The fewest bytes a value of GGUF type `kind` takes, or `None` for an unknown type.
fn min_size(kind: u32) -> Option<u64> {
    Some(match kind {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        // A string's length; an array's item type and count.
        8 => 8,
        9 => 12,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GGUF header and key/value section built by hand.
    struct Gguf(Vec<u8>);

    impl Gguf {
        fn new(version: u32, kv_count: u64) -> Gguf {
            let mut b = MAGIC.to_vec();
            b.extend(version.to_le_bytes());
            b.extend(0u64.to_le_bytes());
            b.extend(kv_count.to_le_bytes());
            Gguf(b)
        }
        fn string(mut self, s: &str) -> Gguf {
            self.0.extend((s.len() as u64).to_le_bytes());
            self.0.extend(s.as_bytes());
            self
        }
        fn u32(mut self, v: u32) -> Gguf {
            self.0.extend(v.to_le_bytes());
            self
        }
        fn u64(mut self, v: u64) -> Gguf {
            self.0.extend(v.to_le_bytes());
            self
        }
        fn bytes(mut self, b: &[u8]) -> Gguf {
            self.0.extend(b);
            self
        }
        fn read(&self) -> Result<GgufMetadata, String> {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let path = dir.path().join("m.gguf");
            std::fs::write(&path, &self.0).map_err(|e| e.to_string())?;
            read_metadata(&path)
                .map_err(|e| e.to_string().replace(&path.display().to_string(), "FILE"))
        }
    }

    #[test]
    fn reads_every_value_type() {
        let file = Gguf::new(3, 9)
            .string("a.u8")
            .u32(0)
            .bytes(&[200])
            .string("a.i8")
            .u32(1)
            .bytes(&[0xff])
            .string("a.u16")
            .u32(2)
            .bytes(&[1, 1])
            .string("a.i32")
            .u32(5)
            .bytes(&(-7i32).to_le_bytes())
            .string("a.f32")
            .u32(6)
            .bytes(&1.5f32.to_le_bytes())
            .string("a.bool")
            .u32(7)
            .bytes(&[1])
            .string("a.str")
            .u32(8)
            .string("héllo 🦀")
            .string("a.arr")
            .u32(9)
            .u32(8)
            .u64(2)
            .string("x")
            .string("")
            .string("a.f64")
            .u32(12)
            .bytes(&(-0.25f64).to_le_bytes());
        let meta = file.read().expect("parses");
        let expect = [
            ("a.u8", GgufValue::U64(200)),
            ("a.i8", GgufValue::I64(-1)),
            ("a.u16", GgufValue::U64(257)),
            ("a.i32", GgufValue::I64(-7)),
            ("a.f32", GgufValue::F64(1.5)),
            ("a.bool", GgufValue::Bool(true)),
            ("a.str", GgufValue::String("héllo 🦀".into())),
            (
                "a.arr",
                GgufValue::Array(vec![
                    GgufValue::String("x".into()),
                    GgufValue::String("".into()),
                ]),
            ),
            ("a.f64", GgufValue::F64(-0.25)),
        ];
        assert_eq!(
            meta,
            expect
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        );
    }

    #[test]
    fn corrupt_files_are_clear_errors_without_huge_allocations() {
        let cases = [
            (
                Gguf(b"GGUF".to_vec()),
                "FILE: not a GGUF file: 4 bytes is too short",
            ),
            (Gguf::new(3, 0).bytes(b"").u64(0), ""),
            (
                Gguf(b"GGML".iter().copied().chain([0; 20]).collect()),
                "FILE: not a GGUF file: magic [47, 47, 4d, 4c] is not \"GGUF\"",
            ),
            (
                Gguf::new(1, 0),
                "FILE: not a GGUF file: GGUF version 1 is not supported",
            ),
            (
                Gguf::new(3u32.swap_bytes(), 0),
                "FILE: not a GGUF file: big-endian GGUF is not supported",
            ),
            (
                Gguf::new(3, 1).string("k").u32(8).u64(u64::MAX),
                "FILE: metadata key `k`: needs 18446744073709551615 bytes but the file has 0 left (truncated or corrupt)",
            ),
            (
                Gguf::new(3, 1).string("tokens").u32(9).u32(8).u64(1 << 40),
                "FILE: metadata key `tokens`: array of 1099511627776 items cannot fit in the 0 bytes left",
            ),
            (
                Gguf::new(3, 1).string("k").u32(13),
                "FILE: metadata key `k`: unknown value type 13",
            ),
            (
                Gguf::new(3, 2).string("k").u32(7).bytes(&[1]),
                "FILE: metadata key `(a key)`: needs 8 bytes but the file has 0 left (truncated or corrupt)",
            ),
            (
                Gguf::new(3, 1).string("k").u32(7).bytes(&[2]),
                "FILE: metadata key `k`: bool byte 2 is neither 0 nor 1",
            ),
        ];
        for (file, expect) in cases {
            let got = match file.read() {
                Ok(meta) if meta.is_empty() => String::new(),
                Ok(meta) => format!("{meta:?}"),
                Err(e) => e,
            };
            assert_eq!(got, expect);
        }
    }
}
