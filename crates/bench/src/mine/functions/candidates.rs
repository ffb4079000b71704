//! The functions of a Python file that could be EvoCodeBench cases: module-level functions and
//! the methods of module-level classes (tree-sitter), each with its signature's and body's lines
//! as the benchmark numbers them (the body after the docstring), the body's indentation, the
//! docstring, and the line Python reports as the function's first (`co_firstlineno`: the first
//! decorator's, else the `def`'s), by which a tracer's calls are matched to it.

use tree_sitter::Node;

use crossfile_engine::lang::{Language, parse};

/// A function that could be a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The file, relative to the workspace, `/`-separated.
    pub path: String,
    /// The module's dotted name and the function's qualified name.
    pub namespace: String,
    /// `function` or `method`.
    pub kind: &'static str,
    /// 1-based, inclusive: from the `def` line to the line of the header's `:`.
    pub signature: (usize, usize),
    /// 1-based, inclusive: the statements after the docstring.
    pub body: (usize, usize),
    pub indent: usize,
    /// The docstring, dedented.
    pub docstring: Option<String>,
    /// `co_firstlineno`, 1-based.
    pub first_line: usize,
}

/// Why a function is not a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unfit {
    /// Its body is empty after the docstring, or only `pass`, `...` or `raise
    /// NotImplementedError`.
    Trivial,
    /// The body shares a line with the header, or is indented with tabs.
    Layout,
}

/// The candidates of `text` (the file at `path`), and the functions left out with why.
pub fn candidates(path: &str, text: &str) -> (Vec<Candidate>, Vec<(String, Unfit)>) {
    let mut found = Vec::new();
    let mut unfit = Vec::new();
    let Some(tree) = parse(Language::Python, text) else {
        return (found, unfit);
    };
    let module = module_name(path);
    let mut visit = |node: Node, class: Option<&str>| {
        let qualified = match (class, name_of(node, text)) {
            (_, None) => return,
            (Some(class), Some(name)) => format!("{class}.{name}"),
            (None, Some(name)) => name,
        };
        let namespace = if module.is_empty() {
            qualified
        } else {
            format!("{module}.{qualified}")
        };
        match candidate(node, text, class.is_some()) {
            Ok(mut c) => {
                c.path = path.to_string();
                c.namespace = namespace;
                found.push(c);
            }
            Err(why) => unfit.push((namespace, why)),
        }
    };
    let root = tree.root_node();
    for statement in named_children(root) {
        let definition = undecorated(statement);
        match definition.kind() {
            "function_definition" => visit(statement, None),
            "class_definition" => {
                let Some(class) = name_of(statement, text) else {
                    continue;
                };
                let Some(body) = definition.child_by_field_name("body") else {
                    continue;
                };
                for member in named_children(body) {
                    if undecorated(member).kind() == "function_definition" {
                        visit(member, Some(&class));
                    }
                }
            }
            _ => {}
        }
    }
    (found, unfit)
}

/// The dotted module of a workspace path: `src/` and `__init__` dropped.
pub fn module_name(path: &str) -> String {
    let path = path.strip_suffix(".py").unwrap_or(path);
    let path = path.strip_prefix("src/").unwrap_or(path);
    let path = path.strip_suffix("/__init__").unwrap_or(path);
    if path == "__init__" {
        return String::new();
    }
    path.replace('/', ".")
}

/// `node` (a function, possibly decorated) as a candidate, its path and namespace left empty.
fn candidate(node: Node, text: &str, method: bool) -> Result<Candidate, Unfit> {
    let function = undecorated(node);
    let body = function.child_by_field_name("body").ok_or(Unfit::Trivial)?;
    let colon = children(function)
        .into_iter()
        .rfind(|c| c.kind() == ":" && c.start_byte() < body.start_byte())
        .ok_or(Unfit::Layout)?;
    let statements = named_children(body);
    let docstring = statements.first().and_then(|s| docstring_of(*s, text));
    let rest = &statements[usize::from(docstring.is_some())..];
    let (first, last) = match (rest.first(), rest.last()) {
        (Some(first), Some(last)) => (*first, *last),
        _ => return Err(Unfit::Trivial),
    };
    if rest.len() == 1 && is_placeholder(first, text) {
        return Err(Unfit::Trivial);
    }
    let header_end = colon.start_position().row;
    let body_start = first.start_position().row;
    if body_start <= header_end {
        return Err(Unfit::Layout);
    }
    let line = text.lines().nth(body_start).unwrap_or_default();
    let indent = first.start_position().column;
    if !line.as_bytes().iter().take(indent).all(|&b| b == b' ') {
        return Err(Unfit::Layout);
    }
    Ok(Candidate {
        path: String::new(),
        namespace: String::new(),
        kind: if method { "method" } else { "function" },
        signature: (function.start_position().row + 1, header_end + 1),
        body: (body_start + 1, last.end_position().row + 1),
        indent,
        docstring,
        first_line: node.start_position().row + 1,
    })
}

