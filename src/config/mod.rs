//! Settings: typed, defaulted in one place, from `crossfile.toml`, LSP options and flags.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {}
