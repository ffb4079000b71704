//! Which imports name a module of the workspace: module paths resolved against its files.
//!
//! Every file gives a key, its path without the extension (`src/click/core`); a package's
//! `__init__.py` or a folder's `index.ts` also gives its folder (`src/click`). Relative imports
//! (Python `.core`, `..`; TypeScript `./store`, `../a/b.js`) must resolve to a key exactly;
//! absolute Python, Java and C# module paths (`click.core`, `org.a.Foo`) must equal a key's tail
//! at a folder boundary (`click/core` of `src/click/core`), or, for Java and C#, the path
//! without its last part (a static member import). TypeScript's bare specifiers (`mobx`) name
//! packages through `package.json`, which is not indexed, so they never count.
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
                if typescript_key(module, from).is_some_and(|key| has(&self.exact, key)) {
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
                if let Some(key) = typescript_key(module, from) {
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

/// A relative TypeScript specifier's key, from the file at `from`; `None` for a bare one.
fn typescript_key(module: &str, from: &str) -> Option<String> {
    if !module.starts_with('.') {
        return None;
    }
    ancestor(from, 1).and_then(|base| resolve(base, module))
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
    for ext in [".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"] {
        if let Some(s) = last.strip_suffix(ext) {
            stem = s;
            break;
        }
    }
    parts.push(stem);
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(module: &str, names: &[&str]) -> Import {
        Import {
            line: 0,
            module: module.to_owned(),
            names: names.iter().map(|n| (*n).to_owned()).collect(),
        }
    }

    #[test]
    fn imports_resolve_to_workspace_files() {
        let mut modules = Modules::default();
        for (path, language) in [
            ("src/click/__init__.py", Language::Python),
            ("src/click/core.py", Language::Python),
            ("tests/typing/typing_options.py", Language::Python),
            ("src/store.ts", Language::TypeScript),
            ("src/a/index.ts", Language::TypeScript),
            ("src/org/x/Foo.java", Language::Java),
        ] {
            modules.add(path, language);
        }
        // Module, names it binds, importing file, its language, the names from the workspace.
        type Row<'a> = (&'a str, &'a [&'a str], &'a str, Language, &'a [&'a str]);
        let rows: &[Row] = &[
            (
                "click",
                &["click"],
                "tests/t.py",
                Language::Python,
                &["click"],
            ),
            (
                "click.core",
                &["Command"],
                "t.py",
                Language::Python,
                &["Command"],
            ),
            (
                ".core",
                &["Command"],
                "src/click/testing.py",
                Language::Python,
                &["Command"],
            ),
            (
                "..core",
                &["C"],
                "src/click/sub/x.py",
                Language::Python,
                &["C"],
            ),
            ("...core", &["C"], "src/click/x.py", Language::Python, &[]),
            (
                ".",
                &["core", "os"],
                "src/click/x.py",
                Language::Python,
                &["core"],
            ),
            ("typing", &["t"], "src/click/x.py", Language::Python, &[]),
            ("core", &["C"], "x.py", Language::Python, &["C"]),
            (
                "./store",
                &["Store"],
                "src/index.ts",
                Language::TypeScript,
                &["Store"],
            ),
            (
                "../store.js",
                &["S"],
                "src/b/x.ts",
                Language::TypeScript,
                &["S"],
            ),
            ("./a", &["A"], "src/x.ts", Language::TypeScript, &["A"]),
            ("../../store", &["S"], "src/x.ts", Language::TypeScript, &[]),
            ("store", &["S"], "src/x.ts", Language::TypeScript, &[]),
            (
                "org.x.Foo",
                &["Foo"],
                "src/org/y/B.java",
                Language::Java,
                &["Foo"],
            ),
            (
                "org.x.Foo.bar",
                &["bar"],
                "src/org/y/B.java",
                Language::Java,
                &["bar"],
            ),
            (
                "java.util.List",
                &["List"],
                "src/org/y/B.java",
                Language::Java,
                &[],
            ),
            (
                "org.x.Foo",
                &["Foo"],
                "src/org/y/B.cs",
                Language::CSharp,
                &[],
            ),
        ];
        for &(module, names, from, language, expected) in rows {
            let import = import(module, names);
            let got = modules.names_from_workspace(&import, from, language);
            assert_eq!(got, expected, "{module} from {from}");
        }
    }

    #[test]
    fn imports_name_workspace_files() {
        let mut modules = Modules::default();
        for (path, language) in [
            ("src/click/__init__.py", Language::Python),
            ("src/click/core.py", Language::Python),
            ("src/click/types.py", Language::Python),
            ("tests/core.py", Language::Python),
            ("src/store.ts", Language::TypeScript),
            ("src/a/index.ts", Language::TypeScript),
            ("src/ui/View.tsx", Language::Tsx),
            ("src/org/x/Foo.java", Language::Java),
            ("src/org/x/Bar.java", Language::Java),
            ("src/org/x/sub/Baz.java", Language::Java),
            ("Lib/Shop/Cart.cs", Language::CSharp),
            ("Lib/Shop/Order.cs", Language::CSharp),
        ] {
            modules.add(path, language);
        }
        // Module, names it binds, importing file, its language, the files it names.
        type Row<'a> = (&'a str, &'a [&'a str], &'a str, Language, &'a [&'a str]);
        let rows: &[Row] = &[
            (
                "click",
                &["click"],
                "t.py",
                Language::Python,
                &["src/click/__init__.py"],
            ),
            (
                "click",
                &["core", "echo"],
                "t.py",
                Language::Python,
                &["src/click/__init__.py", "src/click/core.py"],
            ),
            // A tail names every file it ends: both `core.py`s.
            (
                "core",
                &["C"],
                "x.py",
                Language::Python,
                &["src/click/core.py", "tests/core.py"],
            ),
            (
                ".core",
                &["Command"],
                "src/click/testing.py",
                Language::Python,
                &["src/click/core.py"],
            ),
            (
                ".",
                &["core", "types"],
                "src/click/x.py",
                Language::Python,
                &["src/click/core.py", "src/click/types.py"],
            ),
            (
                ".",
                &["core", "echo"],
                "src/click/x.py",
                Language::Python,
                &["src/click/__init__.py", "src/click/core.py"],
            ),
            ("..core", &["C"], "src/click/x.py", Language::Python, &[]),
            (
                "os.path",
                &["path"],
                "src/click/x.py",
                Language::Python,
                &[],
            ),
            (
                "./store",
                &["Store"],
                "src/index.ts",
                Language::TypeScript,
                &["src/store.ts"],
            ),
            (
                "../a",
                &["A"],
                "src/ui/View.tsx",
                Language::Tsx,
                &["src/a/index.ts"],
            ),
            ("store", &["S"], "src/x.ts", Language::TypeScript, &[]),
            (
                "org.x.Foo",
                &["Foo"],
                "src/org/y/B.java",
                Language::Java,
                &["src/org/x/Foo.java"],
            ),
            (
                "org.x.Foo.bar",
                &["bar"],
                "src/org/y/B.java",
                Language::Java,
                &["src/org/x/Foo.java"],
            ),
            // A package's wildcard: the files directly in its folder, not its subpackages'.
            (
                "org.x",
                &[],
                "src/org/y/B.java",
                Language::Java,
                &["src/org/x/Bar.java", "src/org/x/Foo.java"],
            ),
            ("java.util", &[], "src/org/y/B.java", Language::Java, &[]),
            (
                "Shop",
                &[],
                "App/Program.cs",
                Language::CSharp,
                &["Lib/Shop/Cart.cs", "Lib/Shop/Order.cs"],
            ),
            (
                "Shop.Cart",
                &["C"],
                "App/Program.cs",
                Language::CSharp,
                &["Lib/Shop/Cart.cs"],
            ),
            ("org.x", &[], "App/Program.cs", Language::CSharp, &[]),
        ];
        for &(module, names, from, language, expected) in rows {
            let import = import(module, names);
            let got = modules.files_named(&import, from, language);
            assert_eq!(got, expected, "{module} from {from}");
        }
    }

    #[test]
    fn ancestors() {
        assert_eq!(ancestor("a/b/c.py", 1), Some("a/b"));
        assert_eq!(ancestor("a/b/c.py", 3), Some(""));
        assert_eq!(ancestor("a/b/c.py", 4), None);
        assert_eq!(ancestor("c.py", 1), Some(""));
        assert_eq!(ancestor("", 1), None);
    }
}
