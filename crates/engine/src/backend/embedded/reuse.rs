//! Which part of a kept context's KV cache a new prompt can reuse.
//!
//! Two ways, after llama.cpp's server (`--cache-reuse`, llama.cpp PR 9787): the longest common
//! prefix stays where it is; after it, runs of the cache that the prompt holds again, only moved
//! (text removed above them), are shifted to their new positions when they are at least
//! `min_span` tokens long. The rest of the prompt is evaluated.
//!
//! Only the first is exact, and only block by block: a token's KV depends on the batch it was
//! evaluated in (llama.cpp picks its matrix kernels by batch size, and floating-point sums in
//! another order differ in the last bits), so live completion evaluates every prompt in blocks
//! of [`BLOCK`] tokens aligned at absolute positions, and keeps a prefix only up to a block
//! boundary within the blocks that were evaluated whole. The blocks after it are then evaluated
//! exactly as in a fresh context, and the answer is the same. A shifted run's KV was computed
//! over another prefix: shifting is approximate. It is off unless `model.kv_shift_min_span` asks
//! for it, and then used only where it saves at least [`SHIFT_GAIN`] tokens more than the exact
//! plan: with the default model, 6 of 8 shifted answers on recorded sequences of left contexts
//! cut further on differed from a fresh context's (`tests/it/kv_reuse.rs`). Pure planning over token ids, so
//! it is tested without a model.

/// Live completion evaluates prompts in blocks of this many tokens, aligned at multiples of it.
pub const BLOCK: usize = 16;

/// Live completion reads a prompt from nothing (a cold context) in runs of up to this many
/// tokens of whole blocks ([`runs`]); cancellation is checked between runs, so a prompt read on
/// top of a kept one, while the user types, goes a block at a time. Measured on
/// Qwen2.5-Coder-0.5B, 1,800 tokens read cold on 2 cores without flash attention: blocks of 16
/// at 111–125 tokens a second, runs of 32 at 140, 64 at 136–151, 128 at 141, 512 at 105; the
/// last token's logits bit-identical for all.
pub const RUN: usize = 4 * BLOCK;

/// How many more tokens an approximate (shifted) plan must keep than the exact one to be chosen.
pub const SHIFT_GAIN: usize = 4 * BLOCK;

/// A run of cached tokens moved to its place in the new prompt: cache positions
/// `from..from + len` become `to..to + len` (`to < from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shift {
    pub from: usize,
    pub to: usize,
    pub len: usize,
}

/// How a prompt is read into a context that holds `cached`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Leading tokens kept in place.
    pub prefix: usize,
    /// Later runs of the cache moved back to where the prompt has them, in order; together with
    /// the prefix they cover the prompt's first [`Plan::reused`] tokens without a gap.
    pub shifts: Vec<Shift>,
}

impl Plan {
    /// The prompt's tokens the cache already holds (after the shifts): evaluation starts here.
    pub fn reused(&self) -> usize {
        self.prefix + self.shifts.iter().map(|s| s.len).sum::<usize>()
    }

    /// Whether evaluating the rest block by block gives exactly a fresh context's answer: no
    /// shift, and the prefix ends at a block boundary within `whole` (the cache's leading tokens
    /// that were evaluated in whole blocks).
    pub fn is_exact(&self, whole: usize) -> bool {
        self.shifts.is_empty() && self.prefix.is_multiple_of(BLOCK) && self.prefix <= whole
    }
}

/// The plan for live completion in a cache holding `cached`, whose first `whole` tokens were
/// evaluated in whole blocks: the exact plan (the common prefix within them, cut back to a block
/// boundary), unless shifting runs of at least `shift_min_span` tokens (0: never) keeps at least
/// [`SHIFT_GAIN`] tokens more.
pub fn choose<T: PartialEq>(
    cached: &[T],
    whole: usize,
    prompt: &[T],
    shift_min_span: usize,
) -> Plan {
    let shared = common_prefix(cached, prompt)
        .min(whole)
        .min(prompt.len().saturating_sub(1));
    let exact = Plan {
        prefix: shared / BLOCK * BLOCK,
        shifts: Vec::new(),
    };
    if shift_min_span == 0 {
        return exact;
    }
    let shifted = plan(cached, prompt, shift_min_span);
    if shifted.reused() >= exact.reused() + SHIFT_GAIN {
        shifted
    } else {
        exact
    }
}

