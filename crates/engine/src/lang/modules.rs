//! Which imports name a module of the workspace: module paths resolved against its files.
//!
//! Every file gives a key, its path without the extension (`src/click/core`); a package's
//! `__init__.py` or a folder's `index.ts` also gives its folder (`src/click`). Relative imports
//! (Python `.core`, `..`; TypeScript `./store`, `../a/b.js`) must resolve to a key exactly;
//! absolute Python, Java and C# module paths (`click.core`, `org.a.Foo`) must equal a key's tail
//! at a folder boundary (`click/core` of `src/click/core`), or, for Java and C#, the path
//! without its last part (a static member import). A TypeScript bare specifier resolves through
//! what [`Modules::add_alias`] and [`Modules::add_package`] were given (the workspace's tsconfig
//! `paths`, then its own packages by name, `index::packages` reads them): an alias's targets,
//! or a package's folder with the rest of the specifier under it or under its `src`, or its
//! entry point (`dist`, `lib`, `build`, `out`, `esm` and `cjs` read as `src`). Other bare
//! specifiers (`react`) name installed packages, which never count.
//!
//! Two questions are asked of the same keys: which names an import binds from the workspace
//! ([`Modules::names_from_workspace`], the miner's rule) and which files it names
//! ([`Modules::files_named`], where a retrieved chunk comes from). The second also counts what
//! names a folder: a Python name that is a submodule (`from click import core`), a Java package's
//! wildcard (`import org.a.*`) and a C# namespace (`using Org.A;`), whose path must equal a tail
//! of a folder's path, naming the files directly in it.

use std::collections::HashMap;

use crate::lang::{Import, Language};

