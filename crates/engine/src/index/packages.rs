//! A TypeScript workspace's own packages and path aliases, read from the `package.json` and
//! `tsconfig.json` (or `jsconfig.json`) files in the folders of its sources: what a bare
//! specifier (`@scope/pkg/sub`, the package's own name, `@/lib/x`) resolves through
//! ([`Modules::add_package`], [`Modules::add_alias`]).
//!
//! A file that cannot be read or parsed is skipped with a warning naming it: retrieval goes on
//! without its names. A tsconfig's `extends` is not followed: only `paths` written in the file
//! itself count, relative to its `baseUrl` (default: its own folder).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::lang::Modules;

/// Adds to `modules` every package and alias declared in a folder holding one of `sources`
/// (workspace-relative TypeScript paths) or above it, within the workspace at `root`.
pub fn add_typescript_packages<'a>(
    modules: &mut Modules,
    root: &Path,
    sources: impl IntoIterator<Item = &'a str>,
) {
    let mut folders: BTreeSet<&str> = BTreeSet::new();
    for path in sources {
        let mut dir = path;
        while let Some((parent, _)) = dir.rsplit_once('/') {
            if !folders.insert(parent) {
                break;
            }
            dir = parent;
        }
        folders.insert("");
    }
    for folder in folders {
        if let Some(package) = read_json(root, folder, "package.json")
            && let Some(name) = package.get("name").and_then(Value::as_str)
        {
            modules.add_package(name, folder, entry_point(&package).as_deref());
        }
        for config in ["tsconfig.json", "jsconfig.json"] {
            if let Some(config) = read_json(root, folder, config) {
                for (pattern, targets) in path_aliases(&config, folder) {
                    modules.add_alias(&pattern, targets, folder);
                }
            }
        }
    }
}

/// The JSON (comments and trailing commas allowed, as tsconfig files have them) of the file
/// `name` in `folder` of the workspace at `root`; `None` when there is none or it is not JSON.
fn read_json(root: &Path, folder: &str, name: &str) -> Option<Value> {
    let path = root.join(folder).join(name);
    let mut text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(file = %path.display(), "not read for module resolution: {e}");
            return None;
        }
    };
    let parsed = json_strip_comments::strip(&mut text)
        .map_err(|e| e.to_string())
        .and_then(|()| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
    match parsed {
        Ok(value) => Some(value),
        Err(e) => {
            tracing::warn!(file = %path.display(), "not JSON, left out of module resolution: {e}");
            None
        }
    }
}

/// The file a package's bare name loads, as its `package.json` gives it: `types`, `typings`,
/// `module`, `main`, or `exports`'s `.` (a string, or its `types`, `import` or `default`).
fn entry_point(package: &Value) -> Option<String> {
    let direct = ["types", "typings", "module", "main"]
        .iter()
        .find_map(|key| package.get(key).and_then(Value::as_str));
    if let Some(entry) = direct {
        return Some(entry.to_owned());
    }
    let exports = package.get("exports")?;
    let dot = match exports {
        Value::String(s) => return Some(s.clone()),
        Value::Object(map) => map.get(".")?,
        _ => return None,
    };
    match dot {
        Value::String(s) => Some(s.clone()),
        Value::Object(conditions) => ["types", "import", "default"]
            .iter()
            .find_map(|key| conditions.get(*key).and_then(Value::as_str))
            .map(str::to_owned),
        _ => None,
    }
}

/// A tsconfig's `compilerOptions.paths`, each target made workspace-relative (from `folder`,
/// the tsconfig's, through its `baseUrl`).
fn path_aliases(config: &Value, folder: &str) -> Vec<(String, Vec<String>)> {
    let Some(options) = config.get("compilerOptions") else {
        return Vec::new();
    };
    let Some(paths) = options.get("paths").and_then(Value::as_object) else {
        return Vec::new();
    };
    let base_url = options
        .get("baseUrl")
        .and_then(Value::as_str)
        .unwrap_or(".");
    paths
        .iter()
        .map(|(pattern, targets)| {
            let targets = targets
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter_map(|target| normalize(&format!("{folder}/{base_url}/{target}")))
                .collect();
            (pattern.clone(), targets)
        })
        .collect()
}

/// `path` with `.` and `..` parts resolved and empty parts dropped; `None` when it climbs out
/// of the workspace.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::{Import, Language};

    #[test]
    fn packages_and_aliases_resolve_bare_specifiers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |path: &str, text: &str| {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
            std::fs::write(file, text).expect("write");
        };
        let sources = [
            "packages/core/src/index.ts",
            "packages/core/src/store.ts",
            "packages/ui/src/view.ts",
            "packages/ui/src/lib/format.ts",
            "app/main.ts",
        ];
        for path in sources {
            write(path, "export const x = 1;\n");
        }
        write(
            "packages/core/package.json",
            r#"{"name": "@acme/core", "main": "./dist/index.js"}"#,
        );
        write(
            "packages/ui/package.json",
            r#"{"name": "@acme/ui", "exports": {".": {"import": "./src/view.ts"}}}"#,
        );
        write(
            "packages/ui/tsconfig.json",
            "{\n  // comments and trailing commas, as tsconfig files have them\n  \"compilerOptions\": {\"baseUrl\": \".\", \"paths\": {\"~/*\": [\"./src/*\",],},},\n}",
        );
        write("app/package.json", "{ not json");
        let mut modules = Modules::default();
        for path in sources {
            modules.add(path, Language::TypeScript);
        }
        add_typescript_packages(&mut modules, dir.path(), sources);
        let named = |module: &str, from: &str| -> Vec<String> {
            let import = Import {
                line: 0,
                module: module.into(),
                names: vec!["x".into()],
            };
            modules
                .files_named(&import, from, Language::TypeScript)
                .into_iter()
                .map(str::to_owned)
                .collect()
        };
        // A package by name: `main`'s `dist` is its `src`; a subpath under `src`.
        assert_eq!(
            named("@acme/core", "app/main.ts"),
            ["packages/core/src/index.ts"]
        );
        assert_eq!(
            named("@acme/core/store", "packages/ui/src/view.ts"),
            ["packages/core/src/store.ts"]
        );
        // `exports`' `.`, and a package importing itself by name.
        assert_eq!(
            named("@acme/ui", "packages/ui/src/lib/format.ts"),
            ["packages/ui/src/view.ts"]
        );
        // A tsconfig alias, relative to its own folder.
        assert_eq!(
            named("~/lib/format", "packages/ui/src/view.ts"),
            ["packages/ui/src/lib/format.ts"]
        );
        // An alias applies only under its tsconfig's folder.
        assert!(named("~/lib/format", "app/main.ts").is_empty());
        // Packages outside the workspace, and a broken package.json, name nothing.
        assert!(named("react", "app/main.ts").is_empty());
        assert!(named("@acme/other", "app/main.ts").is_empty());
    }

    #[test]
    fn paths_are_normalized_inside_the_workspace() {
        assert_eq!(
            normalize("pkg/./src/../lib/*").as_deref(),
            Some("pkg/lib/*")
        );
        assert_eq!(normalize("/./a").as_deref(), Some("a"));
        assert_eq!(normalize("a/../../b"), None);
    }
}
