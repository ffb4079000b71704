//! What a Python file defines, as a body inside it can reach it: the names bound at module level
//! (definitions, assignments, imports — also inside module-level `if`/`try`/`with`) and the
//! members of the class that encloses a line (its methods, class-level assignments and the
//! `self.x` assigned in any of its methods).

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

/// What a module-level name is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// Defined in the file (function, class, assignment).
    Local,
    /// `from module import name` (`original` is the name in `module`).
    From { module: String, original: String },
    /// `import module` (bound to its first part) or `import module as alias`.
    Module(String),
}

/// A file's module-level names, and the class around a line.
#[derive(Clone, Debug, Default)]
pub struct FileNames {
    pub module_level: BTreeMap<String, Binding>,
    /// The enclosing class's name and its members.
    pub class: Option<(String, BTreeSet<String>)>,
}

/// The names of `tree` (parsed from `src`), with the class that holds the function defined on
/// 0-based `line`.
pub fn file_names(src: &str, tree: &tree_sitter::Tree, line: usize) -> FileNames {
    let root = tree.root_node();
    let mut names = FileNames::default();
    module_bindings(root, src, &mut names.module_level);
    names.class = enclosing_class(root, line).map(|class| {
        let name = field_text(class, "name", src).unwrap_or_default();
        let mut members = BTreeSet::new();
        if let Some(body) = class.child_by_field_name("body") {
            class_members(body, src, &mut members);
        }
        (name, members)
    });
    names
}

fn text<'s>(node: Node, src: &'s str) -> &'s str {
    node.utf8_text(src.as_bytes()).unwrap_or_default()
}

fn field_text(node: Node, field: &str, src: &str) -> Option<String> {
    node.child_by_field_name(field)
        .map(|n| text(n, src).to_string())
}

fn children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The definition a `decorated_definition` wraps, else the node itself.
fn undecorated(node: Node) -> Node {
    if node.kind() == "decorated_definition" {
        node.child_by_field_name("definition").unwrap_or(node)
    } else {
        node
    }
}

fn module_bindings(block: Node, src: &str, out: &mut BTreeMap<String, Binding>) {
    for statement in children(block) {
        let statement = undecorated(statement);
        match statement.kind() {
            "function_definition" | "class_definition" => {
                if let Some(name) = field_text(statement, "name", src) {
                    out.insert(name, Binding::Local);
                }
            }
            "expression_statement" => {
                for target in assignment_targets(statement) {
                    identifiers_in(target, src, &mut |name| {
                        out.insert(name.to_string(), Binding::Local);
                    });
                }
            }
            "import_statement" => import(statement, src, out),
            "import_from_statement" => import_from(statement, src, out),
            "if_statement" | "try_statement" | "with_statement" | "else_clause" | "elif_clause"
            | "except_clause" | "finally_clause" | "block" => {
                module_bindings(statement, src, out);
            }
            _ => {}
        }
    }
}

/// The left sides of the assignments an expression statement holds.
fn assignment_targets(statement: Node) -> Vec<Node> {
    children(statement)
        .into_iter()
        .filter(|n| matches!(n.kind(), "assignment" | "augmented_assignment"))
        .filter_map(|n| n.child_by_field_name("left"))
        .collect()
}

/// The plain names a target binds (`a`, `a, b`, `(a, [b, c])`); attributes and subscripts bind
/// none.
fn identifiers_in(target: Node, src: &str, found: &mut dyn FnMut(&str)) {
    match target.kind() {
        "identifier" => found(text(target, src)),
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "list_splat_pattern"
        | "parenthesized_expression"
        | "tuple"
        | "list" => {
            for child in children(target) {
                identifiers_in(child, src, found);
            }
        }
        _ => {}
    }
}

fn import(statement: Node, src: &str, out: &mut BTreeMap<String, Binding>) {
    let mut cursor = statement.walk();
    for name in statement.children_by_field_name("name", &mut cursor) {
        match name.kind() {
            "dotted_name" => {
                let module = text(name, src);
                let first = module.split('.').next().unwrap_or_default();
                out.insert(first.to_string(), Binding::Module(first.to_string()));
            }
            "aliased_import" => {
                if let (Some(module), Some(alias)) = (
                    field_text(name, "name", src),
                    field_text(name, "alias", src),
                ) {
                    out.insert(alias, Binding::Module(module));
                }
            }
            _ => {}
        }
    }
}

fn import_from(statement: Node, src: &str, out: &mut BTreeMap<String, Binding>) {
    let Some(module) = field_text(statement, "module_name", src) else {
        return;
    };
    let mut cursor = statement.walk();
    for name in statement.children_by_field_name("name", &mut cursor) {
        let (original, bound) = match name.kind() {
            "dotted_name" => (text(name, src).to_string(), text(name, src).to_string()),
            "aliased_import" => match (
                field_text(name, "name", src),
                field_text(name, "alias", src),
            ) {
                (Some(original), Some(alias)) => (original, alias),
                _ => continue,
            },
            _ => continue,
        };
        out.insert(
            bound,
            Binding::From {
                module: module.clone(),
                original,
            },
        );
    }
}

/// The innermost class whose body directly holds a function starting on `line`.
fn enclosing_class(node: Node, line: usize) -> Option<Node> {
    for child in children(node) {
        let start = child.start_position().row;
        let end = child.end_position().row;
        if start > line || end < line {
            continue;
        }
        let definition = undecorated(child);
        if definition.kind() == "class_definition"
            && let Some(body) = definition.child_by_field_name("body")
        {
            let direct = children(body).into_iter().map(undecorated).any(|member| {
                member.kind() == "function_definition" && member.start_position().row == line
            });
            if direct {
                return Some(definition);
            }
            return enclosing_class(body, line);
        }
        return enclosing_class(child, line);
    }
    None
}

fn class_members(body: Node, src: &str, out: &mut BTreeSet<String>) {
    for member in children(body) {
        let member = undecorated(member);
        match member.kind() {
            "function_definition" | "class_definition" => {
                if let Some(name) = field_text(member, "name", src) {
                    out.insert(name);
                }
                if let Some(inner) = member.child_by_field_name("body") {
                    self_attributes(inner, src, out);
                }
            }
            "expression_statement" => {
                for target in assignment_targets(member) {
                    identifiers_in(target, src, &mut |name| {
                        out.insert(name.to_string());
                    });
                }
            }
            _ => {}
        }
    }
}

/// The `x` of every `self.x = …` (also augmented, annotated, in a tuple) under `node`.
fn self_attributes(node: Node, src: &str, out: &mut BTreeSet<String>) {
    if matches!(node.kind(), "assignment" | "augmented_assignment")
        && let Some(left) = node.child_by_field_name("left")
    {
        self_targets(left, src, out);
    }
    for child in children(node) {
        self_attributes(child, src, out);
    }
}

fn self_targets(target: Node, src: &str, out: &mut BTreeSet<String>) {
    match target.kind() {
        "attribute" => {
            let object = target.child_by_field_name("object");
            if object.is_some_and(|o| text(o, src) == "self")
                && let Some(name) = field_text(target, "attribute", src)
            {
                out.insert(name);
            }
        }
        "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" => {
            for child in children(target) {
                self_targets(child, src, out);
            }
        }
        _ => {}
    }
}
