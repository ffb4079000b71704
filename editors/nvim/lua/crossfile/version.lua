-- crossfile.version: the crossfile release this plugin belongs to (Cargo.toml's `version`; a spec
-- checks that they agree), so `:checkhealth crossfile` can tell a server of another release.
return '0.1.0'
