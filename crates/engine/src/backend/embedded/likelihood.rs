//! How likely the model finds a text as the continuation of a prompt ([`Likelihood`]), read in
//! the exact request's own context around its answer: the first token's log-probability from the
//! prompt's last logits (read anyway for the answer), the rest from one batch of the text's
//! tokens decoded after the prompt once the answer is done.

use llama_cpp_2::token::LlamaToken;

use crate::backend::Likelihood;

/// A text being scored: its tokens and the log-probabilities known so far.
pub(super) struct Scoring {
    pub(super) tokens: Vec<LlamaToken>,
    sum: f64,
}

impl Scoring {
    /// Starts scoring `tokens` from the logits that follow the prompt; `None` for no token.
    pub(super) fn start(tokens: Vec<LlamaToken>, after_prompt: &[f32]) -> Option<Scoring> {
        let first = *tokens.first()?;
        Some(Scoring {
            sum: log_prob(after_prompt, first),
            tokens,
        })
    }

    /// Adds the log-probability of the text's token `at` from the logits that precede it.
    pub(super) fn add(&mut self, at: usize, before: &[f32]) {
        if let Some(&token) = self.tokens.get(at) {
            self.sum += log_prob(before, token);
        }
    }

    pub(super) fn finish(&self) -> Likelihood {
        let tokens = self.tokens.len();
        Likelihood {
            mean_logprob: self.sum / tokens as f64,
            tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
        }
    }
}

/// The natural-log probability of `token` under `logits` (a log-softmax, in f64).
pub(super) fn log_prob(logits: &[f32], token: LlamaToken) -> f64 {
    let Some(&chosen) = usize::try_from(token.0).ok().and_then(|i| logits.get(i)) else {
        return f64::NEG_INFINITY;
    };
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let max = f64::from(max);
    let sum: f64 = logits.iter().map(|&x| (f64::from(x) - max).exp()).sum();
    f64::from(chosen) - max - sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_probabilities_are_a_log_softmax() {
        let logits = [1.0f32, 2.0, 3.0];
        let z: f64 = [1.0f64, 2.0, 3.0].iter().map(|x| x.exp()).sum();
        for (i, x) in [1.0f64, 2.0, 3.0].iter().enumerate() {
            let expected = x - z.ln();
            assert!((log_prob(&logits, LlamaToken(i as i32)) - expected).abs() < 1e-12);
        }
        // Large logits do not overflow.
        let big = [1000.0f32, 1000.0];
        assert!((log_prob(&big, LlamaToken(0)) - 0.5f64.ln()).abs() < 1e-12);
        // A token outside the vocabulary is impossible.
        assert_eq!(log_prob(&logits, LlamaToken(7)), f64::NEG_INFINITY);
    }

    #[test]
    fn the_mean_is_over_the_text_tokens() {
        let logits = [0.0f32, 0.0];
        let mut s = Scoring::start(vec![LlamaToken(0), LlamaToken(1)], &logits).expect("a token");
        s.add(1, &logits);
        let l = s.finish();
        assert_eq!(l.tokens, 2);
        assert!((l.mean_logprob - 0.5f64.ln()).abs() < 1e-12);
        assert!(Scoring::start(Vec::new(), &logits).is_none());
    }
}