/// A language family's name ([`Language::name`]: TSX is TypeScript's) and a key or folder path.
type Key = (&'static str, String);

/// The module keys of a workspace, per language family, with the files each names.
#[derive(Default)]
pub struct Modules {
    /// The files added, in order; the maps hold indices into it.
    files: Vec<String>,
    /// Each file's key (and a package's or an `index` file's folder): the files it names.
    exact: HashMap<Key, Vec<u32>>,
    /// Every tail of those keys at a folder boundary.
    tails: HashMap<Key, Vec<u32>>,
    /// Every tail of each file's folder: the files directly in that folder.
    folders: HashMap<Key, Vec<u32>>,
    /// The workspace's own TypeScript packages: name, folder, entry point.
    packages: Vec<Package>,
    /// tsconfig `paths` aliases: pattern (at most one `*`), targets, and the folder whose files
    /// they apply to.
    aliases: Vec<(String, Vec<String>, String)>,
}

/// A TypeScript package of the workspace.
struct Package {
    name: String,
    /// Workspace-relative ("" for the root).
    folder: String,
    /// Its entry point as a key under `folder` (`src/index`), if its `package.json` names one.
    entry: Option<String>,
}

impl Modules {
    /// Adds the file at `path` (workspace-relative, `/`-separated).
    pub fn add(&mut self, path: &str, language: Language) {
        let family = language.name();
        let Ok(id) = u32::try_from(self.files.len()) else {
            return;
        };
        self.files.push(path.to_owned());
        let key = strip_extension(path);
        let mut keys = vec![key];
        if let Some((folder, stem)) = key.rsplit_once('/')
            && matches!(stem, "__init__" | "index")
        {
            keys.push(folder);
        }
        for key in keys {
            insert(&mut self.exact, family, key, id);
            for tail in tails(key) {
                insert(&mut self.tails, family, tail, id);
            }
        }
        if let Some((folder, _)) = path.rsplit_once('/') {
            for tail in tails(folder) {
                insert(&mut self.folders, family, tail, id);
            }
        }
    }

    /// Adds a TypeScript package of the workspace: its `name`, its `folder` (workspace-relative)
    /// and its `entry` point as its `package.json` gives it (`./dist/index.js`).
    pub fn add_package(&mut self, name: &str, folder: &str, entry: Option<&str>) {
        self.packages.push(Package {
            name: name.to_owned(),
            folder: folder.to_owned(),
            entry: entry
                .and_then(|e| resolve("", e))
                .map(|key| source_of(&key)),
        });
        // Longest names first, so `@a/b-c` is tried before `@a/b`.
        self.packages
            .sort_by(|a, b| b.name.len().cmp(&a.name.len()).then(a.name.cmp(&b.name)));
    }

    /// Adds a tsconfig `paths` alias for the files under `scope` (the tsconfig's folder): a
    /// specifier matching `pattern` (`@/*`) resolves to `targets` (workspace-relative, `*`
    /// standing for what the pattern's `*` matched).
    pub fn add_alias(&mut self, pattern: &str, targets: Vec<String>, scope: &str) {
        self.aliases
            .push((pattern.to_owned(), targets, scope.to_owned()));
    }

    /// The keys a TypeScript specifier in the file at `from` may name, in the order tried: a
    /// relative one's own, else an alias's targets, else a workspace package's.
    fn typescript_keys(&self, module: &str, from: &str) -> Vec<String> {
        if module.starts_with('.') {
            return ancestor(from, 1)
                .and_then(|base| resolve(base, module))
                .into_iter()
                .collect();
        }
        let mut keys = Vec::new();
        for (pattern, targets, scope) in &self.aliases {
            let applies = scope.is_empty() || from.starts_with(&format!("{scope}/"));
            let star = match pattern.split_once('*') {
                Some((before, after)) => module
                    .strip_prefix(before)
                    .and_then(|rest| rest.strip_suffix(after)),
                None => (module == pattern).then_some(""),
            };
            if let (true, Some(star)) = (applies, star) {
                keys.extend(
                    targets
                        .iter()
                        .filter_map(|t| resolve("", &t.replacen('*', star, 1))),
                );
            }
        }
        for package in &self.packages {
            let rest = if module == package.name {
                ""
            } else if let Some(rest) = module
                .strip_prefix(package.name.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                rest
            } else {
                continue;
            };
            if rest.is_empty() {
                keys.extend(package.entry.iter().map(|e| join(&package.folder, e)));
                keys.push(package.folder.clone());
                keys.push(join(&package.folder, "src"));
            } else {
                keys.extend(resolve(&package.folder, rest));
                keys.extend(resolve(&join(&package.folder, "src"), rest));
            }
            break;
        }
        keys
    }

    /// The first of `keys` that names a file.
    fn first_known(&self, family: &'static str, keys: Vec<String>) -> Option<String> {
        keys.into_iter()
            .find(|key| self.exact.contains_key(&(family, key.clone())))
    }

    /// The names `import`, in the file at `from`, binds from a module of the workspace.
    pub fn names_from_workspace<'i>(
        &self,
        import: &'i Import,
        from: &str,
        language: Language,
    ) -> Vec<&'i str> {
        let family = language.name();
        let all = || import.names.iter().map(String::as_str).collect();
        let module = import.module.as_str();
        let has = |map: &HashMap<Key, Vec<u32>>, key: String| map.contains_key(&(family, key));
        match language {
            Language::Python => {
                let (dots, rest) = python_module(module);
                if dots == 0 {
                    return if has(&self.tails, rest) {
                        all()
                    } else {
                        Vec::new()
                    };
                }
                let Some(base) = ancestor(from, dots) else {
                    return Vec::new();
                };
                if rest.is_empty() {
                    // `from . import core`: each name is a module of its own.
                    return import
                        .names
                        .iter()
                        .map(String::as_str)
                        .filter(|n| has(&self.exact, join(base, n)))
                        .collect();
                }
                if has(&self.exact, join(base, &rest)) {
                    all()
                } else {
                    Vec::new()
                }
            }
            Language::TypeScript | Language::Tsx => {
                let keys = self.typescript_keys(module, from);
                if self.first_known(family, keys).is_some() {
                    all()
                } else {
                    Vec::new()
                }
            }
            Language::Java | Language::CSharp => {
                let (path, parent) = dotted_path(module);
                if has(&self.tails, path) || parent.is_some_and(|p| has(&self.tails, p)) {
                    all()
                } else {
                    Vec::new()
                }
            }
        }
    }

    /// The workspace files `import`, in the file at `from`, names, sorted: the module's own file
    /// (a package's `__init__.py`, a folder's `index.ts`), a Python name that is a submodule's
    /// file, the class of a Java or C# static member import, and every file directly in a folder
    /// a Java wildcard or a C# namespace names. Empty for a module outside the workspace.
    pub fn files_named(&self, import: &Import, from: &str, language: Language) -> Vec<&str> {
        let family = language.name();
        let mut ids: Vec<u32> = Vec::new();
        let mut take = |map: &HashMap<Key, Vec<u32>>, key: String| -> bool {
            match map.get(&(family, key)) {
                Some(found) => {
                    ids.extend(found);
                    true
                }
                None => false,
            }
        };
        let module = import.module.as_str();
        match language {
            Language::Python => {
                let (dots, rest) = python_module(module);
                if dots == 0 {
                    take(&self.tails, rest.clone());
                    for name in &import.names {
                        take(&self.tails, join(&rest, name));
                    }
                } else if let Some(base) = ancestor(from, dots) {
                    let package = join(base, &rest);
                    let mut all_modules = true;
                    for name in &import.names {
                        all_modules &= take(&self.exact, join(&package, name));
                    }
                    // The package itself, unless every name is a submodule of it.
                    if !rest.is_empty() || !all_modules || import.names.is_empty() {
                        take(&self.exact, package);
                    }
                }
            }
            Language::TypeScript | Language::Tsx => {
                if let Some(key) = self.first_known(family, self.typescript_keys(module, from)) {
                    take(&self.exact, key);
                }
            }
            Language::Java | Language::CSharp => {
                let (path, parent) = dotted_path(module);
                take(&self.tails, path.clone());
                if let Some(parent) = parent {
                    take(&self.tails, parent);
                }
                take(&self.folders, path);
            }
        }
        let mut files: Vec<&str> = ids
            .iter()
            .filter_map(|&id| self.files.get(id as usize))
            .map(String::as_str)
            .collect();
        files.sort_unstable();
        files.dedup();
        files
    }
}