/// The blocks in which `range` of a prompt is evaluated: each ends at the next multiple of
/// [`BLOCK`] (or the range's end).
pub fn blocks(range: std::ops::Range<usize>) -> impl Iterator<Item = std::ops::Range<usize>> {
    let end = range.end;
    std::iter::successors(Some(range.start), move |&at| {
        (at < end).then(|| (at / BLOCK + 1) * BLOCK)
    })
    .take_while(move |&at| at < end)
    .map(move |at| at..((at / BLOCK + 1) * BLOCK).min(end))
}

/// The batches in which live completion reads `range` of a prompt: its [`blocks`], with the
/// whole blocks that follow each other joined into runs of up to `run` tokens; a partial first
/// or last block stays alone. Joining whole blocks changes no token's KV (the kept contexts'
/// attention gives the same KV for any cut at multiples of [`BLOCK`]); it reads a long prompt
/// in fewer, larger batches, which llama.cpp's matrix kernels read faster.
pub fn runs(range: std::ops::Range<usize>, run: usize) -> Vec<std::ops::Range<usize>> {
    let whole =
        |r: &std::ops::Range<usize>| r.start.is_multiple_of(BLOCK) && r.end.is_multiple_of(BLOCK);
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for block in blocks(range) {
        match runs.last_mut() {
            Some(last) if whole(last) && whole(&block) && last.len() + block.len() <= run => {
                last.end = block.end;
            }
            _ => runs.push(block),
        }
    }
    runs
}

/// The plan for reading `prompt` into a context holding `cached`. At least the prompt's last
/// token is always left to evaluate (its logits give the first generated token). `min_span` 0
/// keeps the common prefix only.
pub fn plan<T: PartialEq>(cached: &[T], prompt: &[T], min_span: usize) -> Plan {
    let limit = prompt.len().saturating_sub(1);
    let prefix = common_prefix(cached, prompt).min(limit);
    let mut plan = Plan {
        prefix,
        shifts: Vec::new(),
    };
    if min_span == 0 {
        return plan;
    }
    // The prompt must be covered without a gap, so only the cache skips ahead: what was removed
    // above a run is skipped, what was inserted ends the reuse.
    let (mut at_cache, mut at_prompt) = (prefix, prefix);
    while at_cache < cached.len() && at_prompt < limit {
        let len = common_prefix(&cached[at_cache..], &prompt[at_prompt..limit]);
        if len >= min_span {
            plan.shifts.push(Shift {
                from: at_cache,
                to: at_prompt,
                len,
            });
            at_cache += len;
            at_prompt += len;
        } else {
            at_cache += 1;
        }
    }
    plan
}

