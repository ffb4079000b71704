//! Per-language knowledge: tree-sitter grammar, comment syntax, keywords, definitions and imports.

use std::cell::RefCell;
use std::ops::Range;
use std::path::Path;

mod csharp;
mod java;
pub mod modules;
mod namespaces;
mod python;
pub mod skeleton;
mod typescript;
mod walk;

pub use modules::Modules;
pub use namespaces::{declares_namespaces, namespaces};
pub use walk::depth_first;

/// A language crossfile understands. TSX is TypeScript with JSX; it has its own grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Python,
    Java,
    TypeScript,
    Tsx,
    CSharp,
}

/// What a definition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// A function outside any class body (nested functions included), or an arrow function
    /// or function expression bound to a `const`/`let` name.
    Function,
    /// A function (or constructor) defined directly in a class body.
    Method,
    /// Classes, and their kin: interfaces, structs, enums, records.
    Class,
}

/// A definition found by the language's definitions query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The name as written (`__init__`, `Store`, `double` for `const double = () => …`).
    pub name: String,
    /// Function, method or class.
    pub kind: SymbolKind,
    /// 0-based, half-open line range of the whole definition.
    pub lines: Range<u32>,
}

/// An import statement and the names it brings in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    /// 0-based line of the statement.
    pub line: u32,
    /// The module or namespace path as written (`os.path`, `java.util.List`, `./store`).
    pub module: String,
    /// Names bound in the importing file (`List`, `path`, `Store`); empty for `import x.*`.
    pub names: Vec<String>,
}

/// The definitions and imports of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outline {
    /// Definitions at any depth, in document order (by start line).
    pub symbols: Vec<Symbol>,
    /// Import statements anywhere in the file, in document order; a Python `import a, b`
    /// gives one per module.
    pub imports: Vec<Import>,
    /// What the file passes on from other modules without binding it (TypeScript's
    /// `export * from './a'`, `export { A, B as C } from './b'`): `names` are the names it
    /// exports (empty for `export *`). Python has no such statement: a package's `__init__.py`
    /// passes on what it imports ([`Outline::passed_on`]).
    pub reexports: Vec<Import>,
}

impl Outline {
    /// What the file at `path` passes on to a module that imports it: its re-exports, and for a
    /// Python package's `__init__.py` its imports.
    pub fn passed_on(&self, path: &str) -> &[Import] {
        if is_package_init(path) {
            &self.imports
        } else {
            &self.reexports
        }
    }
}

/// Whether `path` is a Python package's `__init__.py`.
fn is_package_init(path: &str) -> bool {
    path.rsplit('/').next() == Some("__init__.py")
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 5] = [
        Language::Python,
        Language::Java,
        Language::TypeScript,
        Language::Tsx,
        Language::CSharp,
    ];

    /// The language of a file, from its extension (`.py`, `.java`, `.ts`, `.tsx`, `.cs`).
    /// TypeScript declaration files (`.d.ts`) are TypeScript too.
    pub fn from_path(path: &Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "py" => Some(Language::Python),
            "java" => Some(Language::Java),
            "ts" => Some(Language::TypeScript),
            "tsx" => Some(Language::Tsx),
            "cs" => Some(Language::CSharp),
            _ => None,
        }
    }

    /// The benchmark language name: `python`, `java`, `typescript` (TSX included), `csharp`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Java => "java",
            Language::TypeScript | Language::Tsx => "typescript",
            Language::CSharp => "csharp",
        }
    }

    /// The line-comment prefix: `#` for Python, `//` elsewhere.
    pub fn comment_prefix(self) -> &'static str {
        match self {
            Language::Python => "#",
            _ => "//",
        }
    }

    /// Keywords excluded from identifiers, as CrossCodeEval's metric defines them.
    /// The list is sorted (byte order); TSX shares TypeScript's.
    pub fn keywords(self) -> &'static [&'static str] {
        match self {
            Language::Python => python::KEYWORDS,
            Language::Java => java::KEYWORDS,
            Language::TypeScript | Language::Tsx => typescript::KEYWORDS,
            Language::CSharp => csharp::KEYWORDS,
        }
    }

    /// Whether `word` is one of [`Language::keywords`].
    pub fn is_keyword(self, word: &str) -> bool {
        self.keywords().binary_search(&word).is_ok()
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The largest file the index gives a syntax tree. A tree-sitter tree takes about 35 bytes of
/// memory per byte of source, so a larger file (only indexed when `workspace.max_file_bytes` is
/// raised past it) is indexed without one: no outline, and the `syntax` chunker cuts it into
/// line windows, as it does an unparsable file.
pub const MAX_PARSE_BYTES: usize = 4 << 20;

/// Parses `text`; `None` only if tree-sitter gives up (it is error tolerant, so that is rare).
///
/// Each thread keeps one parser per language, so parsing many files costs no parser setup.
pub fn parse(language: Language, text: &str) -> Option<tree_sitter::Tree> {
    thread_local! {
        static PARSERS: RefCell<[Option<tree_sitter::Parser>; Language::ALL.len()]> =
            const { RefCell::new([None, None, None, None, None]) };
    }
    PARSERS.with(|parsers| {
        // A re-entrant call (impossible today) gets a parser of its own instead of a panic.
        let Ok(mut parsers) = parsers.try_borrow_mut() else {
            return new_parser(language)?.parse(text, None);
        };
        let slot = &mut parsers[language.index()];
        if slot.is_none() {
            *slot = new_parser(language);
        }
        slot.as_mut()?.parse(text, None)
    })
}

fn new_parser(language: Language) -> Option<tree_sitter::Parser> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    Some(parser)
}

/// Definitions (functions, methods, classes) and imports of a parsed file.
///
/// Symbols and imports come in document order (by start). Methods are functions defined
/// directly in a class body; nested functions are functions. `text` must be the parsed text.
pub fn outline(language: Language, text: &str, tree: &tree_sitter::Tree) -> Outline {
    use walk::Visitor;
    match language {
        Language::Python => walk::walk(tree, &mut Visitor::<python::Python>::new(text, tree)),
        Language::Java => walk::walk(tree, &mut Visitor::<java::Java>::new(text, tree)),
        Language::TypeScript | Language::Tsx => walk::walk(
            tree,
            &mut Visitor::<typescript::TypeScript>::new(text, tree),
        ),
        Language::CSharp => walk::walk(tree, &mut Visitor::<csharp::CSharp>::new(text, tree)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::Language;

    /// The keyword lists equal, as sets, the ones CrossCodeEval's metric excludes.
    #[test]
    fn keywords_match_cceval() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/bench/conformance/cceval-keywords.json"
        );
        let json = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let json: serde_json::Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{path}: {e}"));
        for language in Language::ALL {
            let expected: BTreeSet<&str> = json[language.name()]
                .as_array()
                .unwrap_or_else(|| panic!("{path}: no list for {}", language.name()))
                .iter()
                .filter_map(|word| word.as_str())
                .collect();
            let ours: BTreeSet<&str> = language.keywords().iter().copied().collect();
            assert_eq!(ours, expected, "{language:?}");
            assert!(
                language.keywords().is_sorted(),
                "{language:?} keywords are not sorted"
            );
            assert!(language.is_keyword(language.keywords()[0]));
            assert!(!language.is_keyword("True"));
        }
    }
}
