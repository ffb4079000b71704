//! Choosing the backend and the tokenizer a configuration names.

use std::sync::Arc;

use crate::backend::{self, Backend, BackendError, BackendKind, CachedBackend, NoBackend};
use crate::config::Settings;
use crate::model;
use crate::progress::Progress;
use crate::tokenize::{GgufTokenizer, Tokenizer};

/// The backend `settings.backend` names, wrapped in the response cache. The embedded backend
/// loads `model.path`, or the default model (fetched on first use).
pub fn backend_for(
    settings: &Settings,
    progress: &Progress,
) -> Result<Arc<dyn Backend>, BackendError> {
    let b = &settings.backend;
    let inner: Arc<dyn Backend> = match b.kind {
        BackendKind::None => Arc::new(NoBackend),
        BackendKind::Embedded => embedded(settings, progress)?,
        BackendKind::OpenAi => Arc::new(backend::OpenAiBackend::new(b)?),
        BackendKind::OpenAiChat => Arc::new(backend::OpenAiChatBackend::new(b)?),
        BackendKind::Ollama => Arc::new(backend::OllamaBackend::new(b)?),
        BackendKind::Tgi => Arc::new(backend::TgiBackend::new(b)?),
        BackendKind::LlamaCpp => Arc::new(backend::LlamaCppBackend::new(b)?),
    };
    Ok(if b.cache_entries > 0 {
        Arc::new(CachedBackend::new(inner, b.cache_entries))
    } else {
        inner
    })
}

#[cfg(feature = "embedded")]
fn embedded(settings: &Settings, progress: &Progress) -> Result<Arc<dyn Backend>, BackendError> {
    let path = model_path(settings, progress)?;
    Ok(Arc::new(backend::EmbeddedBackend::load(
        &path,
        &settings.model,
    )?))
}

#[cfg(not(feature = "embedded"))]
fn embedded(_: &Settings, _: &Progress) -> Result<Arc<dyn Backend>, BackendError> {
    Err(BackendError::Unsupported {
        backend: "embedded".into(),
        what: "run: this binary was built without the `embedded` feature".into(),
    })
}

/// The tokenizer for every budget: the backend's own (the embedded llama.cpp), else
/// `model.tokenizer` (a tokenizer.json), else the model GGUF's vocabulary.
pub fn tokenizer_for(
    settings: &Settings,
    backend: &dyn Backend,
    progress: &Progress,
) -> Result<Arc<dyn Tokenizer>, BackendError> {
    if let Some(tokenizer) = backend.tokenizer() {
        return Ok(tokenizer);
    }
    let config = |e: crate::tokenize::TokenizeError| BackendError::Config(e.to_string());
    if let Some(json) = &settings.model.tokenizer {
        return Ok(Arc::new(
            GgufTokenizer::from_json_file(json).map_err(config)?,
        ));
    }
    let path = model_path(settings, progress)?;
    Ok(Arc::new(GgufTokenizer::from_gguf(&path).map_err(config)?))
}

/// Which model answers, as a user names it: the catalogue's name, the GGUF file's name of
/// `model.path`, or an HTTP backend's kind and model.
pub fn model_label(settings: &Settings) -> String {
    match settings.backend.kind {
        BackendKind::Embedded => match &settings.model.path {
            Some(path) => path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            None => settings.model.named.name.to_string(),
        },
        BackendKind::None => "none".to_string(),
        kind => format!("{kind} {}", settings.backend.model),
    }
}

fn model_path(
    settings: &Settings,
    progress: &Progress,
) -> Result<std::path::PathBuf, BackendError> {
    model::resolve(&settings.model, &settings.index.cache_dir, progress)
        .map_err(|e| BackendError::Config(e.to_string()))
}
