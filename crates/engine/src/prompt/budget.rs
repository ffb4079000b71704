//! Fitting a prompt to its token budget.

use std::collections::HashMap;

use super::block::{Chunk, CrossfileLayout, Cut, render_as};
use super::{PromptInput, Template};
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

/// Token counts of each part of a built prompt, with the model's tokenizer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "typescript", derive(ts_rs::TS))]
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
    /// Everything before the left context that is not the template's own: the cross-file
    /// block, and for the `repo` layout the repository line and the file's header around it.
    /// A server that lays out fill-in-the-middle itself gets `preamble + left` as the prefix.
    pub preamble: String,
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
    build_with(input, template, tokenizer, budget, Layout::Exact)
}

/// How the left context starts when it does not fit whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// As much as fits: the benchmarks' layout ([`build`]).
    Exact,
    /// At the first line past the exact start whose number is a multiple of
    /// [`STEADY_LINE_STEP`]: the start stays put while the user types on, so that consecutive
    /// prompts share a long prefix (live completion). Where no such line comes before the
    /// cursor's line, as [`Layout::Exact`].
    Steady,
    /// Where [`Layout::Steady`] will start next: one step further, if that line comes before
    /// the cursor's line (else as `Steady`). Read ahead, it makes the step find its prompt ready.
    SteadyNext,
    /// At this line (0-based, of the text before the cursor) while it comes before the cursor's
    /// line and the left context from there still fits, else as [`Layout::Steady`]: where the
    /// last answer's prompt started, for an answer at once while a step's prompt is read.
    SteadyFrom(usize),
}

/// The left context of a [`Layout::Steady`] prompt starts at a line whose number is a multiple
/// of this: it moves about once every this many lines typed, and gives up fewer than this many
/// lines of the exact layout's context.
pub const STEADY_LINE_STEP: usize = 32;

/// A [`Layout::Steady`] start is chosen as if the left context had this many tokens less room,
/// so that after a step the last start still fits (as [`Layout::SteadyFrom`]) for about this
/// many tokens typed: a few lines.
pub const STEADY_SLACK_TOKENS: usize = 64;

/// The line (0-based) of `left`, the text before the cursor, at which `kept`, a suffix of it,
/// starts; `None` if `kept` starts inside a line or is not a suffix of `left`.
pub fn start_line(left: &str, kept: &str) -> Option<usize> {
    let cut = left.len().checked_sub(kept.len())?;
    let before = left.get(..cut).filter(|_| left.ends_with(kept))?;
    (before.is_empty() || before.ends_with('\n')).then(|| before.matches('\n').count())
}

/// [`build`] with the left context's start chosen by `layout`.
pub fn build_with(
    input: &PromptInput<'_>,
    template: Template,
    tokenizer: &dyn Tokenizer,
    budget: Budget,
    layout: Layout,
) -> Prompt {
    let limit = as_usize(budget.context_tokens.saturating_sub(budget.max_new_tokens));
    let overhead = tokenizer.count(&input.assemble(template, "", "", ""));
    let room = limit.saturating_sub(overhead);
    let comment = input.language.comment_prefix();
    let chunks: Vec<Chunk<'_>> = input.hits.iter().map(Chunk::new).collect();
    let cuts = Cut::all_descending(&chunks);
    let block_room = as_usize(budget.crossfile_tokens).min(room);
    let style = BlockStyle {
        layout: input.layout,
        comment,
    };
    let mut block = fit_block(style, &chunks, &cuts, 0, block_room, tokenizer);
    // A steady left context gets the room the block would leave if it were full, so where it
    // starts does not depend on which chunks retrieval gave: a prompt with another block has
    // the same left context.
    let rest = match layout {
        Layout::Exact => room.saturating_sub(block.tokens),
        Layout::Steady | Layout::SteadyNext | Layout::SteadyFrom(_) => {
            room.saturating_sub(block_room)
        }
    };
    let mut right = if template.is_fim() {
        head_within(input.right, rest / 4, tokenizer)
    } else {
        Fitted::EMPTY
    };
    let left_room = rest.saturating_sub(right.tokens);
    let mut left = match layout {
        Layout::Exact => tail_within(input.left, left_room, tokenizer),
        Layout::Steady | Layout::SteadyNext | Layout::SteadyFrom(_) => {
            let fitted = tail_within(
                input.left,
                left_room.saturating_sub(STEADY_SLACK_TOKENS),
                tokenizer,
            );
            steady_start(input.left, fitted, 0, tokenizer)
        }
    };
    match layout {
        Layout::Exact | Layout::Steady => {}
        Layout::SteadyNext => {
            let next = steady_start(input.left, left, 1, tokenizer);
            if next.text.len() != input.left.len() {
                left = next;
            }
        }
        Layout::SteadyFrom(line) => {
            if let Some(from) = from_line(input.left, line, tokenizer)
                .filter(|from| from.tokens <= left_room && from.text.len() > left.text.len())
            {
                left = from;
            }
        }
    }
    let (text, total) = loop {
        let text = input.assemble(template, &block.text, left.text, right.text);
        let total = tokenizer.count(&text);
        let Some(excess) = total.checked_sub(limit).filter(|&e| e > 0) else {
            break (text, total);
        };
        if !left.text.is_empty() {
            left = tail_within(left.text, left.tokens.saturating_sub(excess), tokenizer);
        } else if !right.text.is_empty() {
            right = head_within(right.text, right.tokens.saturating_sub(excess), tokenizer);
        } else if !block.text.is_empty() {
            let smaller = block.tokens.saturating_sub(excess);
            block = fit_block(style, &chunks, &cuts, block.at + 1, smaller, tokenizer);
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
            left: as_u32(left.tokens),
            right: as_u32(right.tokens),
            total: as_u32(total),
        },
        preamble: input.preamble(&block.text),
        crossfile: block.text,
        left: left.text.to_string(),
        right: right.text.to_string(),
    }
}

