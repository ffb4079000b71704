//! The votes file: one battle per JSON line, appended atomically under a lock shared across
//! processes, read back with each bad line named and skipped.
//!
//! The line's shape is a published format (docs/arena.md), version [`VOTES_VERSION`]; other
//! tools read it, so fields are only ever added.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The format version every line carries.
pub const VOTES_VERSION: u32 = 1;

/// One battle: two arms' suggestions shown blind at a cursor, and what the user chose.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vote {
    pub version: u32,
    /// When the battle was shown, RFC 3339 in UTC.
    pub time: String,
    /// The workspace folder's name.
    pub workspace: String,
    /// The file, relative to the workspace root, `/`-separated.
    pub path: String,
    /// The cursor, 1-based; the column in characters.
    pub line: u64,
    pub col: u64,
    pub language: Option<String>,
    /// The two arms, each as its spec string (a retriever spec, or a settings table's canonical
    /// form).
    pub arms: [String; 2],
    /// The index in `arms` of the suggestion shown first.
    pub first: u8,
    /// The index in `arms` of the suggestion accepted; `None` when none was.
    pub choice: Option<u8>,
    pub texts: [String; 2],
    pub latency_ms: [f64; 2],
    /// From the battle shown to the choice (or the dismissal).
    pub choice_ms: Option<f64>,
    /// Each arm's resolved settings, hashed: two battles of the same arm spec under different
    /// settings are told apart.
    pub settings_hash: [String; 2],
    /// At a replayed benchmark case: its id, and each suggestion's metrics against the reference.
    #[serde(default)]
    pub case_id: Option<String>,
    #[serde(default)]
    pub metrics: Option<[BTreeMap<String, f64>; 2]>,
    /// How an editor's battle was drawn (absent from simulated votes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw: Option<super::battle::Draw>,
}

impl Vote {
    /// The arm accepted, as an index in `arms`, and the other.
    pub fn winner_loser(&self) -> Option<(usize, usize)> {
        let choice = usize::from(self.choice?);
        Some((choice, 1 - choice))
    }
}

/// Why a vote was not written or a votes file not read.
#[derive(Debug, thiserror::Error)]
pub enum VoteError {
    #[error("{}: cannot write the vote: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: cannot read: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the vote is not valid: {0}")]
    Invalid(String),
}

/// Appends `vote` to the file at `path` (made, with its folder, when missing) as one line. The
/// file is locked while the line is written, so votes from several editors at once interleave
/// whole; a reader never sees half a line but the one a killed writer may leave last.
pub fn append(path: &Path, vote: &Vote) -> Result<(), VoteError> {
    check(vote).map_err(VoteError::Invalid)?;
    let write = |error| VoteError::Write {
        path: path.to_path_buf(),
        error,
    };
    let mut line =
        serde_json::to_vec(vote).map_err(|e| VoteError::Invalid(format!("not JSON: {e}")))?;
    line.push(b'\n');
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(write)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(write)?;
    file.lock().map_err(write)?;
    let written = file.write_all(&line).and_then(|()| file.flush());
    let _ = file.unlock();
    written.map_err(write)
}

/// A votes file, read: the votes of its good lines, in order, and one warning per line skipped.
#[derive(Debug, Default)]
pub struct Votes {
    pub votes: Vec<Vote>,
    pub skipped: Vec<String>,
}

/// Reads the votes at `path`. A line that is not a valid vote is skipped with a warning naming
/// the file, the 1-based line and the field.
pub fn read(path: &Path) -> Result<Votes, VoteError> {
    let text = std::fs::read_to_string(path).map_err(|error| VoteError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(parse(path, &text))
}

/// [`read`] on text already read; `path` names it in warnings.
pub fn parse(path: &Path, text: &str) -> Votes {
    let mut out = Votes::default();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), n + 1);
        let mut json = serde_json::Deserializer::from_str(line);
        match serde_path_to_error::deserialize::<_, Vote>(&mut json) {
            Err(e) => out.skipped.push(format!(
                "{at}: field `{}`: {}; skipped",
                e.path(),
                e.inner()
            )),
            Ok(vote) => match check(&vote) {
                Err(message) => out.skipped.push(format!("{at}: {message}; skipped")),
                Ok(()) => out.votes.push(vote),
            },
        }
    }
    out
}

