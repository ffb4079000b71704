//! What a Python function body refers to: the free names it reads (not bound inside it), the
//! attributes it reads off each of them (`name.attr`), and the `self.x` it touches.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::harness::splice::{adjust_indent, dedent};
use crossfile_engine::lang::{Language, parse};

/// The references of one body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uses {
    /// Free names (read, called, or used as a type or base), bound nowhere in the body.
    pub names: BTreeSet<String>,
    /// `(name, attr)` for each `name.attr` with a free `name` (`self` included).
    pub attributes: BTreeSet<(String, String)>,
}

/// The references of the function `signature` (its `def` lines, any indentation) with `body`
/// (any indentation): the parameters are bound, their annotations and defaults are references.
/// Unparsable parts are skipped: tree-sitter recovers around errors.
pub fn uses_of(signature: &str, body: &str) -> Uses {
    let wrapped = format!(
        "{}\n{}",
        dedent(signature).trim_end(),
        adjust_indent(body, 4)
    );
    let Some(tree) = parse(Language::Python, &wrapped) else {
        return Uses::default();
    };
    let mut bound = BTreeSet::new();
    bindings(tree.root_node(), &wrapped, &mut bound);
    let mut uses = Uses::default();
    references(tree.root_node(), &wrapped, &mut uses);
    uses.names.retain(|name| !bound.contains(name));
    uses.attributes
        .retain(|(name, _)| name == "self" || name == "cls" || !bound.contains(name));
    uses
}

fn text<'s>(node: Node, src: &'s str) -> &'s str {
    node.utf8_text(src.as_bytes()).unwrap_or_default()
}

fn children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Every name the body binds: assignment, loop and comprehension targets, `as` names,
/// walrus names, nested functions and classes, and parameters.
fn bindings(node: Node, src: &str, out: &mut BTreeSet<String>) {
    let target = match node.kind() {
        "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
            node.child_by_field_name("left")
        }
        "named_expression" | "function_definition" | "class_definition" => {
            node.child_by_field_name("name")
        }
        "as_pattern_target" => Some(node),
        "parameters" | "lambda_parameters" => Some(node),
        _ => None,
    };
    if let Some(target) = target {
        targets(target, src, out);
    }
    for child in children(node) {
        bindings(child, src, out);
    }
}

fn targets(node: Node, src: &str, out: &mut BTreeSet<String>) {
    match node.kind() {
        "identifier" => {
            out.insert(text(node, src).to_string());
        }
        // `a.b = …` and `a[i] = …` bind nothing.
        "attribute" | "subscript" => {}
        "typed_parameter" | "default_parameter" | "typed_default_parameter" => {
            if let Some(name) = node.child_by_field_name("name") {
                targets(name, src, out);
            } else if let Some(first) = children(node).first() {
                targets(*first, src, out);
            }
        }
        _ => {
            for child in children(node) {
                targets(child, src, out);
            }
        }
    }
}

fn references(node: Node, src: &str, uses: &mut Uses) {
    match node.kind() {
        "identifier" => {
            uses.names.insert(text(node, src).to_string());
        }
        "attribute" => {
            let (object, attribute) = (
                node.child_by_field_name("object"),
                node.child_by_field_name("attribute"),
            );
            if let Some(object) = object {
                if let (true, Some(attribute)) = (object.kind() == "identifier", attribute) {
                    uses.attributes.insert((
                        text(object, src).to_string(),
                        text(attribute, src).to_string(),
                    ));
                }
                references(object, src, uses);
            }
            // The attribute's own name is not a free name.
            return;
        }
        // `f(key=…)`: the key is not a name.
        "keyword_argument" => {
            if let Some(value) = node.child_by_field_name("value") {
                references(value, src, uses);
            }
            return;
        }
        // The function itself: everything but its own name.
        "function_definition" if node.start_position().row == 0 => {
            for field in ["parameters", "return_type", "body"] {
                if let Some(part) = node.child_by_field_name(field) {
                    references(part, src, uses);
                }
            }
            return;
        }
        _ => {}
    }
    for child in children(node) {
        references(child, src, uses);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn free_names_attributes_and_self_are_found_and_bound_names_are_not() {
        let uses = uses_of(
            "    def f(self, pairs: Sequence[Pair], path=DEFAULT) -> Result:",
            "        total = helper(self.items, key=len)\n\
             \x20       for item, extra in pairs:\n\
             \x20           logger.info(item)\n\
             \x20       squares = [x * x for x in range(3)]\n\
             \x20       with open(path) as handle:\n\
             \x20           data = json.loads(handle.read())\n\
             \x20       self.count += Counter.start\n\
             \x20       return total, data, RequestError\n",
        );
        assert_eq!(
            uses.names,
            set(&[
                "Counter",
                "DEFAULT",
                "Pair",
                "RequestError",
                "Result",
                "Sequence",
                "helper",
                "json",
                "len",
                "logger",
                "open",
                "range"
            ])
        );
        let attributes: BTreeSet<(String, String)> = uses.attributes;
        for (object, attribute) in [
            ("self", "items"),
            ("self", "count"),
            ("logger", "info"),
            ("json", "loads"),
            ("Counter", "start"),
        ] {
            assert!(
                attributes.contains(&(object.into(), attribute.into())),
                "{object}.{attribute}"
            );
        }
        assert!(
            !attributes.iter().any(|(o, _)| o == "handle"),
            "a bound name's attributes are local"
        );
    }
}
