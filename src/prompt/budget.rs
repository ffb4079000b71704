//! Fitting a prompt to its token budget.

use super::Template;
use super::block::{Chunk, Cut, render};
use crate::lang::Language;
use crate::retrieve::Hit;
use crate::tokenize::Tokenizer;

/// Token budgets of one prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The model's context size (`model.n_ctx`).
    pub context_tokens: u32,
    /// Tokens reserved for generation (`prompt.max_new_tokens`).
    pub max_new_tokens: u32,
    /// At most this many tokens of cross-file block (`prompt.crossfile_tokens`; CrossCodeEval 512).
    pub crossfile_tokens: u32,
}

/// What a prompt is built from.
#[derive(Clone, Debug)]
pub struct PromptInput<'a> {
    /// The language of the file (the cross-file block's comment syntax).
    pub language: Language,
    /// The file's text before the cursor.
    pub left: &'a str,
    /// The file's text after the cursor (used by FIM templates only).
    pub right: &'a str,
    /// Retrieved chunks, best first.
    pub hits: &'a [Hit],
}

/// Token counts of each part of a built prompt, with the model's tokenizer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PromptTokens {
    /// The cross-file block as kept, tokenized alone.
    pub crossfile: u32,
    /// The left context as kept, tokenized alone.
    pub left: u32,
    /// The right context as kept, tokenized alone (0 for `Plain`).
    pub right: u32,
    /// The whole prompt text, special tokens included, tokenized as one string.
    pub total: u32,
}

/// A prompt ready for a backend.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// The full text sent to the model.
    pub text: String,
    /// The layout of `text`.
    pub template: Template,
    /// The parts as they were kept: the cross-file block (cut to its budget), the left context
    /// (cut from the left) and the right context (cut from the right; empty for `Plain`).
    pub crossfile: String,
    /// The left context as kept (a suffix of the input's).
    pub left: String,
    /// The right context as kept (a prefix of the input's).
    pub right: String,
    /// How many of the hits are in the cross-file block (whole or cut).
    pub hits_used: usize,
    /// Token counts of the parts and of the whole text.
    pub tokens: PromptTokens,
}

/// Builds a prompt: the cross-file block cut to its budget by whole chunks, then by lines, from
/// the end; the left context cut from the left to fill the rest; for FIM templates the right
/// context takes at most a quarter of what is left, cut from the right. The whole prompt never
/// exceeds `context_tokens - max_new_tokens` tokens by the model's tokenizer.
///
/// In order, with `limit = context_tokens - max_new_tokens` and `overhead` the tokens of the
/// template with empty parts:
/// 1. the cross-file block gets at most `min(crossfile_tokens, limit - overhead)` tokens: the
///    lowest-ranked chunks go first, then lines from the end of the last chunk kept (a chunk
///    with no line left goes with its header; no chunk, no block);
/// 2. of `rest = limit - overhead - block`, a FIM template's right context gets at most
///    `rest / 4`: whole lines from its start, then the head of the next line at a token
///    boundary;
/// 3. the left context fills `rest - right`: whole lines from its end, then the tail of the
///    line before them, cut at a token boundary (never inside a character);
/// 4. the whole text is tokenized; tokens can merge or split where the parts join, so while it
///    is over `limit` the left context, then the right, then the block give up the excess.
///
/// If even the template alone is over `limit`, the text is empty. Token counts are the
/// tokenizer's, each part counted alone and `total` the whole text.
pub fn build(
    input: &PromptInput<'_>,
    template: Template,
    tokenizer: &dyn Tokenizer,
    budget: Budget,
) -> Prompt {
    let limit = as_usize(budget.context_tokens.saturating_sub(budget.max_new_tokens));
    let overhead = tokenizer.count(&template.render("", ""));
    let room = limit.saturating_sub(overhead);
    let comment = input.language.comment_prefix();
    let chunks: Vec<Chunk<'_>> = input.hits.iter().map(Chunk::new).collect();
    let cuts = Cut::all_descending(&chunks);
    let mut block = fit_block(
        comment,
        &chunks,
        &cuts,
        0,
        as_usize(budget.crossfile_tokens).min(room),
        tokenizer,
    );
    let rest = room.saturating_sub(block.tokens);
    let mut right = if template.is_fim() {
        head_within(input.right, rest / 4, tokenizer)
    } else {
        ""
    };
    let mut right_tokens = tokenizer.count(right);
    let mut left = tail_within(input.left, rest.saturating_sub(right_tokens), tokenizer);
    let mut left_tokens = tokenizer.count(left);
    let (text, total) = loop {
        let prefix = [block.text.as_str(), left].concat();
        let text = template.render(&prefix, right);
        let total = tokenizer.count(&text);
        let Some(excess) = total.checked_sub(limit).filter(|&e| e > 0) else {
            break (text, total);
        };
        if !left.is_empty() {
            left = tail_within(left, left_tokens.saturating_sub(excess), tokenizer);
            left_tokens = tokenizer.count(left);
        } else if !right.is_empty() {
            right = head_within(right, right_tokens.saturating_sub(excess), tokenizer);
            right_tokens = tokenizer.count(right);
        } else if !block.text.is_empty() {
            let smaller = block.tokens.saturating_sub(excess);
            block = fit_block(comment, &chunks, &cuts, block.at + 1, smaller, tokenizer);
        } else {
            // Not even the template fits.
            break (String::new(), 0);
        }
    };
    Prompt {
        text,
        template,
        hits_used: cuts.get(block.at).map_or(0, |cut| cut.hits_used()),
        tokens: PromptTokens {
            crossfile: as_u32(block.tokens),
            left: as_u32(left_tokens),
            right: as_u32(right_tokens),
            total: as_u32(total),
        },
        crossfile: block.text,
        left: left.to_string(),
        right: right.to_string(),
    }
}