/// A part of a text cut to a budget, and its tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fitted<'t> {
    text: &'t str,
    tokens: usize,
}

impl Fitted<'_> {
    const EMPTY: Fitted<'static> = Fitted {
        text: "",
        tokens: 0,
    };
}

/// Token counts of parts of one text, by where the part starts or ends, each counted once.
struct Counts<'a> {
    tokenizer: &'a dyn Tokenizer,
    text: &'a str,
    known: HashMap<usize, usize>,
}

impl<'a> Counts<'a> {
    fn new(tokenizer: &'a dyn Tokenizer, text: &'a str) -> Counts<'a> {
        Counts {
            tokenizer,
            text,
            known: HashMap::new(),
        }
    }

    /// Tokens of `text[from..]`.
    fn from(&mut self, from: usize) -> usize {
        let (tokenizer, text) = (self.tokenizer, self.text);
        *self
            .known
            .entry(from)
            .or_insert_with(|| tokenizer.count(&text[from..]))
    }

    /// Tokens of `text[..to]`.
    fn to(&mut self, to: usize) -> usize {
        let (tokenizer, text) = (self.tokenizer, self.text);
        *self
            .known
            .entry(to)
            .or_insert_with(|| tokenizer.count(&text[..to]))
    }
}

/// A cross-file block as cut: which of the cuts, its text and its tokens.
struct Block {
    at: usize,
    text: String,
    tokens: usize,
}

/// How a block is written: its layout, and the comment prefix of the `comment` layout.
#[derive(Clone, Copy)]
struct BlockStyle<'s> {
    layout: CrossfileLayout,
    comment: &'s str,
}

/// The largest of `cuts[from..]` (they run from largest to smallest) whose block fits `budget`.
fn fit_block(
    style: BlockStyle<'_>,
    chunks: &[Chunk<'_>],
    cuts: &[Cut],
    from: usize,
    budget: usize,
    tokenizer: &dyn Tokenizer,
) -> Block {
    let candidates = cuts.get(from..).unwrap_or_default();
    let mut tokens = vec![None; candidates.len()];
    let mut lengths = vec![None; candidates.len()];
    let found = first_within(
        candidates.len(),
        budget,
        |i| *lengths[i].get_or_insert_with(|| render(style, chunks, candidates[i]).len()),
        |i| {
            let count = tokenizer.count(&render(style, chunks, candidates[i]));
            tokens[i] = Some(count);
            count
        },
    );
    match (candidates.get(found), tokens.get(found).copied().flatten()) {
        (Some(&cut), Some(tokens)) => Block {
            at: from + found,
            text: render(style, chunks, cut),
            tokens,
        },
        _ => Block {
            at: cuts.len(),
            text: String::new(),
            tokens: 0,
        },
    }
}

fn render(style: BlockStyle<'_>, chunks: &[Chunk<'_>], cut: Cut) -> String {
    render_as(style.layout, style.comment, chunks, cut)
}

