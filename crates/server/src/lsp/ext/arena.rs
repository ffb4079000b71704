//! The arena's commands, typed: a battle's vote, the reveal of the last one, and the arena's part
//! of `crossfile.status` (see `docs/lsp-extensions.md`, kept in step with this file too).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::Command;

/// `crossfile.arenaVote`: the user's choice in an arena battle (the `command` of a battle's
/// inline items).
pub enum ArenaVote {}

impl Command for ArenaVote {
    const NAME: &'static str = "crossfile.arenaVote";
    type Params = ArenaVoteParams;
    type Result = ArenaVoteResult;
}

/// `crossfile.arenaReveal`: the last battle decided in this session, its arms named (no
/// argument).
pub enum ArenaReveal {}

impl Command for ArenaReveal {
    const NAME: &'static str = "crossfile.arenaReveal";
    type Params = Option<serde_json::Value>;
    type Result = ArenaRevealResult;
}

/// `crossfile.arenaVote`'s arguments.
#[derive(Debug, Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(optional_fields = nullable)]
pub struct ArenaVoteParams {
    /// The battle's id, from its items' command.
    pub battle: u64,
    /// 1 or 2: the suggestion shown first or second was accepted; null: none was (dismissed).
    pub pick: Option<u8>,
}

/// `crossfile.arenaVote`'s answer.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ArenaVoteResult {
    /// False when the battle was no longer pending (voted, or superseded as no choice).
    pub recorded: bool,
    /// The votes file.
    pub votes: PathBuf,
}

/// A decided battle with its arms revealed, in the order shown: `arms[0]` made suggestion 1.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ArenaRevealResult {
    /// The battle's id (as its items' command named it).
    pub battle: u64,
    /// The votes file the vote was written to.
    pub votes: PathBuf,
    pub arms: [String; 2],
    /// 1 or 2; null: no choice.
    pub picked: Option<u8>,
    pub texts: [String; 2],
    pub latency_ms: [f64; 2],
    /// At a replayed case: its id and each suggestion's metrics.
    pub case_id: Option<String>,
    pub metrics: Option<[BTreeMap<String, f64>; 2]>,
    pub path: String,
    /// 1-based.
    pub line: u64,
    pub col: u64,
}

/// The arena of the folders that have it on.
#[derive(Debug, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ArenaStatus {
    /// Each arm's spec, as votes name it.
    pub arms: Vec<String>,
    pub votes: PathBuf,
    /// The seed of the pair draws (the settings' or the session's).
    pub seed: u64,
    /// Battles shown, votes written, arms failed and battles not shown for a blank suggestion,
    /// in this session.
    pub battles: u64,
    pub recorded: u64,
    pub failed: u64,
    pub blank: u64,
}
