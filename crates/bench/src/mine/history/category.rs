//! Each line of an added file sorted into Long Code Arena's categories, by where the identifiers
//! it uses are defined (the first that applies, in this order):
//!
//! - `committed`: it uses a name that another file added or changed by the same commit defines
//!   and the parent's tree does not (so the context cannot show it);
//! - `inproject`: it uses a name some file of the parent's tree (of the same language family)
//!   defines, and the file itself does not;
//! - `infile`: it uses a name the file defines on an earlier line;
//! - `common`: every name it uses is common ([`super::common`]: keywords, builtins, the standard
//!   library, names the file imports from it), and it uses one at least;
//! - `non_informative`: a short or trivial line — an import, `package` or `using` line, a
//!   decorator or annotation alone, no word character (braces), or fewer than
//!   [`MIN_INFORMATIVE_CHARS`] non-space characters (`pass`, `break;`, `} else {`);
//! - `random`: the rest, of which a sample is taken.
//!
//! A *use* is an identifier leaf outside comments, strings and imports that declares nothing
//! (`mine::lines`'s leaves); definitions are the outlines' functions, methods and classes. Blank
//! and comment-only lines, and lines longer than the line miner's bound, are no targets at all.
//! Names of one character and dunder names (`__init__`) decide nothing.

use std::collections::HashSet;

use super::common::{is_common, is_standard_import};
use crate::bench::cases::history::Category;
use crate::mine::lines::leaves::{self, Role};
use crate::mine::lines::{MAX_LINE_CHARS, is_trivial_line};
use crossfile_engine::lang::{Language, Outline};

/// Fewer non-space characters than this make a line non-informative.
pub const MIN_INFORMATIVE_CHARS: usize = 6;

/// A target line: its category and the names that decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// 0-based.
    pub line: u32,
    pub category: Category,
    pub identifiers: Vec<String>,
}

/// What the file's surroundings define: names of the parent's tree, and names the commit's other
/// files define that the tree does not.
pub struct Defined<'a> {
    pub project: &'a HashSet<String>,
    pub committed: &'a HashSet<String>,
}

/// Every target line of `text` (parsed as `tree`, outlined as `outline`), in line order.
pub fn targets(
    language: Language,
    text: &str,
    tree: &tree_sitter::Tree,
    outline: &Outline,
    defined: &Defined<'_>,
) -> Vec<Target> {
    let lines: Vec<&str> = text.split('\n').collect();
    // Each line's uses, with whether each is a member (`x.name`); the names the file binds.
    let mut uses: Vec<Vec<(&str, bool)>> = vec![Vec::new(); lines.len()];
    let mut locals: HashSet<&str> = HashSet::new();
    for leaf in leaves::identifiers(tree) {
        let Some(name) = text.get(leaf.start..leaf.end) else {
            continue;
        };
        if leaf.role == Role::Binding {
            locals.insert(name);
        }
        if leaf.role != Role::Use || !deciding(name) {
            continue;
        }
        let member = text[..leaf.start].trim_end().ends_with('.');
        if let Some(slot) = uses.get_mut(leaf.line as usize) {
            slot.push((name, member));
        }
    }
    let own: HashSet<&str> = outline.symbols.iter().map(|s| s.name.as_str()).collect();
    let standard: HashSet<&str> = outline
        .imports
        .iter()
        .filter(|i| is_standard_import(language, i))
        .flat_map(|i| i.names.iter().map(String::as_str))
        .collect();
    let import_lines: HashSet<u32> = outline.imports.iter().map(|i| i.line).collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Ok(number) = u32::try_from(n) else { break };
        if line.trim().is_empty()
            || is_comment(line, language)
            || line.chars().count() > MAX_LINE_CHARS
        {
            continue;
        }
        let names = &uses[n];
        let matching = |keep: &dyn Fn(&str, bool) -> bool| -> Vec<String> {
            let mut found: Vec<String> = Vec::new();
            for (name, _) in names.iter().filter(|(name, member)| keep(name, *member)) {
                if !found.iter().any(|f| f == name) {
                    found.push((*name).to_string());
                }
            }
            found
        };
        // A bare name the file binds is its own variable, whatever other files define.
        let outside = |name: &str, member: bool| member || !locals.contains(name);
        let earlier = |name: &str, _: bool| {
            outline
                .symbols
                .iter()
                .any(|s| s.name == name && s.lines.start < number)
        };
        let decided = [
            (
                Category::Committed,
                matching(&|name, member| defined.committed.contains(name) && outside(name, member)),
            ),
            (
                Category::Inproject,
                matching(&|name, member| {
                    defined.project.contains(name) && !own.contains(name) && outside(name, member)
                }),
            ),
            (Category::Infile, matching(&earlier)),
        ]
        .into_iter()
        .find(|(_, names)| !names.is_empty());
        let (category, identifiers) = match decided {
            Some(found) => found,
            None if !names.is_empty()
                && names
                    .iter()
                    .all(|(name, _)| is_common(language, name) || standard.contains(name)) =>
            {
                (Category::Common, matching(&|_, _| true))
            }
            None if is_non_informative(line, language, import_lines.contains(&number)) => {
                (Category::NonInformative, Vec::new())
            }
            None => (Category::Random, Vec::new()),
        };
        out.push(Target {
            line: number,
            category,
            identifiers,
        });
    }
    out
}

/// Whether a name can decide a line's category: two characters at least, not a dunder.
fn deciding(name: &str) -> bool {
    name.chars().nth(1).is_some()
        && !(name.len() > 4 && name.starts_with("__") && name.ends_with("__"))
}

fn is_comment(line: &str, language: Language) -> bool {
    let code = line.trim();
    match language {
        Language::Python => code.starts_with('#'),
        _ => ["//", "/*", "*"].iter().any(|p| code.starts_with(p)),
    }
}

/// A short or trivial line (see the module's documentation).
fn is_non_informative(line: &str, language: Language, imports: bool) -> bool {
    let code = line.trim();
    let first = code.split_whitespace().next().unwrap_or("");
    imports
        || is_trivial_line(line, language)
        || code.chars().filter(|c| !c.is_whitespace()).count() < MIN_INFORMATIVE_CHARS
        || matches!(first, "import" | "from" | "package")
        || (first == "using" && !code.contains('(') && !code.contains('='))
        || (code.starts_with('@') && !code.contains(' '))
        || (code.starts_with('[') && code.ends_with(']') && language == Language::CSharp)
}
