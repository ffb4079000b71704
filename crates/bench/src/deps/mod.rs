//! The repository dependencies a generated Python function body uses, named as EvoCodeBench
//! names them (`<module>.<Class>.<member>` intra-class, `<module>.<name>` intra-file,
//! `<imported module>.<name>` cross-file), for its Recall@k: the body's references
//! ([`uses`]) resolved against what the function's file defines and imports ([`definitions`],
//! parsed with tree-sitter).
//!
//! The module's dotted name is the case's namespace without the function's qualified name
//! (`ollama._client.Client.chat` in `Client` → `ollama._client`); a relative import is resolved
//! against it.

mod definitions;
mod uses;

use std::collections::BTreeSet;

pub use definitions::{Binding, FileNames, file_names};
pub use uses::{Uses, uses_of};

use crossfile_engine::lang::{Language, parse};

/// Where a function is: its file's text, its signature's lines (1-based, inclusive), its
/// namespace.
pub struct Site<'a> {
    pub file_text: &'a str,
    pub signature: (usize, usize),
    pub namespace: &'a str,
}

/// What a site's file offers a body, resolved once and applied to each sample.
pub struct Resolver {
    module: String,
    names: FileNames,
    /// The function's signature lines: its parameters are the body's, its annotations and
    /// defaults count as used (the benchmark's dependencies include them).
    signature: String,
}

impl Resolver {
    /// Parses the site's file. `None` when it cannot be parsed at all.
    pub fn new(site: &Site) -> Option<Resolver> {
        let tree = parse(Language::Python, site.file_text)?;
        let (first, last) = site.signature;
        let def_line = first.checked_sub(1)?;
        let signature: String = site
            .file_text
            .split_inclusive('\n')
            .skip(def_line)
            .take(last.checked_sub(def_line)?)
            .collect();
        let names = file_names(site.file_text, &tree, def_line);
        let function = function_name(site.file_text, &tree, def_line);
        let qualified = match (&names.class, function) {
            (Some((class, _)), Some(function)) => format!("{class}.{function}"),
            (None, Some(function)) => function,
            (_, None) => String::new(),
        };
        let module = site
            .namespace
            .strip_suffix(&qualified)
            .and_then(|m| m.strip_suffix('.'))
            .map_or_else(
                || {
                    // The namespace names the function differently: drop its last part(s).
                    let parts: Vec<&str> = site.namespace.split('.').collect();
                    let drop = if names.class.is_some() { 2 } else { 1 };
                    parts[..parts.len().saturating_sub(drop)].join(".")
                },
                str::to_string,
            );
        Some(Resolver {
            module,
            names,
            signature,
        })
    }

    /// The dependencies `body` uses.
    pub fn dependencies(&self, body: &str) -> BTreeSet<String> {
        let uses = uses_of(&self.signature, body);
        let mut out = BTreeSet::new();
        if let Some((class, members)) = &self.names.class {
            for (object, attribute) in &uses.attributes {
                let own = object == "self" || object == "cls" || object == class;
                if own && members.contains(attribute) {
                    out.insert(format!("{}.{class}.{attribute}", self.module));
                }
            }
        }
        for name in &uses.names {
            if let Some(target) = self.resolve(name) {
                out.insert(target);
            }
        }
        for (object, attribute) in &uses.attributes {
            let Some(binding) = self.names.module_level.get(object) else {
                continue;
            };
            let base = match binding {
                Binding::Module(module) => Some(module.clone()),
                _ => self.resolve(object),
            };
            if let Some(base) = base {
                out.insert(format!("{base}.{attribute}"));
            }
        }
        out
    }

    /// The dependency a free module-level `name` is.
    fn resolve(&self, name: &str) -> Option<String> {
        match self.names.module_level.get(name)? {
            Binding::Local => Some(format!("{}.{name}", self.module)),
            Binding::From { module, original } => {
                Some(format!("{}.{original}", absolute(module, &self.module)))
            }
            Binding::Module(_) => None,
        }
    }
}

