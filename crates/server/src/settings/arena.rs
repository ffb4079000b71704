//! `[arena]`, resolved: each arm is the layers beneath it with the arm's own keys on top
//! ([`resolve`]), so an arm differs from the user's settings in exactly the keys it names. The
//! arms as a layer writes them, and their checks, are the engine's
//! (`crossfile_engine::config::arena`).

use std::path::PathBuf;
use std::sync::Arc;

use crossfile_engine::config::Options;

use super::ServerSettings;

/// `[arena]`, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ArenaSettings {
    /// Battles are shown (default false); only with two or more arms.
    pub enabled: bool,
    pub arms: Vec<Arm>,
    /// The seed of the pair and order draws; `None`: drawn when the server starts.
    pub seed: Option<u64>,
    /// The votes file (default: `<data dir>/crossfile/arena/votes.jsonl`, never the workspace).
    pub votes: PathBuf,
}

impl ArenaSettings {
    /// Whether battles are shown: on, with two arms at least.
    pub fn active(&self) -> bool {
        self.enabled && self.arms.len() >= 2
    }
}

/// One arm: its canonical spec (what votes name it by) and the settings it completes with (an
/// arm holds no arena of its own).
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    pub spec: String,
    pub settings: Arc<ServerSettings>,
}

/// The votes file when `arena.votes` is not set: `$XDG_DATA_HOME/crossfile/arena/votes.jsonl`
/// (the platform's data directory elsewhere).
pub fn default_votes_path() -> PathBuf {
    directories::ProjectDirs::from("", "", "crossfile")
        .map(|dirs| dirs.data_dir().to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("crossfile-data"))
        .join("arena")
        .join("votes.jsonl")
}

/// The arena of `options` (every layer merged): each arm's settings are `base` with the arm's
/// options on top, resolved like any settings.
pub fn resolve(options: &Options) -> ArenaSettings {
    let arena = options.arena.clone().unwrap_or_default();
    let mut base = options.clone();
    base.arena = None;
    let arms = arena
        .arms
        .unwrap_or_default()
        .into_iter()
        .map(|arm| Arm {
            spec: arm.spec,
            settings: Arc::new(ServerSettings::resolve(&base.clone().overlay(arm.options))),
        })
        .collect();
    ArenaSettings {
        enabled: arena.enabled.unwrap_or(false),
        arms,
        seed: arena.seed,
        votes: arena.votes.unwrap_or_else(default_votes_path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossfile_engine::config::Source;
    use crossfile_engine::retrieve::RetrieverSpec;

    #[test]
    fn an_arm_is_the_layers_beneath_with_its_keys_on_top() {
        let options = Options::parse_toml(
            "[retrieve]\ntop_k = 3\n[prompt]\nmax_new_tokens = 20\n[arena]\nenabled = true\n\
             arms = [\"none\", { retriever = \"jaccard\", prompt.max_new_tokens = 4 }]\n",
            Source::CommandLine,
        )
        .expect("valid");
        let arena = resolve(&options);
        assert!(arena.active());
        let [none, jaccard] = &arena.arms[..] else {
            panic!("two arms: {:?}", arena.arms)
        };
        assert_eq!(none.settings.retrieve.retriever, RetrieverSpec::None);
        assert_eq!(none.settings.prompt.max_new_tokens, 20, "the layer's own");
        assert_eq!(jaccard.settings.retrieve.retriever, RetrieverSpec::Jaccard);
        assert_eq!(jaccard.settings.prompt.max_new_tokens, 4, "the arm's");
        assert_eq!(jaccard.settings.retrieve.top_k, 3, "the layer's own");
        assert!(!jaccard.settings.arena.enabled, "an arm holds no arena");
    }
}
