//! Where a retrieved chunk comes from, relative to the file being completed: that file itself, its
//! folder, a module it imports, or elsewhere in the workspace.
//!
//! The first that applies, in this order: [`Origin::SameFile`] (the completion's own file),
//! [`Origin::SameDir`] (another file of the same folder), [`Origin::Imported`] (a file one of the
//! completion file's imports names, resolved against the workspace's files of its language family
//! by [`Modules::files_named`], and what such a file passes on: a TypeScript barrel's
//! `export * from`, a Python package's `__init__.py` imports), [`Origin::Elsewhere`]. What a
//! Java or C# file sees without an import counts as imported too: its own package's classes in
//! another source root (`src/test/java/org/a/` for `src/main/java/org/a/`), and the files of its
//! namespace and each enclosing one ([`lang::namespaces`], resolved as a `using` of each). Only
//! the path decides, so context a benchmark case ships (a path, no lines) has an origin too.

use std::collections::HashSet;

use super::Query;
use crate::index::Snapshot;
use crate::lang::{self, Import, Language, Modules, Outline};
use crate::workspace::relative_folder;

/// Where a chunk comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// The file being completed.
    SameFile,
    /// Another file of the completion file's folder.
    SameDir,
    /// A file of a module the completion file imports.
    Imported,
    /// Any other file.
    Elsewhere,
}

impl Origin {
    /// Every origin, in order of precedence.
    pub const ALL: [Origin; 4] = [
        Origin::SameFile,
        Origin::SameDir,
        Origin::Imported,
        Origin::Elsewhere,
    ];

    /// The name run files, reports and the language server write: `same_file`, `same_dir`,
    /// `imported`, `elsewhere`.
    pub fn name(self) -> &'static str {
        match self {
            Origin::SameFile => "same_file",
            Origin::SameDir => "same_dir",
            Origin::Imported => "imported",
            Origin::Elsewhere => "elsewhere",
        }
    }

    /// The origin [`Origin::name`] gives `name`.
    pub fn from_name(name: &str) -> Option<Origin> {
        Origin::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// The origins of chunks for one completion file: its path and the files its imports name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origins {
    /// The completion file, workspace-relative.
    path: String,
    /// The workspace files its imports name (itself left out).
    imported: HashSet<String>,
}

impl Origins {
    /// The origins for `query`'s file in `snapshot`: its imports are those of the snapshot's
    /// outline of it (the file as indexed for this query), or, when the snapshot lacks it, of
    /// the query's own text; they are resolved against the snapshot's files of the same
    /// language family.
    pub fn new(snapshot: &Snapshot, query: &Query) -> Origins {
        let Some(language) = query.language else {
            return Origins::without_imports(&query.path);
        };
        let (imports, namespaces) = match snapshot.file(&query.path) {
            // The parse gives the namespaces; its imports are the outline's (the same text).
            Some(entry) if lang::declares_namespaces(language) => declared(language, &entry.text),
            Some(entry) => (entry.outline.imports.clone(), Vec::new()),
            None => declared(language, &format!("{}{}", query.left, query.right)),
        };
        let outline = |path: &str| snapshot.file(path).map(|entry| &entry.outline);
        match snapshot.modules(language) {
            Some(modules) => Origins::resolved(
                &query.path,
                language,
                &imports,
                &namespaces,
                modules,
                &outline,
            ),
            None => Origins::without_imports(&query.path),
        }
    }

    /// The origins for the file at `path` in `language` with `imports`, declaring `namespaces`
    /// (a Java package, C# namespaces: [`lang::namespaces`]), among `files` (each
    /// workspace-relative, with its language; other language families are passed over).
    pub fn from_parts<'f>(
        path: &str,
        language: Language,
        imports: &[Import],
        namespaces: &[String],
        files: impl IntoIterator<Item = (&'f str, Language)>,
    ) -> Origins {
        if imports.is_empty() && namespaces.is_empty() {
            return Origins::without_imports(path);
        }
        let mut modules = Modules::default();
        for (file, file_language) in files {
            if file_language.name() == language.name() {
                modules.add(file, file_language);
            }
        }
        Origins::resolved(path, language, imports, namespaces, &modules, &|_| None)
    }

