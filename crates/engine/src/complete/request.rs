//! The backend request a completer makes for a prompt, and its answer held to the request's
//! token budget.

use super::{Completer, Mode};
use crate::backend::{FimChunk, FimParts, GenerateRequest, Generation};
use crate::postprocess::Unit;
use crate::prompt::{Prompt, Template};
use crate::retrieve::Hit;

impl Completer {
    /// The backend request for a prompt: the template's text, FIM parts for servers with a
    /// native infill route, and a newline stop when only a line is wanted.
    pub(super) fn request(&self, prompt: &Prompt, hits: &[Hit]) -> GenerateRequest {
        let fim = (self.template != Template::Plain).then(|| FimParts {
            prefix: prompt.left.clone(),
            suffix: prompt.right.clone(),
            chunks: hits
                .iter()
                .take(prompt.hits_used)
                .map(|hit| FimChunk {
                    filename: hit.path.clone(),
                    text: hit.text.clone(),
                })
                .collect(),
        });
        let stop = if self.unit == Unit::Line {
            vec!["\n".to_string()]
        } else {
            Vec::new()
        };
        // An exact answer reads its prompt whole and decodes to the end; a live one may do
        // neither, and is never sampled or measured.
        let (reuse_kv, max_generate_ms, sampling, likelihood_of) = match &self.mode {
            Mode::Exact(exact) => (false, None, exact.sampling, exact.likelihood_of.clone()),
            Mode::Live(live) => (live.reuse_kv, live.max_generate_ms, None, None),
        };
        GenerateRequest {
            prompt: prompt.text.clone(),
            fim,
            max_tokens: self.budget.max_new_tokens,
            stop,
            may_start_below: false,
            reuse_kv,
            max_generate_ms,
            fallback: None,
            read_ahead: None,
            sampling,
            likelihood_of,
        }
    }
}

/// More bytes than any token of any vocabulary holds: an answer longer than `max_new_tokens` of
/// them is not what was asked for, whatever the server says.
pub(super) const MAX_TOKEN_BYTES: usize = 256;

/// `generation` with its text cut (at a character boundary) to what `max_new_tokens` tokens can
/// be, so a misbehaving server cannot hand back megabytes as a suggestion.
pub(super) fn bound_to_budget(mut generation: Generation, max_new_tokens: u32) -> Generation {
    let limit = (max_new_tokens as usize).max(1) * MAX_TOKEN_BYTES;
    if generation.text.len() > limit {
        let mut end = limit;
        while !generation.text.is_char_boundary(end) {
            end -= 1;
        }
        tracing::warn!(
            bytes = generation.text.len(),
            max_new_tokens,
            "the backend answered more than {max_new_tokens} tokens can be; cut to {end} bytes"
        );
        generation.text.truncate(end);
    }
    generation
}