/// `fitted`, a suffix of `text`, started instead at the first line at or after its first whole
/// line whose number is a multiple of [`STEADY_LINE_STEP`] (`steps` more steps on), if that line
/// starts before `text`'s last line; `fitted` itself when it is all of `text`.
fn steady_start<'t>(
    text: &'t str,
    fitted: Fitted<'t>,
    steps: usize,
    tokenizer: &dyn Tokenizer,
) -> Fitted<'t> {
    let cut = text.len() - fitted.text.len();
    if cut == 0 {
        return fitted;
    }
    let lines_before = text[..cut].matches('\n').count();
    let first_whole = if text[..cut].ends_with('\n') {
        lines_before
    } else {
        lines_before + 1
    };
    let line = (first_whole.div_ceil(STEADY_LINE_STEP) + steps) * STEADY_LINE_STEP;
    let last_line = text.matches('\n').count();
    if line == 0 || line > last_line {
        return fitted;
    }
    let Some(at) = line_start(text, line) else {
        return fitted;
    };
    let start = &text[at..];
    Fitted {
        text: start,
        tokens: tokenizer.count(start),
    }
}

/// `text` from its line `line` (0-based) on, if that line starts before `text`'s last line.
fn from_line<'t>(text: &'t str, line: usize, tokenizer: &dyn Tokenizer) -> Option<Fitted<'t>> {
    let from = &text[line_start(text, line)?..];
    from.contains('\n').then(|| Fitted {
        text: from,
        tokens: tokenizer.count(from),
    })
}

/// The byte offset where line `line` (0-based) of `text` starts, if it has that many lines.
fn line_start(text: &str, line: usize) -> Option<usize> {
    match line {
        0 => Some(0),
        _ => text.match_indices('\n').nth(line - 1).map(|(i, _)| i + 1),
    }
}

/// How many token positions are tried for a cut at a token boundary before falling back to
/// character boundaries.
const TOKEN_TRIES: usize = 8;

/// The longest suffix of `text` within `budget` tokens: whole lines, then the tail of the line
/// before them at a token boundary.
fn tail_within<'t>(text: &'t str, budget: usize, tokenizer: &dyn Tokenizer) -> Fitted<'t> {
    if budget == 0 {
        return Fitted::EMPTY;
    }
    let mut counts = Counts::new(tokenizer, text);
    // Where each suffix of whole lines starts, longest first.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(at, _)| at + 1))
        .collect();
    let k = first_within(
        starts.len(),
        budget,
        |k| text.len() - starts[k],
        |k| counts.from(starts[k]),
    );
    let fitted = |from: usize, counts: &mut Counts<'_>| Fitted {
        text: &text[from..],
        tokens: counts.from(from),
    };
    if k == 0 {
        return fitted(0, &mut counts);
    }
    // `text[line..whole]` is the line that did not fit whole.
    let whole = starts.get(k).copied().unwrap_or(text.len());
    let line = starts[k - 1];
    let room = budget.saturating_sub(counts.from(whole));
    if room == 0 {
        return fitted(whole, &mut counts);
    }
    let piece = &text[line..whole];
    let ids = tokenizer.encode(piece);
    for keep in (1..=room.min(ids.len())).rev().take(TOKEN_TRIES) {
        let tail = tokenizer.decode(&ids[ids.len() - keep..]);
        if !tail.is_empty() && piece.ends_with(&tail) && counts.from(whole - tail.len()) <= budget {
            return fitted(whole - tail.len(), &mut counts);
        }
    }
    let bounds: Vec<usize> = piece.char_indices().map(|(at, _)| line + at).collect();
    let k = first_fitting(bounds.len(), |k| counts.from(bounds[k]) <= budget);
    fitted(bounds.get(k).copied().unwrap_or(whole), &mut counts)
}

