//! What a run was made with, beyond the cases and retrievers: the model (its file's sha256 where
//! it is a local file), the backend, the context size, the prompt template, retrieval's
//! settings, the top-k, the token limit and the sampling. Every record of a run carries them, so
//! `bench merge` can refuse shards that disagree and `bench compare` can say how two runs differ
//! beyond what is compared.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crossfile_engine::backend::{BackendKind, Sampling};
use crossfile_engine::complete::Completer;
use crossfile_engine::config::Settings;
use crossfile_engine::model::ModelError;
use crossfile_engine::progress::Progress;

/// A run's settings, as its records carry them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// The backend's name (`embedded`, `openai`, …).
    pub backend: String,
    /// The model: the GGUF's file name (embedded), or the name sent to the server.
    pub model: String,
    /// sha256 of the model file, hex, when the model is a local file.
    pub model_sha256: Option<String>,
    pub n_ctx: u32,
    /// The prompt template.
    pub template: String,
    /// How the cross-file block is laid out (`comment`, `repo`); absent in runs made before the
    /// setting existed (which were all `comment`).
    #[serde(default)]
    pub layout: Option<String>,
    pub top_k: usize,
    /// Tokens generated per completion, when the run set it (else the protocol's default).
    pub max_new_tokens: Option<u32>,
    /// Retrieval's settings (`retrieve` and the index's chunking), as configured.
    pub retrieval: serde_json::Value,
    /// Sampling (`None`: greedy) and the samples per case.
    pub sampling: Option<SamplingSettings>,
    pub samples: u32,
    /// EvoCodeBench's setting (`baseline`, `local_completion`, `local_infilling`).
    pub setting: Option<String>,
}

/// Sampling as given on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingSettings {
    pub temperature: f32,
    pub top_p: f32,
    pub seed: u32,
}

impl RunSettings {
    /// How `other` differs from these settings, one line per setting: `n_ctx: 1024 / 2048`.
    pub fn differences(&self, other: &RunSettings) -> Vec<String> {
        let (a, b) = (
            serde_json::to_value(self).unwrap_or_default(),
            serde_json::to_value(other).unwrap_or_default(),
        );
        let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
            return Vec::new();
        };
        a.iter()
            .filter_map(|(key, value)| {
                let theirs = b.get(key).unwrap_or(&serde_json::Value::Null);
                (value != theirs).then(|| format!("{key}: {value} / {theirs}"))
            })
            .collect()
    }
}

/// What a run asks of its completer, beyond the configuration.
#[derive(Clone, Debug, Default)]
pub struct RunAsks {
    pub top_k: usize,
    pub max_new_tokens: Option<u32>,
    pub sampling: Option<Sampling>,
    pub samples: u32,
    pub setting: Option<String>,
}

impl RunSettings {
    /// The settings of a run made with `settings` and `completer`, asking `asks`. The embedded
    /// backend's model file is hashed (once per run; a file read again, not the model loaded).
    pub fn of(
        settings: &Settings,
        completer: &Completer,
        asks: RunAsks,
    ) -> Result<RunSettings, ModelError> {
        let embedded = settings.backend.kind == BackendKind::Embedded;
        let (model, model_sha256) = if embedded {
            let path = crossfile_engine::model::resolve(
                &settings.model,
                &settings.index.cache_dir,
                &Progress::none(),
            )?;
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            let hash = file_sha256(&path).map_err(|error| ModelError::Io {
                path: path.clone(),
                error,
            })?;
            (name, Some(hash))
        } else {
            (settings.backend.model.clone(), None)
        };
        let r = &settings.retrieve;
        let c = &settings.index.chunker;
        Ok(RunSettings {
            backend: settings.backend.kind.to_string(),
            model,
            model_sha256,
            n_ctx: settings.model.n_ctx,
            template: completer.template().to_string(),
            layout: Some(completer.layout().to_string()),
            top_k: asks.top_k,
            max_new_tokens: asks.max_new_tokens,
            retrieval: serde_json::json!({
                "query_lines": r.query_lines,
                "jaccard_query_lines": r.jaccard_query_lines,
                "rrf_k": r.rrf_k,
                "exclude": r.exclude.to_string(),
                "bm25_chunker": format!("{:?}", settings.index.bm25_chunker).to_lowercase(),
                "fixed_lines": c.fixed_lines,
                "sliding_lines": c.sliding_lines,
                "sliding_stride": c.sliding_stride,
                "syntax_max_lines": c.syntax_max_lines,
                "dense_model": r.dense.endpoint.as_ref().map(|_| &r.dense.model),
            }),
            sampling: asks.sampling.map(|s| SamplingSettings {
                temperature: s.temperature(),
                top_p: s.top_p(),
                seed: s.seed(),
            }),
            samples: asks.samples.max(1),
            setting: asks.setting,
        })
    }
}

/// sha256 of the file at `path`, hex.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> RunSettings {
        crate::bench::testdata::run_settings(2048)
    }

    #[test]
    fn differences_name_each_setting_with_both_values() {
        let a = settings();
        assert!(a.differences(&a).is_empty());
        let mut b = settings();
        b.n_ctx = 1024;
        b.retrieval = serde_json::json!({"query_lines": 20});
        b.sampling = Some(SamplingSettings {
            temperature: 0.5,
            top_p: 0.95,
            seed: 7,
        });
        let differences = a.differences(&b);
        assert_eq!(differences.len(), 3, "{differences:?}");
        assert!(differences.contains(&"n_ctx: 2048 / 1024".to_string()));
        assert!(
            differences
                .contains(&r#"retrieval: {"query_lines":10} / {"query_lines":20}"#.to_string())
        );
        assert!(
            differences
                .iter()
                .any(|d| d.starts_with("sampling: null / {"))
        );
    }

    #[test]
    fn a_files_sha256_is_its_hex_digest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, "abc").expect("write");
        assert_eq!(
            file_sha256(&path).expect("hash"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