    /// The origins for the file at `path` with `imports`, declaring `namespaces`, resolved
    /// against `modules` (its language family's files). A module whose `outline` passes names
    /// on from others (a TypeScript barrel's `export * from`, a Python package's `__init__.py`:
    /// [`Outline::passed_on`]) makes those imported too, followed [`MAX_HOPS`] deep.
    fn resolved<'o>(
        path: &str,
        language: Language,
        imports: &[Import],
        namespaces: &[String],
        modules: &Modules,
        outline: &dyn Fn(&str) -> Option<&'o Outline>,
    ) -> Origins {
        let mut origins = Origins::without_imports(path);
        let implicit: Vec<Import> = namespaces
            .iter()
            .map(|module| Import {
                line: 0,
                module: module.clone(),
                names: Vec::new(),
            })
            .collect();
        // Files whose re-exports are still to follow, with the names the import wanted and the
        // hops taken to reach them.
        let mut pending: Vec<(&str, &[String], usize)> = Vec::new();
        for import in imports.iter().chain(&implicit) {
            for file in modules.files_named(import, path, language) {
                if file != path && origins.imported.insert(file.to_owned()) {
                    pending.push((file, &import.names, 1));
                }
            }
        }
        let mut followed = 0;
        while let Some((file, wanted, hops)) = pending.pop() {
            let Some(passed) = outline(file) else {
                continue;
            };
            for reexport in passes_on(passed, file, wanted) {
                for next in modules.files_named(reexport, file, language) {
                    if followed == MAX_PASSED_ON {
                        return origins;
                    }
                    if next != path && origins.imported.insert(next.to_owned()) {
                        followed += 1;
                        if hops < MAX_HOPS {
                            pending.push((next, wanted, hops + 1));
                        }
                    }
                }
            }
        }
        origins
    }

    /// The origins for the file at `path` when nothing of its imports is known: same file,
    /// same folder or elsewhere.
    pub fn without_imports(path: &str) -> Origins {
        Origins {
            path: path.to_owned(),
            imported: HashSet::new(),
        }
    }

    /// Whether one of the completion file's imports names the file at `path` (whatever its
    /// folder: [`Origins::of`] says `SameDir` first).
    pub fn imports(&self, path: &str) -> bool {
        self.imported.contains(path)
    }

    /// Where a chunk of the file at `path` (workspace-relative) comes from.
    pub fn of(&self, path: &str) -> Origin {
        if path == self.path {
            Origin::SameFile
        } else if relative_folder(path) == relative_folder(&self.path) {
            Origin::SameDir
        } else if self.imported.contains(path) {
            Origin::Imported
        } else {
            Origin::Elsewhere
        }
    }
}

/// How many re-exports deep an import is followed (`index.ts` → `external.ts` → `types.ts`).
const MAX_HOPS: usize = 4;

/// How many files re-exports may add to one file's imports: a barrel of a whole library says
/// little past that.
const MAX_PASSED_ON: usize = 64;

/// What `outline` (of the file at `path`) passes on to an import that wanted `wanted`: the
/// re-exports naming one of them, and every `export *`; all of them when the import names none
/// of what the file passes on or defines (`import pkg`, `import * as ns`: the name is the
/// module's, not one of its members).
fn passes_on<'o>(outline: &'o Outline, path: &str, wanted: &[String]) -> Vec<&'o Import> {
    let passed = outline.passed_on(path);
    let named = |name: &String| {
        passed.iter().any(|r| r.names.contains(name))
            || outline.symbols.iter().any(|s| s.name == *name)
    };
    if !wanted.iter().any(named) {
        return passed.iter().collect();
    }
    passed
        .iter()
        .filter(|r| r.names.is_empty() || r.names.iter().any(|n| wanted.contains(n)))
        .collect()
}

/// The imports and the declared namespaces ([`lang::namespaces`]) of `text`, parsed once as
/// `language`; none past [`lang::MAX_PARSE_BYTES`], as the index leaves such files unparsed.
fn declared(language: Language, text: &str) -> (Vec<Import>, Vec<String>) {
    if text.len() > lang::MAX_PARSE_BYTES {
        return (Vec::new(), Vec::new());
    }
    match lang::parse(language, text) {
        Some(tree) => (
            lang::outline(language, text, &tree).imports,
            lang::namespaces(language, text, &tree),
        ),
        None => (Vec::new(), Vec::new()),
    }
}

#[cfg(test)]
#[path = "origin_tests.rs"]
mod tests;
