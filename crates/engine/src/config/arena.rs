//! `[arena]` as a layer writes it: blind paired comparison in the editor. Each arm is a retriever
//! spec or a table of the sections an arm may set ([`ArmOptions`]), read and checked as every
//! layer is; the language server resolves each over the layers beneath it
//! (`crossfile_server::settings::arena`), so an arm differs from the user's settings in exactly
//! the keys it names.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::Problem;
use super::options::{
    BackendOptions, ModelOptions, Options, PostprocessOptions, PromptOptions, RetrieveOptions,
    read_value,
};

/// An arm written as a table: the sections it may set, what makes one completion differ from
/// another at the same cursor. The index, the workspace walk and the server's own keys serve
/// every arm alike, so a table that names another section does not read (serde's error names
/// these fields). `retriever`, short for `retrieve.retriever`, is read as that before.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArmTable {
    retrieve: Option<RetrieveOptions>,
    prompt: Option<PromptOptions>,
    postprocess: Option<PostprocessOptions>,
    model: Option<ModelOptions>,
    backend: Option<BackendOptions>,
}

/// One arm of `arena.arms`, read: its canonical spec (what votes name it by) and the options it
/// sets.
#[derive(Clone, Debug)]
pub struct ArmOptions {
    pub spec: String,
    pub options: Options,
}

impl<'de> Deserialize<'de> for ArmOptions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        arm_options(&value)
            .map(|(spec, options)| ArmOptions { spec, options })
            .map_err(|problems| serde::de::Error::custom(super::render_problems(&problems)))
    }
}

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

/// Every problem of a layer's `arena.arms`, by dotted key (`arena.arms[1].prompt.layout`): an
/// arm that does not read, one named twice, one alone. The arms that do not read are taken out
/// of `value`, so the rest of the layer reads and every bad arm is reported, not the first alone.
pub(super) fn take_bad_arms(value: &mut Value) -> Vec<Problem> {
    let Some(arms) = value
        .get_mut("arena")
        .and_then(|a| a.get_mut("arms"))
        .and_then(Value::as_array_mut)
    else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    if arms.len() == 1 {
        problems.push(Problem {
            key: "arena.arms".into(),
            message: "a battle needs two arms or more".into(),
        });
    }
    let mut seen = BTreeMap::new();
    let mut i = 0;
    arms.retain(|arm| {
        let at = i;
        i += 1;
        match arm_options(arm) {
            Ok((spec, _)) => {
                if let Some(first) = seen.insert(spec.clone(), at) {
                    problems.push(Problem {
                        key: format!("arena.arms[{at}]"),
                        message: format!("`{spec}` is arm {first} already"),
                    });
                }
                true
            }
            Err(errors) => {
                problems.extend(errors.into_iter().map(|p| Problem {
                    key: match p.key.as_str() {
                        "" | "." => format!("arena.arms[{at}]"),
                        key => format!("arena.arms[{at}].{key}"),
                    },
                    message: p.message,
                }));
                false
            }
        }
    });
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
    let (table, mut problems) = read_value::<ArmTable>(nest(&flat));
    let options = table.map(|t| Options {
        retrieve: t.retrieve,
        prompt: t.prompt,
        postprocess: t.postprocess,
        model: t.model,
        backend: t.backend,
        ..Options::default()
    });
    if let Some(options) = &options {
        problems.extend(options.problems());
    }
    match options {
        Some(options) if problems.is_empty() => Ok((canonical(&flat), options)),
        _ => Err(problems),
    }
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
    use crate::config::{ConfigError, Source};
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
        let problems = |arms: Value| match Options::from_value(
            json!({"arena": {"arms": arms}}),
            Source::Client,
        ) {
            Err(ConfigError::Invalid { problems, .. }) => problems,
            other => panic!("{other:?}"),
        };
        let found = problems(json!([
            "bm25",
            {"prompt.layout": "sideways"},
            {"index.fixed_lines": 3},
            "bm25",
            {"retriever": "nope"},
            7
        ]));
        let keys: Vec<&str> = found.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "arena.arms[1].prompt.layout",
                "arena.arms[2].index",
                "arena.arms[3]",
                "arena.arms[4].retrieve.retriever",
                "arena.arms[5]",
            ],
            "{found:?}"
        );
        // A section an arm may not set: the names it may, from the arm's type.
        assert!(
            found[1].message.contains("unknown field `index`")
                && found[1]
                    .message
                    .contains("`retrieve`, `prompt`, `postprocess`, `model`, `backend`"),
            "{}",
            found[1].message
        );
        assert!(problems(json!(["bm25"]))[0].message.contains("two arms"));
    }
}
