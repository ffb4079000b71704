//! The package or namespaces a Java or C# file declares: what its code sees without an import.
//! A Java class sees every class of its own package; C# code sees the types of the namespace it
//! is declared in and of each enclosing namespace (`A.B.C` sees `A.B` and `A`).

use super::Language;

/// Whether files of `language` declare packages or namespaces that [`namespaces`] reads (Java,
/// C#): for the others it gives nothing, so a caller need not parse for it.
pub fn declares_namespaces(language: Language) -> bool {
    matches!(language, Language::Java | Language::CSharp)
}

/// What the file `text` (parsed as `tree`) declares and sees implicitly, as module paths: Java's
/// `package` (one), C#'s namespaces (block or file-scoped, nested ones joined to their parents)
/// each with every enclosing namespace, outermost last, without repeats. Empty for other
/// languages.
pub fn namespaces(language: Language, text: &str, tree: &tree_sitter::Tree) -> Vec<String> {
    if !declares_namespaces(language) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let root = tree.root_node();
    match language {
        Language::Java => {
            let mut cursor = root.walk();
            for child in root.named_children(&mut cursor) {
                if child.kind() == "package_declaration" {
                    let mut inner = child.walk();
                    let name = child
                        .named_children(&mut inner)
                        .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"));
                    if let Some(name) = name.and_then(|n| text.get(n.byte_range())) {
                        out.push(name.to_string());
                    }
                }
            }
        }
        _ => csharp(root, text, "", &mut out),
    }
    out
}

/// The namespaces declared under `node` (C#), with `prefix` the enclosing one's name.
fn csharp(node: tree_sitter::Node<'_>, text: &str, prefix: &str, out: &mut Vec<String>) {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if !matches!(
            child.kind(),
            "namespace_declaration" | "file_scoped_namespace_declaration"
        ) {
            continue;
        }
        let Some(name) = child
            .child_by_field_name("name")
            .and_then(|n| text.get(n.byte_range()))
        else {
            continue;
        };
        let name: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        let full = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}.{name}")
        };
        let mut enclosing = full.as_str();
        loop {
            if !out.iter().any(|n| n == enclosing) {
                out.push(enclosing.to_string());
            }
            match enclosing.rsplit_once('.') {
                Some((parent, _)) => enclosing = parent,
                None => break,
            }
        }
        if let Some(body) = child.child_by_field_name("body") {
            csharp(body, text, &full, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespaces(language: Language, text: &str) -> Vec<String> {
        let tree = crate::lang::parse(language, text).expect("parses");
        super::namespaces(language, text, &tree)
    }

    #[test]
    fn java_gives_its_package() {
        let text =
            "// header\npackage org.shop.model;\n\nimport java.util.List;\n\nclass Item {}\n";
        assert_eq!(namespaces(Language::Java, text), ["org.shop.model"]);
        assert_eq!(
            namespaces(Language::Java, "class Item {}\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn csharp_gives_each_namespace_and_its_enclosing_ones() {
        let block = "using System;\nnamespace Shop.Orders\n{\n    namespace Lines { class L {} }\n    class Order {}\n}\n";
        assert_eq!(
            namespaces(Language::CSharp, block),
            ["Shop.Orders", "Shop", "Shop.Orders.Lines"]
        );
        let scoped = "namespace App.Web;\n\nclass Program {}\n";
        assert_eq!(namespaces(Language::CSharp, scoped), ["App.Web", "App"]);
        assert_eq!(
            namespaces(Language::CSharp, "class P {}\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn other_languages_declare_none() {
        assert!(namespaces(Language::Python, "import os\n").is_empty());
        assert!(namespaces(Language::TypeScript, "namespace Ns {}\n").is_empty());
    }
}
