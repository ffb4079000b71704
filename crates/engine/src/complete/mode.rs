//! The two configurations a completer answers in: **exact**, what a benchmark scores (the
//! protocol's prompt read whole, decoded to its end), and **live**, what an editor shows while
//! the user types (prompts that stay the same from keystroke to keystroke over a kept KV cache, a
//! decoding time budget, the next line at a finished line's end).
//!
//! Invariant: an exact answer depends on the settings, the case and the model alone — no kept
//! cache, no clock and no earlier completion changes it — because nothing in [`Exact`] can say
//! otherwise.

use std::sync::Arc;

use super::SteadyBlocks;
use crate::backend::Sampling;

/// How a completer answers.
#[derive(Clone, Debug)]
pub enum Mode {
    Exact(Exact),
    Live(Live),
}

impl Default for Mode {
    fn default() -> Mode {
        Mode::Exact(Exact::default())
    }
}

/// An exact answer: the prompt laid out as the benchmarks lay it out, read whole (no reused KV
/// cache), decoded to the end (no time budget), the cursor's own line completed (no next line).
#[derive(Clone, Debug, Default)]
pub struct Exact {
    /// Sampling settings (one sample of a case, with its own seed); `None`: greedy.
    pub sampling: Option<Sampling>,
    /// A text whose likelihood as the answer is measured beside it (a case's reference,
    /// [`crate::backend::GenerateRequest::likelihood_of`]).
    pub likelihood_of: Option<String>,
}

/// A live answer, made while the user types. At the end of a finished line, where the model
/// goes on with a line break, the suggestion is the next line: from the same answer where the
/// backend lets it start below ([`crate::backend::GenerateRequest::may_start_below`]), or asked
/// again after the line break where its answer is empty.
#[derive(Clone, Debug)]
pub struct Live {
    /// Whether the backend may reuse a kept KV cache
    /// ([`crate::backend::GenerateRequest::reuse_kv`]).
    pub reuse_kv: bool,
    /// Prompts laid out to stay the same while the user types; `None`: laid out as exact
    /// prompts, each retriever's own ranking (retrievers side by side).
    pub steady: Option<Steady>,
    /// The decoding time budget in milliseconds
    /// ([`crate::backend::GenerateRequest::max_generate_ms`]); `None`: no limit (an answer
    /// nobody waits for).
    pub max_generate_ms: Option<u64>,
    /// Whether the backend may answer from the last answer's layout while it reads a changed
    /// prompt ([`crate::backend::GenerateRequest::fallback`]); off for the answer that replaces
    /// such an answer.
    pub fallback: bool,
}

impl Live {
    /// What the language server uses: steady prompts over a kept KV cache with `right_lines`
    /// lines below the cursor's line, or (`reuse_kv` off) exact prompts read whole; decoding
    /// stopped after `max_generate_ms` (0: no limit).
    pub fn typing(reuse_kv: bool, right_lines: Option<usize>, max_generate_ms: u64) -> Live {
        Live {
            reuse_kv,
            steady: reuse_kv.then(|| Steady::new(right_lines)),
            max_generate_ms: (max_generate_ms > 0).then_some(max_generate_ms),
            fallback: true,
        }
    }
}

/// Live prompts that stay the same while the user types ([`crate::prompt::Layout::Steady`]):
/// retrieval at the start of the cursor's line, so the chunks change from line to line, not at
/// each keystroke; each file's last cross-file block kept in its order while retrieval still
/// ranks its chunks best ([`SteadyBlocks`]); a short right context.
#[derive(Clone, Debug, Default)]
pub struct Steady {
    /// Each file's last block, shared by every clone of the completer.
    pub(super) blocks: Arc<SteadyBlocks>,
    /// The right context: the rest of the cursor's line and this many lines below (`None`: all
    /// the budget allows). What follows the cursor is read again at every keystroke, so a short
    /// right context keeps a fill-in-the-middle prompt's changed tail short.
    pub right_lines: Option<usize>,
}

impl Steady {
    pub fn new(right_lines: Option<usize>) -> Steady {
        Steady {
            blocks: Arc::default(),
            right_lines,
        }
    }
}
