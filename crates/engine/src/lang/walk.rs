//! The outline walk every language shares: one iterative depth-first pass over named nodes.
//!
//! The walk keeps an explicit stack, so a deeply nested tree (a 100k-term expression) cannot
//! overflow the call stack. Each language supplies a [`Visit`] that says, per node, what to
//! record and whether to look inside.
//!
//! A walk was preferred to tree-sitter queries: "a method is a function directly in a class
//! body" and "the range includes decorators" are simpler to track while walking, and the walk
//! skips expressions, which matters on 500k-line workspaces.

use std::marker::PhantomData;
use std::ops::Range;

use tree_sitter::{Node, Tree, TreeCursor};

use super::{Import, Outline, Symbol, SymbolKind};

/// What the children of a node know about it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Frame {
    /// The children sit directly in a class body: functions there are methods.
    pub class_body: bool,
    /// The node declares a class; its body (a child) is a class body.
    pub class_decl: bool,
    /// The children are the declarators of a `const` or `let` declaration (TypeScript).
    pub lexical: bool,
    /// The first line of a wrapper (decorators, `export`, `const`) that the next definition
    /// among the children starts at. The first named child that is not a decorator or a
    /// comment takes it.
    pub start: Option<u32>,
}

/// One language's rules for the walk.
pub(super) trait Visit<'t> {
    /// Records what `node` defines or imports. Returns the frame its children see, or `None` to
    /// skip them.
    fn visit(&mut self, node: Node<'t>, parent: &mut Frame, out: &mut Outline) -> Option<Frame>;
}

/// A language's outline visitor: the source it reads and one reusable cursor. `L` is the
/// language's marker type, whose file holds the rules (`impl Visit for Visitor<'_, L>`).
pub(super) struct Visitor<'t, L> {
    pub src: &'t str,
    pub cursor: TreeCursor<'t>,
    language: PhantomData<L>,
}

impl<'t, L> Visitor<'t, L> {
    pub(super) fn new(src: &'t str, tree: &'t Tree) -> Self {
        Visitor {
            src,
            cursor: tree.walk(),
            language: PhantomData,
        }
    }
}

/// Walks the named nodes of `tree` in document order.
pub(super) fn walk<'t>(tree: &'t Tree, visitor: &mut impl Visit<'t>) -> Outline {
    let mut out = Outline::default();
    depth_first(tree, Frame::default(), |node, _, parent| {
        if node.is_named() {
            visitor.visit(node, parent, &mut out)
        } else {
            None
        }
    });
    out
}

/// Visits every node of `tree`, named or not, in document order, iteratively (no recursion, so
/// any depth is safe). `enter` gets the node, its field name and the state its parent gave its
/// children (the root gets `root`); it returns the state for the node's own children, or `None`
/// to skip them.
pub fn depth_first<'t, S>(
    tree: &'t Tree,
    root: S,
    mut enter: impl FnMut(Node<'t>, Option<&'t str>, &mut S) -> Option<S>,
) {
    let mut cursor = tree.walk();
    // The state of the node the cursor is under; the root sees `root`.
    let mut states = vec![root];
    loop {
        let node = cursor.node();
        let field = cursor.field_name();
        let children = states
            .last_mut()
            .and_then(|parent| enter(node, field, parent));
        if let Some(state) = children
            && cursor.goto_first_child()
        {
            states.push(state);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            states.pop();
        }
    }
}

/// Calls `f` on every descendant of `node` in document order, with its field name; `f`
/// returns whether to look inside the descendant too. Reuses `cursor`.
pub(super) fn descendants<'t>(
    cursor: &mut TreeCursor<'t>,
    node: Node<'t>,
    mut f: impl FnMut(Node<'t>, Option<&'t str>) -> bool,
) {
    cursor.reset(node);
    if !cursor.goto_first_child() {
        return;
    }
    let mut depth = 1usize;
    loop {
        let child = cursor.node();
        if f(child, cursor.field_name()) && cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if depth == 1 || !cursor.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}

/// The text of `node`; empty if its range is not a slice of `src` (a stale tree).
pub(super) fn text<'s>(node: Node, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The text of `node` without whitespace (`a. b` is `a.b`); allocates once.
pub(super) fn compact(node: Node, src: &str) -> String {
    text(node, src)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// The 0-based line `node` starts on.
pub(super) fn row(node: Node) -> u32 {
    to_u32(node.start_position().row)
}

/// The half-open line range of `node`, starting at `start` instead if that is earlier.
///
/// A node that ends at the start of a line (column 0) does not cover that line.
pub(super) fn lines(node: Node, start: Option<u32>) -> Range<u32> {
    let first = row(node);
    let end = node.end_position();
    let last = to_u32(end.row);
    let end = if end.column == 0 && last > first {
        last
    } else {
        last.saturating_add(1)
    };
    start.map_or(first, |s| s.min(first))..end
}

/// Records a definition named by `name` (no record if the name is missing or empty).
pub(super) fn define(
    out: &mut Outline,
    src: &str,
    node: Node,
    name: Option<Node>,
    kind: SymbolKind,
    start: Option<u32>,
) {
    let Some(name) = name else { return };
    let name = text(name, src);
    if name.is_empty() {
        return;
    }
    out.symbols.push(Symbol {
        name: name.to_owned(),
        kind,
        lines: lines(node, start),
    });
}

/// Records an import.
pub(super) fn import(out: &mut Outline, node: Node, module: String, names: Vec<String>) {
    out.imports.push(import_at(node, module, names));
}

/// Records a re-export (`export * from './a'`).
pub(super) fn reexport(out: &mut Outline, node: Node, module: String, names: Vec<String>) {
    out.reexports.push(import_at(node, module, names));
}

fn import_at(node: Node, module: String, names: Vec<String>) -> Import {
    Import {
        line: row(node),
        module,
        names,
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Renders an outline as text, one line per symbol and per import, for snapshot tests.
#[cfg(test)]
pub(super) fn render(outline: &Outline) -> String {
    use std::fmt::Write;

    let mut s = String::new();
    for sym in &outline.symbols {
        let kind = match sym.kind {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
        };
        let _ = writeln!(
            s,
            "{kind:<8} {} {}..{}",
            sym.name, sym.lines.start, sym.lines.end
        );
    }
    for (kind, imports) in [
        ("import", &outline.imports),
        ("reexport", &outline.reexports),
    ] {
        for imp in imports {
            let _ = writeln!(
                s,
                "{kind:<8} {} {} [{}]",
                imp.line,
                imp.module,
                imp.names.join(", ")
            );
        }
    }
    s
}

/// Parses and outlines `text`, and renders it; also checks that it never panics on mangled
/// variants of the fixture (cut at every tenth char boundary, CRLF line ends).
#[cfg(test)]
pub(super) fn outline_text(language: super::Language, text: &str) -> String {
    for (i, (at, _)) in text.char_indices().enumerate() {
        if i % 10 == 0 {
            let cut = &text[..at];
            if let Some(tree) = super::parse(language, cut) {
                super::outline(language, cut, &tree);
            }
        }
    }
    let crlf = text.replace('\n', "\r\n");
    let crlf_tree =
        super::parse(language, &crlf).map(|tree| super::outline(language, &crlf, &tree));
    let Some(tree) = super::parse(language, text) else {
        return "parse failed".to_owned();
    };
    let outline = super::outline(language, text, &tree);
    if let Some(crlf_outline) = crlf_tree {
        assert_eq!(
            render(&crlf_outline),
            render(&outline),
            "CRLF line ends change the outline"
        );
    }
    render(&outline)
}
