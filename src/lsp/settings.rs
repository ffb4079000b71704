//! The settings the client gives: its options (`initializationOptions`, then
//! `workspace/didChangeConfiguration`) and, with them, each folder's resolved settings.

use std::path::Path;

use crate::config::{ConfigError, Ignored, Options, Settings, Source};

/// Client options from `initializationOptions` (the keys of `crossfile.toml`, as JSON), checked
/// by the engine's one resolver: every unknown key and bad value is named by its dotted path.
pub fn client_options(value: Option<serde_json::Value>) -> Result<Options, ConfigError> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(Options::default()),
        Some(value) => Options::from_value(value, Source::Client),
    }
}

/// A folder's settings: defaults, the user's file, the folder's `crossfile.toml`, the client's;
/// with the keys of the folder's file that were ignored because the folder is not trusted.
pub fn folder_settings(
    root: &Path,
    options: &Options,
) -> Result<(Settings, Vec<Ignored>), ConfigError> {
    Settings::load_reporting(root, options.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_settings_are_checked_by_dotted_path() {
        assert!(client_options(None).is_ok());
        assert!(client_options(Some(serde_json::Value::Null)).is_ok());
        let good = client_options(Some(serde_json::json!({"retrieve": {"top_k": 3}})));
        assert_eq!(
            good.ok().and_then(|o| o.retrieve).and_then(|r| r.top_k),
            Some(3)
        );
        let bad = client_options(Some(serde_json::json!({
            "retrieve": {"top_k": "many", "colour": 1},
        })));
        let message = bad.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("client settings"), "{message}");
        assert!(
            message.contains("retrieve.colour: unknown key"),
            "{message}"
        );
        assert!(message.contains("retrieve.top_k"), "{message}");
    }
}