/// A cross-file block as cut: which of the cuts, its text and its tokens.
struct Block {
    at: usize,
    text: String,
    tokens: usize,
}

/// The largest of `cuts[from..]` (they run from largest to smallest) whose block fits `budget`.
fn fit_block(
    comment: &str,
    chunks: &[Chunk<'_>],
    cuts: &[Cut],
    from: usize,
    budget: usize,
    tokenizer: &dyn Tokenizer,
) -> Block {
    let candidates = cuts.get(from..).unwrap_or_default();
    let mut tokens = vec![None; candidates.len()];
    let found = first_fitting(candidates.len(), |i| {
        let count = tokenizer.count(&render(comment, chunks, candidates[i]));
        tokens[i] = Some(count);
        count <= budget
    });
    match (candidates.get(found), tokens.get(found).copied().flatten()) {
        (Some(&cut), Some(tokens)) => Block {
            at: from + found,
            text: render(comment, chunks, cut),
            tokens,
        },
        _ => Block {
            at: cuts.len(),
            text: String::new(),
            tokens: 0,
        },
    }
}

/// How many token positions are tried for a cut at a token boundary before falling back to
/// character boundaries.
const TOKEN_TRIES: usize = 8;

/// The longest suffix of `text` within `budget` tokens: whole lines, then the tail of the line
/// before them at a token boundary.
fn tail_within<'t>(text: &'t str, budget: usize, tokenizer: &dyn Tokenizer) -> &'t str {
    if budget == 0 {
        return "";
    }
    let fits = |from: usize| tokenizer.count(&text[from..]) <= budget;
    // Where each suffix of whole lines starts, longest first.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let k = first_fitting(starts.len(), |k| fits(starts[k]));
    if k == 0 {
        return text;
    }
    // `text[line..whole]` is the line that did not fit whole.
    let whole = starts.get(k).copied().unwrap_or(text.len());
    let line = starts[k - 1];
    let room = budget.saturating_sub(tokenizer.count(&text[whole..]));
    if room == 0 {
        return &text[whole..];
    }
    let piece = &text[line..whole];
    let ids = tokenizer.encode(piece);
    for keep in (1..=room.min(ids.len())).rev().take(TOKEN_TRIES) {
        let tail = tokenizer.decode(&ids[ids.len() - keep..]);
        if !tail.is_empty() && piece.ends_with(&tail) && fits(whole - tail.len()) {
            return &text[whole - tail.len()..];
        }
    }
    let bounds: Vec<usize> = piece.char_indices().map(|(at, _)| line + at).collect();
    let k = first_fitting(bounds.len(), |k| fits(bounds[k]));
    &text[bounds.get(k).copied().unwrap_or(whole)..]
}

/// The longest prefix of `text` within `budget` tokens: whole lines, then the head of the next
/// line at a token boundary.
fn head_within<'t>(text: &'t str, budget: usize, tokenizer: &dyn Tokenizer) -> &'t str {
    if budget == 0 {
        return "";
    }
    let fits = |to: usize| tokenizer.count(&text[..to]) <= budget;
    // Where each prefix of whole lines ends, longest first.
    let ends: Vec<usize> = std::iter::once(text.len())
        .chain(
            text.match_indices('\n')
                .rev()
                .map(|(at, _)| at + 1)
                .filter(|&end| end < text.len()),
        )
        .collect();
    let k = first_fitting(ends.len(), |k| fits(ends[k]));
    if k == 0 {
        return text;
    }
    // `text[whole..line]` is the line that did not fit whole.
    let whole = ends.get(k).copied().unwrap_or(0);
    let line = ends[k - 1];
    let room = budget.saturating_sub(tokenizer.count(&text[..whole]));
    if room == 0 {
        return &text[..whole];
    }
    let piece = &text[whole..line];
    let ids = tokenizer.encode(piece);
    for keep in (1..=room.min(ids.len())).rev().take(TOKEN_TRIES) {
        let head = tokenizer.decode(&ids[..keep]);
        if !head.is_empty() && piece.starts_with(&head) && fits(whole + head.len()) {
            return &text[..whole + head.len()];
        }
    }
    let bounds: Vec<usize> = piece
        .char_indices()
        .rev()
        .map(|(at, c)| whole + at + c.len_utf8())
        .collect();
    let k = first_fitting(bounds.len(), |k| fits(bounds[k]));
    &text[..bounds.get(k).copied().unwrap_or(whole)]
}

/// The first index in `0..n` where `fits` holds, for a `fits` that fails up to some index and
/// holds from there on; `n` if it holds nowhere. It gallops from the end, so when `fits` costs
/// more for smaller indices (longer texts) the search costs about what the answer costs. Every
/// index returned was tested, so a non-monotone `fits` can cost optimality, never correctness.
fn first_fitting(n: usize, mut fits: impl FnMut(usize) -> bool) -> usize {
    let Some(mut hi) = n.checked_sub(1) else {
        return 0;
    };
    if !fits(hi) {
        return n;
    }
    let mut step = 1;
    let mut lo = loop {
        if hi == 0 {
            return 0;
        }
        let probe = hi.saturating_sub(step);
        if !fits(probe) {
            break probe;
        }
        hi = probe;
        step *= 2;
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

fn as_usize(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn as_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
