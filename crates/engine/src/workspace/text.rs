//! Reading a source file as text, the way CrossCodeEval's scripts read it.

use std::path::Path;

use super::{WorkspaceError, discover::is_binary};

/// A decoded file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceText {
    pub text: String,
    /// The bytes were not valid UTF-8 and were decoded with U+FFFD replacement.
    pub lossy: bool,
}

/// Decodes file bytes: UTF-8 text has CRLF and lone CR turned into LF (Python's universal
/// newlines, and the LSP's line breaks); other bytes are decoded with U+FFFD replacement and
/// their line ends left alone, as CrossCodeEval's retrieval reads them. A BOM is kept.
pub fn decode(bytes: &[u8]) -> SourceText {
    match std::str::from_utf8(bytes) {
        Ok(text) => SourceText {
            text: normalize_newlines(text).into_owned(),
            lossy: false,
        },
        Err(_) => SourceText {
            text: String::from_utf8_lossy(bytes).into_owned(),
            lossy: true,
        },
    }
}

/// Reads and decodes a source file, refusing binary files and files over `max_bytes`.
pub fn read_source(path: &Path, max_bytes: u64) -> Result<SourceText, WorkspaceError> {
    let read_err = |error| WorkspaceError::Read {
        path: path.into(),
        error,
    };
    let metadata = std::fs::metadata(path).map_err(read_err)?;
    if !metadata.is_file() {
        return Err(WorkspaceError::NotARegularFile { path: path.into() });
    }
    let size = metadata.len();
    if size > max_bytes {
        return Err(WorkspaceError::TooLarge {
            path: path.into(),
            size,
            limit: max_bytes,
        });
    }
    let bytes = std::fs::read(path).map_err(read_err)?;
    if is_binary(&bytes) {
        return Err(WorkspaceError::Binary { path: path.into() });
    }
    Ok(decode(&bytes))
}

/// Turns `\r\n` and lone `\r` line breaks (Python's universal newlines; the LSP's breaks) into
/// `\n`. Line numbers stay the same, and columns within a line are untouched; a text without `\r`
/// is borrowed.
pub fn normalize_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_follows_python_text_mode() {
        let cases: &[(&[u8], &str, bool)] = &[
            (b"", "", false),
            (b"a\r\nb\rc\n", "a\nb\nc\n", false),
            ("\u{feff}x\r\n".as_bytes(), "\u{feff}x\n", false),
            (b"caf\xe9\r\n", "caf\u{fffd}\r\n", true),
            ("é🎉\n".as_bytes(), "é🎉\n", false),
        ];
        for (bytes, text, lossy) in cases {
            let got = decode(bytes);
            assert_eq!(
                (got.text.as_str(), got.lossy),
                (*text, *lossy),
                "decode({bytes:?})"
            );
        }
    }

    #[test]
    fn line_breaks_become_newlines() {
        assert_eq!(normalize_newlines("a\r\nb\rc\nd"), "a\nb\nc\nd");
        assert_eq!(normalize_newlines("\r\r\n"), "\n\n");
        assert!(matches!(
            normalize_newlines("plain\n"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
