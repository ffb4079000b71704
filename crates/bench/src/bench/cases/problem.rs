//! What is wrong with a record: [`CaseProblem`] names the file, the line and the dotted field,
//! and the checks every benchmark's loader shares (a record parsed with the path of the field
//! that failed, paths that cannot leave their repository).

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// A record that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseProblem {
    pub file: PathBuf,
    /// 1-based line in the file.
    pub line: usize,
    /// The dotted field (`metadata.file`), or `.` for the record as a whole.
    pub field: String,
    pub message: String,
}

impl fmt::Display for CaseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.field,
            self.message
        )
    }
}

/// `(dotted field, message)` of a bad record.
pub(crate) type RecordError = (String, String);

pub(crate) fn parse_record<T: serde::de::DeserializeOwned>(line: &str) -> Result<T, RecordError> {
    let mut de = serde_json::Deserializer::from_str(line);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        // A truncated line or a syntax error is about the record, not a field.
        let message = inner.to_string();
        // serde names a missing field in its message, at the path of the object that lacks it.
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next());
        let field = if inner.is_syntax() || inner.is_eof() {
            ".".to_string()
        } else {
            match (missing, field.as_str()) {
                (Some(name), "" | ".") => name.to_string(),
                (Some(name), parent) => format!("{parent}.{name}"),
                (None, "") => ".".to_string(),
                (None, _) => field,
            }
        };
        (field, message)
    })
}

pub(super) fn bad(field: &str, message: impl Into<String>) -> RecordError {
    (field.to_string(), message.into())
}

/// One path component: not empty, not `.` or `..`, no separator.
pub(crate) fn checked_component(part: &str) -> Result<String, String> {
    if part.is_empty() || part == "." || part == ".." || part.contains(['/', '\\', '\0']) {
        return Err(format!("{part:?} is not a single path component"));
    }
    Ok(part.to_string())
}

/// A relative `/`-separated path that cannot leave the directory it is joined to.
pub(crate) fn checked_relative(path: &str) -> Result<String, String> {
    let p = Path::new(path);
    let normal = !path.is_empty()
        && !path.contains(['\\', '\0'])
        && p.components().all(|c| matches!(c, Component::Normal(_)));
    if !normal {
        return Err(format!(
            "{path:?} must be a relative path inside the repository (no `..`, no root)"
        ));
    }
    Ok(path.to_string())
}
