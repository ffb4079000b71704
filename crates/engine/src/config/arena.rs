//! `[arena]`: blind paired comparison in the editor. Each arm is a retriever spec or a partial
//! settings table, checked by the same resolver as every layer ([`arm_options`]) and resolved
//! over the layers beneath it ([`ArenaSettings`]), so an arm differs from the user's settings in
//! exactly the keys it names.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::options::Options;
use super::{ConfigError, Problem, Settings, Source};

/// The settings sections an arm may set: what makes one completion differ from another at the
/// same cursor. The index, the workspace walk and the server's own keys serve every arm alike.
pub const ARM_SECTIONS: &[&str] = &["retrieve", "prompt", "postprocess", "model", "backend"];

crate::choice! {
    /// How a battle's pair of arms is drawn (`[arena] pairs`).
    #[derive(Default)]
    pub enum PairRule {
        /// Uniformly over the unordered pairs of distinct arms.
        #[default]
        Uniform,
    }
}

/// The largest `arena.seed`: 2^53 − 1, the largest integer a double holds exactly (JSON readers
/// that hold numbers as doubles, JavaScript's, read every seed exactly).
pub const MAX_SEED: u64 = (1 << 53) - 1;

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

/// One arm: its canonical spec (what votes name it by) and the settings it completes with.
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    pub spec: String,
    pub settings: Arc<Settings>,
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
        .iter()
        .filter_map(|value| arm_options(value).ok())
        .map(|(spec, arm)| Arm {
            spec,
            settings: Arc::new(Settings::resolve(&base.clone().overlay(arm))),
        })
        .collect();
    ArenaSettings {
        enabled: arena.enabled.unwrap_or(false),
        arms,
        seed: arena.seed,
        votes: arena.votes.unwrap_or_else(default_votes_path),
    }
}

/// Every problem of a layer's `arena.arms`, by dotted key (`arena.arms[1].prompt.layout`).
pub fn arm_problems(arms: &[Value]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut seen = BTreeMap::new();
    for (i, value) in arms.iter().enumerate() {
        match arm_options(value) {
            Ok((spec, _)) => {
                if let Some(first) = seen.insert(spec.clone(), i) {
                    problems.push(Problem {
                        key: format!("arena.arms[{i}]"),
                        message: format!("`{spec}` is arm {first} already"),
                    });
                }
            }
            Err(errors) => problems.extend(errors.into_iter().map(|p| Problem {
                key: if p.key.is_empty() {
                    format!("arena.arms[{i}]")
                } else {
                    format!("arena.arms[{i}].{}", p.key)
                },
                message: p.message,
            })),
        }
    }
    if arms.len() == 1 {
        problems.push(Problem {
            key: "arena.arms".into(),
            message: "a battle needs two arms or more".into(),
        });
    }
    problems
}

/// An arm as options, with its canonical spec: a string is a retriever spec
/// (`retrieve.retriever`); a table's keys are settings keys, dotted or nested, `retriever` short
/// for `retrieve.retriever`. Problems name keys relative to the arm.
pub fn arm_options(value: &Value) -> Result<(String, Options), Vec<Problem>> {
    let flat = match value {
        Value::String(spec) => BTreeMap::from([(
            "retrieve.retriever".to_string(),
            Value::String(spec.clone()),
        )]),
        Value::Object(_) => {
            let mut flat = BTreeMap::new();
            flatten("", value, &mut flat);
            flat.into_iter()
                .map(|(key, v)| match key.as_str() {
                    "retriever" => ("retrieve.retriever".to_string(), v),
                    _ => (key, v),
                })
                .collect()
        }
        other => {
            return Err(vec![Problem {
                key: String::new(),
                message: format!(
                    "an arm is a retriever spec or a table of settings keys, not {other}"
                ),
            }]);
        }
    };
    if flat.is_empty() {
        return Err(vec![Problem {
            key: String::new(),
            message: "an arm sets at least one key".into(),
        }]);
    }
    let outside: Vec<Problem> = flat
        .keys()
        .filter(|key| {
            !ARM_SECTIONS
                .iter()
                .any(|s| key.starts_with(&format!("{s}.")))
        })
        .map(|key| Problem {
            key: key.clone(),
            message: format!(
                "an arm may set only {} keys (one index and one server serve every arm)",
                ARM_SECTIONS.join(", ")
            ),
        })
        .collect();
    if !outside.is_empty() {
        return Err(outside);
    }
    let options = Options::from_value(nest(&flat), Source::Client).map_err(|e| match e {
        ConfigError::Invalid { problems, .. } => problems,
        other => vec![Problem {
            key: String::new(),
            message: other.to_string(),
        }],
    })?;
    Ok((canonical(&flat), options))
}