/// How many leading items `a` and `b` share.
pub fn common_prefix<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<char> {
        text.chars().collect()
    }

    fn check(
        cached: &str,
        prompt: &str,
        min_span: usize,
    ) -> (usize, Vec<(usize, usize, usize)>, usize) {
        let plan = plan(&tokens(cached), &tokens(prompt), min_span);
        let shifts = plan.shifts.iter().map(|s| (s.from, s.to, s.len)).collect();
        (plan.prefix, shifts, plan.reused())
    }

    #[test]
    fn the_common_prefix_is_kept_and_the_last_token_always_evaluated() {
        // Typing one more character: everything before it is reused.
        assert_eq!(check("abcdef", "abcdefg", 0), (6, vec![], 6));
        // The same prompt again: all but its last token.
        assert_eq!(check("abcdef", "abcdef", 4), (5, vec![], 5));
        // Nothing shared, an empty cache, an empty prompt.
        assert_eq!(check("xyz", "abc", 2), (0, vec![], 0));
        assert_eq!(check("", "abc", 2), (0, vec![], 0));
        assert_eq!(check("abc", "", 2), (0, vec![], 0));
        // A backspace: the prompt is a prefix of the cache.
        assert_eq!(check("abcdef", "abcd", 2), (3, vec![], 3));
    }

    #[test]
    fn runs_that_only_moved_are_shifted_when_long_enough() {
        // A chunk dropped above: "CCC" went, "dddd" moved up by three.
        assert_eq!(check("abCCCdddd!", "abdddd?!", 3), (2, vec![(5, 2, 4)], 6));
        // Too short a run is not worth a shift: evaluated instead.
        assert_eq!(check("abCCCdd!", "abdd?!", 3), (2, vec![], 2));
        // Two runs, each moved by what was removed above it.
        assert_eq!(
            check("aXXbbbYYccc_", "abbbccc+", 3),
            (1, vec![(3, 1, 3), (8, 4, 3)], 7)
        );
        // Text inserted in the prompt ends the reuse: the rest is evaluated.
        assert_eq!(check("abCCCdddd", "abNEWdddd.", 3), (2, vec![], 2));
        // Without a minimum span (0) only the prefix is kept.
        assert_eq!(check("abCCCdddd!", "abdddd?!", 0), (2, vec![], 2));
        // The prompt's last token is never covered, also by a shift.
        assert_eq!(check("aXXbcde", "abcde", 2), (1, vec![(3, 1, 3)], 4));
    }

    #[test]
    fn live_plans_keep_whole_blocks_exactly_unless_a_shift_saves_much_more() {
        const B: usize = BLOCK;
        let prompt: Vec<usize> = (0..600).collect();
        // Typing after 3 blocks and 4 tokens, evaluated in whole blocks up to 3 blocks: the
        // prefix is cut back to them, and only the block from there on is evaluated again.
        let mut cached: Vec<usize> = (0..3 * B + 4).collect();
        cached.push(9999);
        let plan = choose(&cached, 3 * B, &prompt, 32);
        assert_eq!((plan.prefix, plan.shifts.len()), (3 * B, 0));
        assert!(plan.is_exact(3 * B));
        // Within a block that was not whole (the prompt's last), nothing of it is kept.
        assert_eq!(choose(&cached, 2 * B, &prompt, 32).prefix, 2 * B);
        // A cache whose first 40 tokens went (the left context cut further on): shifting keeps
        // far more than the exact plan's nothing, when it is asked for.
        let moved: Vec<usize> = (1000..1040).chain(0..560).collect();
        assert_eq!(choose(&moved, 0, &prompt, 0).reused(), 0, "shifting off");
        let plan = choose(&moved, 0, &prompt, 32);
        assert_eq!((plan.prefix, plan.shifts.len(), plan.reused()), (0, 1, 560));
        assert!(!plan.is_exact(0));
        // A moved run shorter than the gain is not worth giving up exactness.
        let short: Vec<usize> = (1000..1040).chain(0..SHIFT_GAIN - 1).collect();
        assert_eq!(choose(&short, 0, &prompt, 32).reused(), 0);
    }

    #[test]
    fn blocks_end_at_multiples_of_the_block() {
        const B: usize = BLOCK;
        let cut =
            |r: std::ops::Range<usize>| blocks(r).map(|b| (b.start, b.end)).collect::<Vec<_>>();
        assert_eq!(
            cut(0..2 * B + 6),
            vec![(0, B), (B, 2 * B), (2 * B, 2 * B + 6)]
        );
        assert_eq!(cut(B + 8..2 * B), vec![(B + 8, 2 * B)]);
        assert_eq!(cut(2 * B..2 * B + 1), vec![(2 * B, 2 * B + 1)]);
        assert_eq!(cut(5..5), vec![]);
    }

    #[test]
    fn runs_join_whole_blocks_and_leave_partial_ones_alone() {
        const B: usize = BLOCK;
        let cut = |r: std::ops::Range<usize>, run: usize| {
            runs(r, run)
                .into_iter()
                .map(|b| (b.start, b.end))
                .collect::<Vec<_>>()
        };
        // A cold prompt of 9 blocks and 5 tokens, in runs of 4 blocks: 4, 4, 1, then the tail.
        assert_eq!(
            cut(0..9 * B + 5, 4 * B),
            vec![
                (0, 4 * B),
                (4 * B, 8 * B),
                (8 * B, 9 * B),
                (9 * B, 9 * B + 5)
            ]
        );
        // A read starting inside a block (after a shift): that block alone, then runs.
        assert_eq!(
            cut(B + 3..5 * B, 2 * B),
            vec![(B + 3, 2 * B), (2 * B, 4 * B), (4 * B, 5 * B)]
        );
        // Runs of one block are the blocks themselves; every run ends where a block ends.
        assert_eq!(cut(0..3 * B + 1, B), cut(0..3 * B + 1, B / 2));
        assert_eq!(
            cut(0..3 * B + 1, B),
            blocks(0..3 * B + 1)
                .map(|b| (b.start, b.end))
                .collect::<Vec<_>>()
        );
        assert_eq!(cut(5..5, 4 * B), vec![]);
    }
}
