//! Sampling instead of greedy decoding: a temperature, a nucleus (top-p) and a seed, for drawing
//! several different samples of one prompt (Pass@k with k > 1). Each backend turns it into its
//! own fields; greedy decoding stays the default everywhere.

use std::hash::{Hash, Hasher};

/// How to sample the next token: logits divided by `temperature`, the smallest set of tokens
/// whose probabilities reach `top_p` kept, one of them drawn with a generator seeded by `seed`.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    temperature: f32,
    top_p: f32,
    seed: u32,
}

/// Why sampling settings cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SamplingError {
    #[error("temperature {0} must be a number above 0 (0 is greedy: leave sampling out)")]
    Temperature(String),
    #[error("top-p {0} must be above 0 and at most 1")]
    TopP(String),
}

impl Sampling {
    pub fn new(temperature: f32, top_p: f32, seed: u32) -> Result<Sampling, SamplingError> {
        if !(temperature.is_finite() && temperature > 0.0) {
            return Err(SamplingError::Temperature(temperature.to_string()));
        }
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(SamplingError::TopP(top_p.to_string()));
        }
        Ok(Sampling {
            temperature,
            top_p,
            seed,
        })
    }

    pub fn temperature(&self) -> f32 {
        self.temperature
    }

    pub fn top_p(&self) -> f32 {
        self.top_p
    }

    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// The same settings with the seed for one sample of one prompt: derived from this seed, the
    /// case's id and the sample's number, so a sample draws the same tokens whatever order,
    /// shard or resumed run it comes in.
    pub fn for_sample(&self, case: &str, sample: u32) -> Sampling {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.seed.to_le_bytes());
        hasher.update(case.as_bytes());
        hasher.update(&sample.to_le_bytes());
        let hash = hasher.finalize();
        let mut seed = [0u8; 4];
        seed.copy_from_slice(&hash.as_bytes()[..4]);
        Sampling {
            seed: u32::from_le_bytes(seed),
            ..*self
        }
    }
}

/// Equal when every setting is bit for bit the same (the response cache's key).
impl PartialEq for Sampling {
    fn eq(&self, other: &Sampling) -> bool {
        self.temperature.to_bits() == other.temperature.to_bits()
            && self.top_p.to_bits() == other.top_p.to_bits()
            && self.seed == other.seed
    }
}

impl Eq for Sampling {}

impl Hash for Sampling {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.temperature.to_bits().hash(state);
        self.top_p.to_bits().hash(state);
        self.seed.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_are_refused() {
        assert!(Sampling::new(0.4, 0.95, 1).is_ok());
        assert!(Sampling::new(2.0, 1.0, 1).is_ok());
        for t in [0.0, -0.1, f32::NAN, f32::INFINITY] {
            assert!(
                matches!(
                    Sampling::new(t, 0.95, 1),
                    Err(SamplingError::Temperature(_))
                ),
                "{t}"
            );
        }
        for p in [0.0, 1.01, f32::NAN, -1.0] {
            assert!(
                matches!(Sampling::new(0.4, p, 1), Err(SamplingError::TopP(_))),
                "{p}"
            );
        }
    }

    #[test]
    fn a_samples_seed_depends_on_the_seed_the_case_and_the_number_only() {
        let base = Sampling::new(0.4, 0.95, 7).expect("valid");
        let seed = |base: &Sampling, case: &str, n| base.for_sample(case, n).seed();
        assert_eq!(seed(&base, "a.b", 0), seed(&base, "a.b", 0));
        let seeds: std::collections::HashSet<u32> = [
            seed(&base, "a.b", 0),
            seed(&base, "a.b", 1),
            seed(&base, "a.c", 0),
            seed(&Sampling::new(0.4, 0.95, 8).expect("valid"), "a.b", 0),
        ]
        .into();
        assert_eq!(seeds.len(), 4);
        let sample = base.for_sample("a.b", 3);
        assert_eq!((sample.temperature(), sample.top_p()), (0.4, 0.95));
        assert_ne!(sample, base);
    }
}