/// `retriever` alone is its spec (`bm25`); else the keys sorted, `{key=value, …}` with values as
/// JSON (`{prompt.layout="repo", retriever="bm25"}`).
fn canonical(flat: &BTreeMap<String, Value>) -> String {
    if let (1, Some(Value::String(spec))) = (flat.len(), flat.get("retrieve.retriever")) {
        return spec.clone();
    }
    let mut pairs: Vec<String> = flat
        .iter()
        .map(|(key, value)| {
            let key = if key == "retrieve.retriever" {
                "retriever"
            } else {
                key
            };
            format!("{key}={value}")
        })
        .collect();
    pairs.sort();
    format!("{{{}}}", pairs.join(", "))
}

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let key = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&key, inner, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

fn nest(flat: &BTreeMap<String, Value>) -> Value {
    let mut root = serde_json::Map::new();
    for (key, value) in flat {
        let parts: Vec<&str> = key.split('.').collect();
        let mut node = &mut root;
        for part in &parts[..parts.len() - 1] {
            let next = node
                .entry(part.to_string())
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if !next.is_object() {
                *next = Value::Object(serde_json::Map::new());
            }
            let Value::Object(map) = next else {
                unreachable!("made an object just above")
            };
            node = map;
        }
        node.insert(parts[parts.len() - 1].to_string(), value.clone());
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::RetrieverSpec;
    use serde_json::json;

    #[test]
    fn an_arm_is_a_spec_or_a_table_of_keys_dotted_or_nested() {
        let (spec, options) = arm_options(&json!("bm25")).expect("an arm");
        assert_eq!(spec, "bm25");
        assert_eq!(
            options.retrieve.and_then(|r| r.retriever),
            Some(RetrieverSpec::Bm25)
        );
        let dotted = json!({"retriever": "none", "prompt.max_new_tokens": 4});
        let nested = json!({"prompt": {"max_new_tokens": 4}, "retrieve": {"retriever": "none"}});
        let (a, _) = arm_options(&dotted).expect("dotted");
        let (b, options) = arm_options(&nested).expect("nested");
        assert_eq!(a, b, "one canonical form");
        assert_eq!(a, "{prompt.max_new_tokens=4, retriever=\"none\"}");
        assert_eq!(options.prompt.and_then(|p| p.max_new_tokens), Some(4));
    }

    #[test]
    fn a_bad_arm_names_its_key() {
        let problems = arm_problems(&[
            json!("bm25"),
            json!({"prompt.layout": "sideways"}),
            json!({"index.fixed_lines": 3}),
            json!("bm25"),
            json!({"retriever": "nope"}),
            json!(7),
        ]);
        let keys: Vec<&str> = problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "arena.arms[1].prompt.layout",
                "arena.arms[2].index.fixed_lines",
                "arena.arms[3]",
                "arena.arms[4].retrieve.retriever",
                "arena.arms[5]",
            ],
            "{problems:?}"
        );
        assert!(
            arm_problems(&[json!("bm25")])[0]
                .message
                .contains("two arms")
        );
    }

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
