//! Imports resolved against small sets of workspace files: the names each binds from the
//! workspace and the files each names, in Python, TypeScript, Java and C#.

use super::*;

fn import(module: &str, names: &[&str]) -> Import {
    Import {
        line: 0,
        module: module.to_owned(),
        names: names.iter().map(|n| (*n).to_owned()).collect(),
    }
}

#[test]
fn imports_resolve_to_workspace_files() {
    let mut modules = Modules::default();
    for (path, language) in [
        ("src/click/__init__.py", Language::Python),
        ("src/click/core.py", Language::Python),
        ("tests/typing/typing_options.py", Language::Python),
        ("src/store.ts", Language::TypeScript),
        ("src/a/index.ts", Language::TypeScript),
        ("src/org/x/Foo.java", Language::Java),
    ] {
        modules.add(path, language);
    }
    // Module, names it binds, importing file, its language, the names from the workspace.
    type Row<'a> = (&'a str, &'a [&'a str], &'a str, Language, &'a [&'a str]);
    let rows: &[Row] = &[
        (
            "click",
            &["click"],
            "tests/t.py",
            Language::Python,
            &["click"],
        ),
        (
            "click.core",
            &["Command"],
            "t.py",
            Language::Python,
            &["Command"],
        ),
        (
            ".core",
            &["Command"],
            "src/click/testing.py",
            Language::Python,
            &["Command"],
        ),
        (
            "..core",
            &["C"],
            "src/click/sub/x.py",
            Language::Python,
            &["C"],
        ),
        ("...core", &["C"], "src/click/x.py", Language::Python, &[]),
        (
            ".",
            &["core", "os"],
            "src/click/x.py",
            Language::Python,
            &["core"],
        ),
        ("typing", &["t"], "src/click/x.py", Language::Python, &[]),
        ("core", &["C"], "x.py", Language::Python, &["C"]),
        (
            "./store",
            &["Store"],
            "src/index.ts",
            Language::TypeScript,
            &["Store"],
        ),
        (
            "../store.js",
            &["S"],
            "src/b/x.ts",
            Language::TypeScript,
            &["S"],
        ),
        ("./a", &["A"], "src/x.ts", Language::TypeScript, &["A"]),
        ("../../store", &["S"], "src/x.ts", Language::TypeScript, &[]),
        ("store", &["S"], "src/x.ts", Language::TypeScript, &[]),
        (
            "org.x.Foo",
            &["Foo"],
            "src/org/y/B.java",
            Language::Java,
            &["Foo"],
        ),
        (
            "org.x.Foo.bar",
            &["bar"],
            "src/org/y/B.java",
            Language::Java,
            &["bar"],
        ),
        (
            "java.util.List",
            &["List"],
            "src/org/y/B.java",
            Language::Java,
            &[],
        ),
        (
            "org.x.Foo",
            &["Foo"],
            "src/org/y/B.cs",
            Language::CSharp,
            &[],
        ),
    ];
    for &(module, names, from, language, expected) in rows {
        let import = import(module, names);
        let got = modules.names_from_workspace(&import, from, language);
        assert_eq!(got, expected, "{module} from {from}");
    }
}

#[test]
fn imports_name_workspace_files() {
    let mut modules = Modules::default();
    for (path, language) in [
        ("src/click/__init__.py", Language::Python),
        ("src/click/core.py", Language::Python),
        ("src/click/types.py", Language::Python),
        ("tests/core.py", Language::Python),
        ("src/store.ts", Language::TypeScript),
        ("src/a/index.ts", Language::TypeScript),
        ("src/ui/View.tsx", Language::Tsx),
        ("src/org/x/Foo.java", Language::Java),
        ("src/org/x/Bar.java", Language::Java),
        ("src/org/x/sub/Baz.java", Language::Java),
        ("Lib/Shop/Cart.cs", Language::CSharp),
        ("Lib/Shop/Order.cs", Language::CSharp),
    ] {
        modules.add(path, language);
    }
    // Module, names it binds, importing file, its language, the files it names.
    type Row<'a> = (&'a str, &'a [&'a str], &'a str, Language, &'a [&'a str]);
    let rows: &[Row] = &[
        (
            "click",
            &["click"],
            "t.py",
            Language::Python,
            &["src/click/__init__.py"],
        ),
        (
            "click",
            &["core", "echo"],
            "t.py",
            Language::Python,
            &["src/click/__init__.py", "src/click/core.py"],
        ),
        // A tail names every file it ends: both `core.py`s.
        (
            "core",
            &["C"],
            "x.py",
            Language::Python,
            &["src/click/core.py", "tests/core.py"],
        ),
        (
            ".core",
            &["Command"],
            "src/click/testing.py",
            Language::Python,
            &["src/click/core.py"],
        ),
        (
            ".",
            &["core", "types"],
            "src/click/x.py",
            Language::Python,
            &["src/click/core.py", "src/click/types.py"],
        ),
        (
            ".",
            &["core", "echo"],
            "src/click/x.py",
            Language::Python,
            &["src/click/__init__.py", "src/click/core.py"],
        ),
        ("..core", &["C"], "src/click/x.py", Language::Python, &[]),
        (
            "os.path",
            &["path"],
            "src/click/x.py",
            Language::Python,
            &[],
        ),
        (
            "./store",
            &["Store"],
            "src/index.ts",
            Language::TypeScript,
            &["src/store.ts"],
        ),
        (
            "../a",
            &["A"],
            "src/ui/View.tsx",
            Language::Tsx,
            &["src/a/index.ts"],
        ),
        ("store", &["S"], "src/x.ts", Language::TypeScript, &[]),
        (
            "org.x.Foo",
            &["Foo"],
            "src/org/y/B.java",
            Language::Java,
            &["src/org/x/Foo.java"],
        ),
        (
            "org.x.Foo.bar",
            &["bar"],
            "src/org/y/B.java",
            Language::Java,
            &["src/org/x/Foo.java"],
        ),
        // A package's wildcard: the files directly in its folder, not its subpackages'.
        (
            "org.x",
            &[],
            "src/org/y/B.java",
            Language::Java,
            &["src/org/x/Bar.java", "src/org/x/Foo.java"],
        ),
        ("java.util", &[], "src/org/y/B.java", Language::Java, &[]),
        (
            "Shop",
            &[],
            "App/Program.cs",
            Language::CSharp,
            &["Lib/Shop/Cart.cs", "Lib/Shop/Order.cs"],
        ),
        (
            "Shop.Cart",
            &["C"],
            "App/Program.cs",
            Language::CSharp,
            &["Lib/Shop/Cart.cs"],
        ),
        ("org.x", &[], "App/Program.cs", Language::CSharp, &[]),
    ];
    for &(module, names, from, language, expected) in rows {
        let import = import(module, names);
        let got = modules.files_named(&import, from, language);
        assert_eq!(got, expected, "{module} from {from}");
    }
}

#[test]
fn ancestors() {
    assert_eq!(ancestor("a/b/c.py", 1), Some("a/b"));
    assert_eq!(ancestor("a/b/c.py", 3), Some(""));
    assert_eq!(ancestor("a/b/c.py", 4), None);
    assert_eq!(ancestor("c.py", 1), Some(""));
    assert_eq!(ancestor("", 1), None);
}