/// Records that `key` of `family` names file `id`, once.
fn insert(map: &mut HashMap<Key, Vec<u32>>, family: &'static str, key: &str, id: u32) {
    let ids = map.entry((family, key.to_owned())).or_default();
    if ids.last() != Some(&id) {
        ids.push(id);
    }
}

/// `key` and each of its tails at a folder boundary (`a/b/c`, `b/c`, `c`).
fn tails(key: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(key), |tail| tail.split_once('/').map(|(_, rest)| rest))
        .filter(|tail| !tail.is_empty())
}

/// A Python module's leading dots (its relative level) and the rest as a path (`a/b`).
fn python_module(module: &str) -> (usize, String) {
    let dots = module.len() - module.trim_start_matches('.').len();
    (dots, module[dots..].replace('.', "/"))
}

/// A package's built entry point read as its source: a first folder named `dist`, `lib`,
/// `build`, `out`, `esm` or `cjs` becomes `src` (`dist/index` → `src/index`).
fn source_of(key: &str) -> String {
    match key.split_once('/') {
        Some(("dist" | "lib" | "build" | "out" | "esm" | "cjs", rest)) => format!("src/{rest}"),
        _ => key.to_owned(),
    }
}

/// A Java or C# module as a path (`org/a/Foo`, type arguments cut), and that path's parent.
fn dotted_path(module: &str) -> (String, Option<String>) {
    let path = module.split('<').next().unwrap_or(module).replace('.', "/");
    let parent = path.rsplit_once('/').map(|(p, _)| p.to_owned());
    (path, parent)
}

/// The path without its source extension (`.d.ts` as a whole).
fn strip_extension(path: &str) -> &str {
    for ext in [".d.ts", ".py", ".java", ".cs", ".tsx", ".ts"] {
        if let Some(stem) = path.strip_suffix(ext) {
            return stem;
        }
    }
    path
}

/// The folder `levels` levels above the file `path` ("" is the root); `None` above the root.
fn ancestor(path: &str, levels: usize) -> Option<&str> {
    let mut dir = path;
    for _ in 0..levels {
        dir = match dir.rsplit_once('/') {
            Some((parent, _)) => parent,
            None if !dir.is_empty() => "",
            None => return None,
        };
    }
    Some(dir)
}

fn join(dir: &str, rest: &str) -> String {
    match (dir.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_owned(),
        (_, true) => dir.to_owned(),
        _ => format!("{dir}/{rest}"),
    }
}

/// A relative TypeScript specifier resolved against folder `base`, without its extension.
fn resolve(base: &str, specifier: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in specifier.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(part),
        }
    }
    let last = parts.pop()?;
    let mut stem = last;
    for ext in [".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"] {
        if let Some(s) = last.strip_suffix(ext) {
            stem = s;
            break;
        }
    }
    parts.push(stem);
    Some(parts.join("/"))
}

#[cfg(test)]
#[path = "modules_tests.rs"]
mod tests;
