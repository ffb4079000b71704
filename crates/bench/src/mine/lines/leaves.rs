//! The identifier leaves of a parsed file and their role: a use, a binding (a declared name) or
//! a label (a keyword argument's or an object key's name), outside comments, strings and imports.

use tree_sitter::{Node, Tree};

use crossfile_engine::lang;

/// What an identifier leaf does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A reference to something named elsewhere or earlier.
    Use,
    /// The name being declared: a parameter, a variable, a loop or `catch` variable, a
    /// definition's or member's own name, a destructuring target.
    Binding,
    /// A name that is neither: a keyword argument's name, an object key, a statement label.
    Label,
}

/// One identifier leaf.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leaf {
    pub start: usize,
    pub end: usize,
    /// 0-based line.
    pub line: u32,
    pub role: Role,
}

/// The identifier leaves (named leaves whose kind ends in `identifier`, and TypeScript's
/// destructuring shorthand `{ a } = …`) in document order,
/// outside comments, string literals, import-like statements and namespace names.
pub(crate) fn identifiers(tree: &Tree) -> Vec<Leaf> {
    let mut out = Vec::new();
    // Each node's children see its kind as their parent's; the root's parent is "".
    lang::depth_first(tree, "", |node, field, parent| {
        let parent = *parent;
        if is_excluded(node, field, parent) {
            return None;
        }
        if node.child_count() == 0
            && node.is_named()
            && (node.kind().ends_with("identifier")
                || node.kind() == "shorthand_property_identifier_pattern")
            && node.start_position().row == node.end_position().row
            && let Ok(line) = u32::try_from(node.start_position().row)
        {
            out.push(Leaf {
                start: node.start_byte(),
                end: node.end_byte(),
                line,
                role: role(node.kind(), field, parent),
            });
        }
        Some(node.kind())
    });
    out
}

/// Subtrees whose identifiers never make a case: comments, string literals, imports, `using`
/// directives, `package` declarations, re-exports (`export { a } from "./a"`) and the names of
/// C# namespaces.
fn is_excluded(node: Node, field: Option<&str>, parent: &str) -> bool {
    let kind = node.kind();
    kind.contains("comment")
        || kind.contains("string")
        || matches!(
            kind,
            "import_statement"
                | "import_from_statement"
                | "future_import_statement"
                | "import_declaration"
                | "import_alias"
                | "package_declaration"
                | "using_directive"
                | "character_literal"
                | "text_block"
        )
        || (kind == "export_statement" && node.child_by_field_name("source").is_some())
        || (field == Some("name") && parent.contains("namespace"))
}

/// The role of an identifier leaf of kind `kind`, in field `field` of a `parent` node, by the
/// grammars' conventions (checked against tree-sitter's Python, Java, TypeScript and C# trees).
fn role(kind: &str, field: Option<&str>, parent: &str) -> Role {
    let declares = |p: &str| {
        [
            "declaration",
            "declarator",
            "definition",
            "signature",
            "parameter",
            "statement",
            "enum_constant",
            "enum_assignment",
        ]
        .iter()
        .any(|suffix| p.ends_with(suffix))
    };
    match (field, parent) {
        _ if kind == "statement_identifier" => Role::Label,
        _ if kind == "shorthand_property_identifier_pattern" => Role::Binding,
        (_, "labeled_statement" | "break_statement" | "continue_statement") => Role::Label,
        (Some("key"), _) => Role::Label,
        (Some("name"), p) if p.contains("argument") => Role::Label,
        (Some("name"), p) if declares(p) => Role::Binding,
        (Some("pattern" | "parameter" | "parameters"), _) => Role::Binding,
        (Some("left"), p) if p.contains("for") || p.contains("assignment") => Role::Binding,
        (
            None,
            "parameters"
            | "lambda_parameters"
            | "typed_parameter"
            | "list_splat_pattern"
            | "dictionary_splat_pattern"
            | "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "as_pattern_target"
            | "array_pattern"
            | "type_parameter",
        ) => Role::Binding,
        _ => Role::Use,
    }
}
