//! The miner's rule: which identifier uses are cross-file, and which lines are too trivial.
//!
//! An identifier *use* in file F (a tree-sitter identifier leaf outside comments, strings and
//! import, `using` and `package` statements that declares nothing: not a parameter, variable,
//! definition or member name, keyword argument or object key) is *cross-file* when its name is
//! not a keyword, not a dunder (`__init__`) and not defined in F (by F's outline), and
//! - for a member access (`x.name`, `x?.name`): some other file of F's language family defines
//!   the name (a function, method or class of the index's outlines; two characters at least);
//! - for a bare name that F declares no variable or parameter of, in Python and TypeScript (whose
//!   module scopes need imports): F imports the name, and the import is from a module of the
//!   workspace (resolved as [`modules`](super::modules) says: `from .core import Command`,
//!   `import click`, `import { Store } from "./store"`) or another file defines the name;
//! - for such a bare name in Java and C# (same-package types and inherited members need no
//!   import): another file defines it, or F imports it from a module of the workspace.
//!
//! The cursor of a line is right before its first cross-file use, so the reference (the rest of
//! the line) starts with that identifier. A line is skipped when it is blank, comment-only or
//! punctuation, longer than [`MAX_LINE_CHARS`], or when that reference has fewer than
//! [`MIN_REFERENCE_CHARS`] non-space characters.

use std::collections::HashSet;

use super::leaves::{self, Role};
use super::modules::Modules;
use crossfile_engine::lang::{Language, Outline};

/// The fewest non-whitespace characters a reference may have.
pub const MIN_REFERENCE_CHARS: usize = 3;

/// Longer lines (in characters) are skipped: they are generated data, not code to complete.
pub const MAX_LINE_CHARS: usize = 300;

/// One file as the rule sees it.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// Workspace-relative, `/`-separated.
    pub path: &'a str,
    pub language: Language,
    pub text: &'a str,
    pub outline: &'a Outline,
}

/// A cursor the rule keeps: right before the first cross-file identifier use of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UseSite {
    /// 0-based line.
    pub line: u32,
    /// Byte offset of the cursor in the file's text.
    pub offset: usize,
    /// Byte offset of the end of the cursor's line (its `\n`, or the end of the text).
    pub line_end: usize,
    /// The cross-file identifier the reference starts with.
    pub name: String,
}

/// What the workspace defines, per language family: definition names and module paths.
pub struct CrossFileNames<'a> {
    defined: HashSet<(&'static str, &'a str)>,
    modules: Modules,
}

impl<'a> CrossFileNames<'a> {
    /// The names of every file's definitions, and every file's module path.
    pub fn new(files: impl IntoIterator<Item = Source<'a>>) -> CrossFileNames<'a> {
        let mut defined = HashSet::new();
        let mut modules = Modules::default();
        for file in files {
            let family = file.language.name();
            for symbol in &file.outline.symbols {
                defined.insert((family, symbol.name.as_str()));
            }
            modules.add(file.path, file.language);
        }
        CrossFileNames { defined, modules }
    }

    /// The cursors of `file`: per line, right before its first cross-file identifier use, in
    /// line order; lines the trivial-line rules reject are left out. `tree` is `file.text` parsed.
    pub fn cursors(&self, file: Source<'_>, tree: &tree_sitter::Tree) -> Vec<UseSite> {
        let family = file.language.name();
        let text = file.text;
        let own: HashSet<&str> = file
            .outline
            .symbols
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        // Names F's imports bind: all of them, and those from a module of the workspace.
        let imported: HashSet<&str> = file
            .outline
            .imports
            .iter()
            .flat_map(|i| i.names.iter().map(String::as_str))
            .collect();
        let from_workspace: HashSet<&str> = file
            .outline
            .imports
            .iter()
            .flat_map(|i| {
                self.modules
                    .names_from_workspace(i, file.path, file.language)
            })
            .collect();
        let leaves = leaves::identifiers(tree);
        let local: HashSet<&str> = leaves
            .iter()
            .filter(|l| l.role == Role::Binding)
            .filter_map(|l| text.get(l.start..l.end))
            .collect();
        let qualifies = |name: &str, member: bool| {
            if file.language.is_keyword(name)
                || (name.len() > 4 && name.starts_with("__") && name.ends_with("__"))
                || own.contains(name)
            {
                return false;
            }
            let elsewhere = name.chars().nth(1).is_some() && self.defined.contains(&(family, name));
            if member {
                return elsewhere;
            }
            if local.contains(name) {
                return false;
            }
            match file.language {
                // A bare name from another module must be imported.
                Language::Python | Language::TypeScript | Language::Tsx => {
                    imported.contains(name) && (elsewhere || from_workspace.contains(name))
                }
                // Types of the same package or namespace and inherited members need no import.
                Language::Java | Language::CSharp => elsewhere || from_workspace.contains(name),
            }
        };

        let mut out: Vec<UseSite> = Vec::new();
        // The line whose first cross-file use was judged: later uses on it are not cursors.
        let mut judged: Option<u32> = None;
        for leaf in leaves.iter().filter(|l| l.role == Role::Use) {
            let (Some(name), Some(before)) =
                (text.get(leaf.start..leaf.end), text.get(..leaf.start))
            else {
                continue;
            };
            if judged == Some(leaf.line) {
                continue;
            }
            if !qualifies(name, before.trim_end().ends_with('.')) {
                continue;
            }
            judged = Some(leaf.line);
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[leaf.start..]
                .find('\n')
                .map_or(text.len(), |i| leaf.start + i);
            let line = &text[line_start..line_end];
            let reference = &text[leaf.start..line_end];
            if is_trivial_line(line, file.language)
                || line.chars().count() > MAX_LINE_CHARS
                || is_trivial_reference(reference)
            {
                continue;
            }
            out.push(UseSite {
                line: leaf.line,
                offset: leaf.start,
                line_end,
                name: name.to_owned(),
            });
        }
        out
    }
}

/// Whether a line offers nothing to complete: blank, comment-only, or no word character at all
/// (lone brackets and punctuation).
pub fn is_trivial_line(line: &str, language: Language) -> bool {
    let code = line.trim();
    let comment = match language {
        Language::Python => code.starts_with('#'),
        _ => ["//", "/*", "*"].iter().any(|p| code.starts_with(p)),
    };
    code.is_empty() || comment || !code.chars().any(is_word_char)
}

/// Whether a reference is too short to be worth a case: fewer than [`MIN_REFERENCE_CHARS`]
/// non-whitespace characters, or no identifier character.
pub fn is_trivial_reference(reference: &str) -> bool {
    reference.chars().filter(|c| !c.is_whitespace()).count() < MIN_REFERENCE_CHARS
        || !reference.chars().any(|c| c.is_alphabetic() || c == '_')
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
#[path = "rule_tests.rs"]
mod tests;