/// The longest prefix of `text` within `budget` tokens: whole lines, then the head of the next
/// line at a token boundary.
fn head_within<'t>(text: &'t str, budget: usize, tokenizer: &dyn Tokenizer) -> Fitted<'t> {
    if budget == 0 {
        return Fitted::EMPTY;
    }
    let mut counts = Counts::new(tokenizer, text);
    // Where each prefix of whole lines ends, longest first.
    let ends: Vec<usize> = std::iter::once(text.len())
        .chain(
            text.match_indices('\n')
                .rev()
                .map(|(at, _)| at + 1)
                .filter(|&end| end < text.len()),
        )
        .collect();
    let k = first_within(ends.len(), budget, |k| ends[k], |k| counts.to(ends[k]));
    let fitted = |to: usize, counts: &mut Counts<'_>| Fitted {
        text: &text[..to],
        tokens: counts.to(to),
    };
    if k == 0 {
        return fitted(text.len(), &mut counts);
    }
    // `text[whole..line]` is the line that did not fit whole.
    let whole = ends.get(k).copied().unwrap_or(0);
    let line = ends[k - 1];
    let room = budget.saturating_sub(counts.to(whole));
    if room == 0 {
        return fitted(whole, &mut counts);
    }
    let piece = &text[whole..line];
    let ids = tokenizer.encode(piece);
    for keep in (1..=room.min(ids.len())).rev().take(TOKEN_TRIES) {
        let head = tokenizer.decode(&ids[..keep]);
        if !head.is_empty() && piece.starts_with(&head) && counts.to(whole + head.len()) <= budget {
            return fitted(whole + head.len(), &mut counts);
        }
    }
    let bounds: Vec<usize> = piece
        .char_indices()
        .rev()
        .map(|(at, c)| whole + at + c.len_utf8())
        .collect();
    let k = first_fitting(bounds.len(), |k| counts.to(bounds[k]) <= budget);
    fitted(bounds.get(k).copied().unwrap_or(whole), &mut counts)
}

/// Bytes per token the first guess of [`first_within`] assumes, about what code comes to in
/// the vocabularies of code models.
const GUESS_BYTES_PER_TOKEN: f64 = 3.5;
/// Probes [`first_within`] places by guessing before it halves instead.
const GUESSES: usize = 6;

/// The first index in `0..n` whose candidate has at most `budget` tokens, `n` if none has, for
/// candidates that shrink as the index grows: `bytes(i)` is candidate `i`'s length (cheap) and
/// `tokens(i)` its count (costly, in proportion to the length). Each probe goes where the bytes
/// per token of the one before put the budget, so the search lands beside the answer within a
/// probe or two and a probe on the other side settles it; after [`GUESSES`] probes it halves
/// (toward 0 it gallops while nothing is over the budget). Tokenizing is most of a prompt's
/// cost, and this counts a few texts of about the budget's size where [`first_fitting`] counts
/// a dozen. As there, every index returned was tested to fit and the one before it, if any,
/// tested not to; so when counts grow with the candidate both return the same index.
fn first_within(
    n: usize,
    budget: usize,
    mut bytes: impl FnMut(usize) -> usize,
    mut tokens: impl FnMut(usize) -> usize,
) -> usize {
    let Some(last) = n.checked_sub(1) else {
        return 0;
    };
    // The smallest index tested to fit and the largest tested not to.
    let mut fit: Option<usize> = None;
    let mut over: Option<usize> = None;
    let mut rate = GUESS_BYTES_PER_TOKEN;
    let mut step = 1;
    for probes in 0.. {
        // The candidates still open: `low..=high`.
        let low = over.map_or(0, |o| o + 1);
        let high = match fit {
            Some(0) => return 0,
            Some(f) => f - 1,
            None => last,
        };
        if low > high {
            return fit.unwrap_or(n);
        }
        let probe = if probes < GUESSES {
            let target = budget as f64 * rate;
            // The first open candidate no longer than the target (`high` if none is).
            let (mut lo, mut hi) = (low, high);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if bytes(mid) as f64 > target {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        } else {
            match (fit, over) {
                // Does anything fit at all? The smallest candidate says.
                (None, _) => high,
                (Some(f), None) => {
                    step *= 2;
                    f.saturating_sub(step)
                }
                (Some(_), Some(_)) => low + (high - low) / 2,
            }
        };
        let count = tokens(probe);
        if count > 0 {
            rate = bytes(probe) as f64 / count as f64;
        }
        if count <= budget {
            fit = Some(probe);
        } else {
            over = Some(probe);
        }
    }
    fit.unwrap_or(n)
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