/// The text of a docstring statement, dedented; `None` for any other statement.
fn docstring_of(statement: Node, text: &str) -> Option<String> {
    if statement.kind() != "expression_statement" || statement.named_child_count() != 1 {
        return None;
    }
    let string = statement.named_child(0)?;
    if string.kind() != "string" {
        return None;
    }
    let raw = string.utf8_text(text.as_bytes()).ok()?;
    let quote = ["\"\"\"", "'''", "\"", "'"].into_iter().find(|q| {
        raw.trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .starts_with(q)
    })?;
    let start = raw.find(quote)? + quote.len();
    let inner = raw.get(start..raw.len().checked_sub(quote.len())?)?;
    Some(cleandoc(inner))
}

/// A docstring's text as Python's `inspect.cleandoc` gives it: the first line stripped, the
/// others dedented by their common indentation, blank lines at either end dropped.
fn cleandoc(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = if i == 0 {
            line.trim()
        } else {
            line.get(indent..).unwrap_or("").trim_end()
        };
        out.push(line.to_string());
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// `pass`, `...` or `raise NotImplementedError…`: a body that says it is not written.
fn is_placeholder(statement: Node, text: &str) -> bool {
    let source = statement
        .utf8_text(text.as_bytes())
        .unwrap_or_default()
        .trim();
    source == "pass" || source == "..." || source.starts_with("raise NotImplementedError")
}

fn name_of(node: Node, text: &str) -> Option<String> {
    let name = undecorated(node).child_by_field_name("name")?;
    name.utf8_text(text.as_bytes()).ok().map(str::to_string)
}

/// The definition a `decorated_definition` wraps, else the node itself.
fn undecorated(node: Node) -> Node {
    if node.kind() == "decorated_definition" {
        node.child_by_field_name("definition").unwrap_or(node)
    } else {
        node
    }
}

fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"import os


def top(a,
        b):
    """Adds.

    Twice.
    """
    total = a + b
    return total * 2


@decorated
def wrapped(x):
    return x


def todo():
    """Not yet."""
    raise NotImplementedError("later")


def one_line(): return 1


class Store:
    def get(self, key):
        value = self.data.get(key)
        return value

    def outer(self):
        def inner():
            return 1
        return inner()
"#;

    #[test]
    fn functions_and_methods_are_found_with_the_benchmarks_line_numbers() {
        let (found, unfit) = candidates("pkg/store.py", FILE);
        let by_name = |n: &str| found.iter().find(|c| c.namespace == n).cloned();
        let top = by_name("pkg.store.top").expect("top");
        assert_eq!((top.signature, top.body, top.indent), ((4, 5), (10, 11), 4));
        assert_eq!(top.docstring.as_deref(), Some("Adds.\n\nTwice."));
        assert_eq!((top.kind, top.first_line), ("function", 4));
        // Python's first line of a decorated function is its decorator's.
        let wrapped = by_name("pkg.store.wrapped").expect("wrapped");
        assert_eq!((wrapped.signature, wrapped.first_line), ((15, 15), 14));
        let get = by_name("pkg.store.Store.get").expect("get");
        assert_eq!((get.kind, get.body, get.indent), ("method", (29, 30), 8));
        // A nested function is part of its method's body, not a candidate.
        let outer = by_name("pkg.store.Store.outer").expect("outer");
        assert_eq!(outer.body, (33, 35));
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(unfit.contains(&("pkg.store.todo".into(), Unfit::Trivial)));
        assert!(unfit.contains(&("pkg.store.one_line".into(), Unfit::Layout)));
    }

    #[test]
    fn modules_are_named_as_they_are_imported() {
        assert_eq!(module_name("src/pkg/mod.py"), "pkg.mod");
        assert_eq!(module_name("pkg/__init__.py"), "pkg");
        assert_eq!(module_name("app.py"), "app");
        assert_eq!(module_name("__init__.py"), "");
    }
}
