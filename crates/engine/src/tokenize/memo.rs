//! Token counts remembered: live prompts are laid out again at every keystroke, and most of
//! what is counted (the template, the cross-file block, the left context's candidate starts) was
//! counted for the keystroke before or for another layout of the same one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Tokenizer;

/// Texts shorter than this are counted again each time (cheaper than keeping them).
const MIN_BYTES: usize = 256;

/// The texts kept at most, in bytes; all are forgotten when a new one would go over.
const MAX_BYTES: usize = 8 << 20;

/// A tokenizer whose [`Tokenizer::count`] of a text of at least [`MIN_BYTES`] is remembered,
/// keyed by the whole text (so a count is always the tokenizer's own).
pub struct MemoCounts {
    inner: Arc<dyn Tokenizer>,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    by_text: HashMap<String, usize>,
    bytes: usize,
}

impl MemoCounts {
    pub fn new(inner: Arc<dyn Tokenizer>) -> MemoCounts {
        MemoCounts {
            inner,
            counts: Mutex::new(Counts::default()),
        }
    }
}

impl Tokenizer for MemoCounts {
    fn encode(&self, text: &str) -> Vec<u32> {
        self.inner.encode(text)
    }

    fn count(&self, text: &str) -> usize {
        if text.len() < MIN_BYTES || text.len() > MAX_BYTES {
            return self.inner.count(text);
        }
        let lock = || self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&count) = lock().by_text.get(text) {
            return count;
        }
        // Counted without the lock: another thread may count the same text meanwhile.
        let count = self.inner.count(text);
        let mut counts = lock();
        if counts.bytes + text.len() > MAX_BYTES {
            *counts = Counts::default();
        }
        if counts.by_text.insert(text.to_string(), count).is_none() {
            counts.bytes += text.len();
        }
        count
    }

    fn decode(&self, ids: &[u32]) -> String {
        self.inner.decode(ids)
    }

    fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_id(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// One token per byte, counting its calls.
    #[derive(Default)]
    struct Bytes {
        calls: AtomicUsize,
    }

    impl Tokenizer for Bytes {
        fn encode(&self, text: &str) -> Vec<u32> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            text.bytes().map(u32::from).collect()
        }
        fn decode(&self, _: &[u32]) -> String {
            String::new()
        }
        fn token_id(&self, _: &str) -> Option<u32> {
            None
        }
    }

    #[test]
    fn a_long_text_is_counted_once_and_a_short_one_each_time() {
        let inner = Arc::new(Bytes::default());
        let memo = MemoCounts::new(inner.clone());
        let long = "x".repeat(MIN_BYTES);
        assert_eq!(
            (memo.count(&long), memo.count(&long)),
            (MIN_BYTES, MIN_BYTES)
        );
        assert_eq!(inner.calls.load(Ordering::SeqCst), 1);
        // Another text of the same length is its own.
        let other = format!("{}y", "x".repeat(MIN_BYTES));
        assert_eq!(memo.count(&other), MIN_BYTES + 1);
        assert_eq!(inner.calls.load(Ordering::SeqCst), 2);
        memo.count("short");
        memo.count("short");
        assert_eq!(inner.calls.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn texts_over_the_bound_forget_the_rest_and_counts_stay_right() {
        let inner = Arc::new(Bytes::default());
        let memo = MemoCounts::new(inner.clone());
        let texts: Vec<String> = (0..5)
            .map(|i| format!("{i}{}", "z".repeat(MAX_BYTES / 4)))
            .collect();
        for text in &texts {
            assert_eq!(memo.count(text), text.len());
        }
        // The fifth went over the bound: the first four were forgotten, the fifth kept.
        let calls = inner.calls.load(Ordering::SeqCst);
        assert_eq!(memo.count(&texts[4]), texts[4].len());
        assert_eq!(inner.calls.load(Ordering::SeqCst), calls);
        assert_eq!(memo.count(&texts[0]), texts[0].len());
        assert_eq!(inner.calls.load(Ordering::SeqCst), calls + 1);
    }
}
