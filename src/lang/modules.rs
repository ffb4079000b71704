//! Which imports name a module of the workspace: module paths resolved against its files.
//!
//! Every file gives a key, its path without the extension (`src/click/core`); a package's
//! `__init__.py` or a folder's `index.ts` also gives its folder (`src/click`). Relative imports
//! (Python `.core`, `..`; TypeScript `./store`, `../a/b.js`) must resolve to a key exactly;
//! absolute Python, Java and C# module paths (`click.core`, `org.a.Foo`) must equal a key's tail
//! at a folder boundary (`click/core` of `src/click/core`), or, for Java and C#, the path
//! without its last part (a static member import). TypeScript's bare specifiers (`mobx`) name
//! packages through `package.json`, which is not indexed, so they never count.

use std::collections::HashSet;

use crate::lang::{Import, Language};

/// The module keys of a workspace, per language family.
#[derive(Default)]
pub struct Modules {
    exact: HashSet<(&'static str, String)>,
    tails: HashSet<(&'static str, String)>,
}

impl Modules {
    /// Adds the file at `path` (workspace-relative, `/`-separated).
    pub fn add(&mut self, path: &str, language: Language) {
        let family = language.name();
        let key = strip_extension(path);
        let mut keys = vec![key];
        if let Some((folder, stem)) = key.rsplit_once('/')
            && matches!(stem, "__init__" | "index")
        {
            keys.push(folder);
        }
        for key in keys {
            self.exact.insert((family, key.to_owned()));
            let mut tail = key;
            loop {
                self.tails.insert((family, tail.to_owned()));
                match tail.split_once('/') {
                    Some((_, rest)) => tail = rest,
                    None => break,
                }
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
        match language {
            Language::Python => {
                let dots = module.len() - module.trim_start_matches('.').len();
                let rest = module[dots..].replace('.', "/");
                if dots == 0 {
                    return if self.tails.contains(&(family, rest)) {
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
                        .filter(|n| self.exact.contains(&(family, join(base, n))))
                        .collect();
                }
                if self.exact.contains(&(family, join(base, &rest))) {
                    all()
                } else {
                    Vec::new()
                }
            }
            Language::TypeScript | Language::Tsx => {
                if !module.starts_with('.') {
                    return Vec::new();
                }
                let key = ancestor(from, 1).and_then(|base| resolve(base, module));
                if key.is_some_and(|key| self.exact.contains(&(family, key))) {
                    all()
                } else {
                    Vec::new()
                }
            }
            Language::Java | Language::CSharp => {
                let path = module.split('<').next().unwrap_or(module).replace('.', "/");
                let parent = path.rsplit_once('/').map(|(p, _)| p.to_owned());
                if self.tails.contains(&(family, path))
                    || parent.is_some_and(|p| self.tails.contains(&(family, p)))
                {
                    all()
                } else {
                    Vec::new()
                }
            }
        }
    }
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
    if dir.is_empty() {
        rest.to_owned()
    } else {
        format!("{dir}/{rest}")
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
    fn ancestors() {
        assert_eq!(ancestor("a/b/c.py", 1), Some("a/b"));
        assert_eq!(ancestor("a/b/c.py", 3), Some(""));
        assert_eq!(ancestor("a/b/c.py", 4), None);
        assert_eq!(ancestor("c.py", 1), Some(""));
        assert_eq!(ancestor("", 1), None);
    }
}
