//! JSON Lines input, line by line: a line that is not UTF-8 is reported by its number and
//! skipped, never the end of the whole file.

use std::collections::HashSet;
use std::path::Path;

use super::problem::{CaseProblem, RecordError};
use crate::bench::BenchError;

/// One non-blank line of a JSON Lines file: its 1-based number and its text, or why it has none.
pub struct Line {
    pub number: usize,
    pub text: Result<String, String>,
}

/// The non-blank lines of `path`. Only an unreadable file is an error.
pub fn read_lines(path: &Path) -> Result<Vec<Line>, BenchError> {
    let bytes = std::fs::read(path).map_err(|error| BenchError::Read {
        path: path.into(),
        error,
    })?;
    Ok(split_lines(&bytes))
}

/// Records of a file and the lines that were skipped.
#[derive(Debug)]
pub struct Loaded<T> {
    pub records: Vec<T>,
    pub problems: Vec<CaseProblem>,
}

/// Every record of `path`: `parse` turns a line's text (and its 1-based number) into a record or
/// a `(field, message)` problem; a record whose `id_of` (field, id) repeats an earlier one's is a
/// problem too (`None`: ids may repeat). Only an unreadable file is an error.
pub fn load_records<T>(
    path: &Path,
    parse: impl Fn(&str, usize) -> Result<T, RecordError>,
    id_of: impl Fn(&T) -> Option<(&str, &str)>,
) -> Result<Loaded<T>, BenchError> {
    let mut loaded = Loaded {
        records: Vec::new(),
        problems: Vec::new(),
    };
    let mut seen = HashSet::new();
    for line in read_lines(path)? {
        let problem = |(field, message): RecordError| CaseProblem {
            file: path.into(),
            line: line.number,
            field,
            message,
        };
        let parsed = line
            .text
            .clone()
            .map_err(|m| (".".to_string(), m))
            .and_then(|text| parse(&text, line.number));
        match parsed {
            Ok(record) => match id_of(&record) {
                Some((field, id)) if !seen.insert(id.to_string()) => {
                    loaded.problems.push(problem((
                        field.to_string(),
                        format!("{id:?} repeats an earlier record"),
                    )))
                }
                _ => loaded.records.push(record),
            },
            Err(e) => loaded.problems.push(problem(e)),
        }
    }
    Ok(loaded)
}

fn split_lines(bytes: &[u8]) -> Vec<Line> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .map(|(i, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            Line {
                number: i + 1,
                text: std::str::from_utf8(line)
                    .map(str::to_string)
                    .map_err(|e| format!("not UTF-8 (byte {} of the line)", e.valid_up_to() + 1)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_byte_costs_its_line_only() {
        let lines = split_lines(b"{\"a\":1}\n\n{\"b\":\xff}\r\n  \n{\"c\":3}");
        let got: Vec<(usize, Result<String, String>)> =
            lines.into_iter().map(|l| (l.number, l.text)).collect();
        assert_eq!(
            got,
            [
                (1, Ok("{\"a\":1}".to_string())),
                (3, Err("not UTF-8 (byte 6 of the line)".to_string())),
                (5, Ok("{\"c\":3}".to_string())),
            ]
        );
    }
}