/// What the types cannot say: the version, the indices, two different arms, finite times.
fn check(vote: &Vote) -> Result<(), String> {
    if vote.version != VOTES_VERSION {
        return Err(format!(
            "field `version`: {} is not a votes format this crossfile reads (it reads {VOTES_VERSION})",
            vote.version
        ));
    }
    if vote.first > 1 {
        return Err(format!("field `first`: {} is not 0 or 1", vote.first));
    }
    if let Some(choice) = vote.choice.filter(|&c| c > 1) {
        return Err(format!("field `choice`: {choice} is not 0, 1 or null"));
    }
    if vote.arms[0] == vote.arms[1] {
        return Err(format!("field `arms`: both arms are {:?}", vote.arms[0]));
    }
    let times = vote.latency_ms.iter().chain(vote.choice_ms.iter());
    if times.into_iter().any(|t| !t.is_finite() || *t < 0.0) {
        return Err("field `latency_ms` or `choice_ms`: not a finite, non-negative time".into());
    }
    Ok(())
}

/// Now, in RFC 3339 (UTC), as `time` records it.
pub fn now() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A battle between `a` and `b`, `first` shown first, `choice` accepted.
    pub(crate) fn battle(a: &str, b: &str, first: u8, choice: Option<u8>) -> Vote {
        Vote {
            version: VOTES_VERSION,
            time: now(),
            workspace: "click".into(),
            path: "src/click/core.py".into(),
            line: 1275,
            col: 19,
            language: Some("python".into()),
            arms: [a.into(), b.into()],
            first,
            choice,
            texts: ["write_usage(".into(), "format_usage(".into()],
            latency_ms: [120.0, 340.0],
            choice_ms: Some(900.0),
            settings_hash: ["0".repeat(16), "1".repeat(16)],
            case_id: None,
            metrics: None,
            draw: None,
        }
    }

    #[test]
    fn appended_votes_read_back_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("data/votes.jsonl");
        let votes = [
            battle("bm25", "none", 0, Some(1)),
            battle("none", "bm25", 1, None),
        ];
        for vote in &votes {
            append(&path, vote).expect("append");
        }
        let read = read(&path).expect("read");
        assert_eq!(read.votes, votes);
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        assert!(now().ends_with('Z') && now().len() == 20, "{}", now());
    }

    #[test]
    fn bad_lines_are_named_and_skipped() {
        let good = serde_json::to_string(&battle("bm25", "none", 0, Some(0))).expect("json");
        let two = good.replace("\"choice\":0", "\"choice\":2");
        let same = good.replace("\"none\"", "\"bm25\"");
        let typed = good.replace("\"line\":1275", "\"line\":\"x\"");
        let text = format!("{good}\n\n{two}\n{same}\n{typed}\n{{\"version\": 1\n");
        let votes = parse(Path::new("votes.jsonl"), &text);
        assert_eq!(votes.votes.len(), 1);
        let skipped = votes.skipped.join("\n");
        assert_eq!(votes.skipped.len(), 4, "{skipped}");
        assert!(
            skipped.contains("votes.jsonl:3: field `choice`: 2"),
            "{skipped}"
        );
        assert!(skipped.contains("votes.jsonl:4: field `arms`"), "{skipped}");
        assert!(skipped.contains("votes.jsonl:5: field `line`"), "{skipped}");
        assert!(skipped.contains("votes.jsonl:6:"), "{skipped}");
        assert!(
            append(Path::new("unused"), &battle("a", "a", 0, None)).is_err(),
            "a vote between one arm is refused"
        );
    }

    #[test]
    fn writers_in_many_threads_lose_no_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("votes.jsonl");
        std::thread::scope(|scope| {
            for t in 0..8 {
                let path = &path;
                scope.spawn(move || {
                    for i in 0..50 {
                        let mut vote = battle("bm25", "none", 0, Some(0));
                        vote.texts[0] = format!("{t}-{i}-{}", "x".repeat(5000));
                        append(path, &vote).expect("append");
                    }
                });
            }
        });
        let read = read(&path).expect("read");
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        assert_eq!(read.votes.len(), 400);
    }
}