/// `module` as an absolute dotted name: a relative one (`.x`, `..x`) is taken from the package
/// of `importer` (the importing module).
fn absolute(module: &str, importer: &str) -> String {
    let dots = module.chars().take_while(|&c| c == '.').count();
    if dots == 0 {
        return module.to_string();
    }
    let package: Vec<&str> = importer.split('.').collect();
    let keep = package.len().saturating_sub(dots);
    let mut parts: Vec<&str> = package[..keep].to_vec();
    let rest = &module[dots..];
    if !rest.is_empty() {
        parts.push(rest);
    }
    parts.join(".")
}

/// The name of the function whose `def` is on 0-based `line`.
fn function_name(src: &str, tree: &tree_sitter::Tree, line: usize) -> Option<String> {
    fn find(node: tree_sitter::Node, line: usize) -> Option<tree_sitter::Node> {
        if node.kind() == "function_definition" && node.start_position().row == line {
            return Some(node);
        }
        if node.start_position().row > line || node.end_position().row < line {
            return None;
        }
        let mut cursor = node.walk();
        let children: Vec<_> = node.named_children(&mut cursor).collect();
        children.into_iter().find_map(|child| find(child, line))
    }
    let name = find(tree.root_node(), line)?.child_by_field_name("name")?;
    name.utf8_text(src.as_bytes()).ok().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "\
import logging
import numpy as np
from pkg._types import RequestError, Options as Opts
from .sibling import helper
from . import util

logger = logging.getLogger()
LIMIT = 3

class Other:
    pass

class Client:
    retries = 2

    def __init__(self, store):
        self.store = store
        self.count, self.seen = 0, set()

    def _send(self):
        pass

    def chat(self, model: Opts = None):
        return model
";

    fn resolver() -> Resolver {
        let site = Site {
            file_text: FILE,
            signature: (23, 23),
            namespace: "pkg._client.Client.chat",
        };
        Resolver::new(&site).expect("parses")
    }

    #[test]
    fn each_kind_of_dependency_is_named_as_the_benchmark_names_it() {
        let resolver = resolver();
        assert_eq!(resolver.module, "pkg._client");
        let got = resolver.dependencies(
            "if not model:\n    raise RequestError('no model')\n\
             logger.info(LIMIT)\n\
             self._send()\n\
             x = self.store.get(self.retries) + self.unknown\n\
             opts = Opts(np.zeros(3))\n\
             Other()\n\
             helper(util.f())\n\
             return self.count\n",
        );
        let want: BTreeSet<String> = [
            // intra-class: methods, class attributes, attributes set in any method
            "pkg._client.Client._send",
            "pkg._client.Client.store",
            "pkg._client.Client.retries",
            "pkg._client.Client.count",
            // intra-file: module-level names
            "pkg._client.logger",
            "pkg._client.logger.info",
            "pkg._client.LIMIT",
            "pkg._client.Other",
            // cross-file: imported names, by their original name, relative imports resolved
            "pkg._types.RequestError",
            "pkg._types.Options",
            "pkg.sibling.helper",
            "pkg.util",
            "pkg.util.f",
            "numpy.zeros",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_local_name_shadows_the_module_level_one() {
        let got = resolver().dependencies("logger = make()\nlogger.info(1)\nreturn LIMIT\n");
        let want: BTreeSet<String> = ["pkg._client.LIMIT", "pkg._types.Options"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            got, want,
            "the signature's annotation counts, the shadowed logger not"
        );
    }

    #[test]
    fn relative_modules_resolve_against_the_importer() {
        assert_eq!(absolute(".x", "a.b.c"), "a.b.x");
        assert_eq!(absolute("..x", "a.b.c"), "a.x");
        assert_eq!(absolute(".", "a.b.c"), "a.b");
        assert_eq!(absolute("y.z", "a.b.c"), "y.z");
    }
}
