//! Origins on small workspaces indexed for real: every file's origin for a cursor, rendered as
//! text, in Python, Java, TypeScript and C#; and the order of precedence.

use expect_test::{Expect, expect};

use super::{Origin, Origins};
use crate::Position;
use crate::chunk::ChunkerSettings;
use crate::fixture::Fixture;
use crate::index::{Index, IndexSettings, Progress};
use crate::lang::{Import, Language};
use crate::retrieve::Query;
use crate::workspace::WorkspaceSettings;

/// The index of the workspace at `root`, cached under `dir`.
fn indexed(dir: &std::path::Path, root: &std::path::Path) -> Index {
    let settings = IndexSettings {
        cache_dir: dir.join("cache"),
        bm25_chunker: crate::chunk::ChunkerKind::Fixed,
        chunker: ChunkerSettings::default(),
        workspace: WorkspaceSettings {
            max_file_bytes: 1 << 20,
        },
        lock_wait_ms: 1_000,
    };
    Index::open_or_build(root, &settings, &Progress::none())
        .expect("index")
        .0
}

/// Writes the fixture, indexes it, and renders each file's origin for a cursor at its `$0` as
/// `path  origin`, files in path order.
fn check(fixture: &str, expect: Expect) {
    let fixture = Fixture::parse(fixture);
    let cursor = fixture.cursor.clone().expect("a $0");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    fixture.write(&root).expect("write");
    let index = indexed(dir.path(), &root);
    let snapshot = index.snapshot();
    let text = fixture.text(&cursor.path).expect("the cursor's file");
    let query = Query::new(&cursor.path, text, cursor.position).expect("a query");
    let origins = Origins::new(&snapshot, &query);
    let mut paths: Vec<&str> = snapshot.paths().collect();
    paths.sort_unstable();
    let out: String = paths
        .iter()
        .map(|path| format!("{path}  {}\n", origins.of(path).name()))
        .collect();
    expect.assert_eq(&out);
}

#[test]
fn python_relative_and_absolute_imports() {
    check(
        r#"
//- app/cli.py
from app.store import Store
from .views import render
from ..lib import helpers
import shop.models
import os

def main():
    $0
//- app/store.py
class Store: ...
//- app/views.py
def render(): ...
//- lib/helpers.py
def helper(): ...
//- lib/other.py
def other(): ...
//- shop/models.py
class Model: ...
//- shop/__init__.py
//- vendor/os.py
def getcwd(): ...
"#,
        // `..lib` from `app/` is the root's `lib`, whose module `helpers` is named; `import os`
        // names `vendor/os.py` by its tail, as if `vendor/` were a path root.
        expect![[r#"
            app/cli.py  same_file
            app/store.py  same_dir
            app/views.py  same_dir
            lib/helpers.py  imported
            lib/other.py  elsewhere
            shop/__init__.py  elsewhere
            shop/models.py  imported
            vendor/os.py  imported
        "#]],
    );
}

#[test]
fn python_package_submodules() {
    check(
        r#"
//- pkg/sub/run.py
from .. import core, util
from ..models import Item

Item($0)
//- pkg/__init__.py
//- pkg/core.py
def core(): ...
//- pkg/util.py
def util(): ...
//- pkg/models.py
class Item: ...
//- pkg/sub/near.py
x = 1
//- other/core.py
def core(): ...
"#,
        expect![[r#"
            other/core.py  elsewhere
            pkg/__init__.py  elsewhere
            pkg/core.py  imported
            pkg/models.py  imported
            pkg/sub/near.py  same_dir
            pkg/sub/run.py  same_file
            pkg/util.py  imported
        "#]],
    );
}

#[test]
fn java_classes_static_members_and_packages() {
    check(
        r#"
//- src/main/java/org/shop/App.java
package org.shop;

import org.shop.model.Item;
import static org.shop.util.Money.format;
import org.shop.events.*;
import java.util.List;

class App {
    void run() { $0 }
}
//- src/main/java/org/shop/Config.java
package org.shop;
class Config {}
//- src/main/java/org/shop/model/Item.java
package org.shop.model;
class Item {}
//- src/main/java/org/shop/model/Price.java
package org.shop.model;
class Price {}
//- src/main/java/org/shop/util/Money.java
package org.shop.util;
class Money {}
//- src/main/java/org/shop/events/Created.java
package org.shop.events;
class Created {}
//- src/main/java/org/shop/events/sub/Deep.java
package org.shop.events.sub;
class Deep {}
//- src/test/java/org/shop/AppTest.java
package org.shop;
class AppTest {}
"#,
        // A test of the same package in another root sees the package without an import.
        expect![[r#"
            src/main/java/org/shop/App.java  same_file
            src/main/java/org/shop/Config.java  same_dir
            src/main/java/org/shop/events/Created.java  imported
            src/main/java/org/shop/events/sub/Deep.java  elsewhere
            src/main/java/org/shop/model/Item.java  imported
            src/main/java/org/shop/model/Price.java  elsewhere
            src/main/java/org/shop/util/Money.java  imported
            src/test/java/org/shop/AppTest.java  imported
        "#]],
    );
}

#[test]
fn typescript_relative_specifiers_and_index_files() {
    check(
        r#"
//- src/app/main.ts
import { Store } from "../store";
import { Button } from "../ui";
import type { Theme } from "./theme.js";
import { z } from "zod";

const s = new Store($0);
//- src/app/theme.ts
export type Theme = {};
//- src/store.ts
export class Store {}
//- src/ui/index.ts
export { Button } from "./button";
//- src/ui/button.ts
export class Button {}
//- node_modules_like/zod.ts
export const z = 1;
"#,
        // `./theme.js` is in the same folder: same_dir wins over imported.
        expect![[r#"
            node_modules_like/zod.ts  elsewhere
            src/app/main.ts  same_file
            src/app/theme.ts  same_dir
            src/store.ts  imported
            src/ui/button.ts  imported
            src/ui/index.ts  imported
        "#]],
    );
}

#[test]
fn reexports_are_followed_to_the_modules_they_pass_on() {
    // zod's layout: the package's index re-exports `external`, which re-exports the modules
    // defining the names; a named re-export is followed only for the names it exports.
    check(
        r#"
//- src/app.ts
import { object } from "./lib";
import { Button } from "./ui";

object($0);
//- src/lib/index.ts
import * as z from "./external";
export * from "./external";
export { z };
//- src/lib/external.ts
export * from "./types";
export * from "./helpers/util";
//- src/lib/types.ts
export function object() {}
//- src/lib/helpers/util.ts
export function util() {}
//- src/lib/unrelated.ts
export function unrelated() {}
//- src/ui/index.ts
export { Button } from "./button";
export { Slider } from "./slider";
//- src/ui/button.ts
export class Button {}
//- src/ui/slider.ts
export class Slider {}
"#,
        expect![[r#"
            src/app.ts  same_file
            src/lib/external.ts  imported
            src/lib/helpers/util.ts  imported
            src/lib/index.ts  imported
            src/lib/types.ts  imported
            src/lib/unrelated.ts  elsewhere
            src/ui/button.ts  imported
            src/ui/index.ts  imported
            src/ui/slider.ts  elsewhere
        "#]],
    );
    // A Python package's `__init__.py` passes on what it imports; `import pkg` wants it all.
    check(
        r#"
//- main.py
from models import Item
import tools

Item($0)
//- models/__init__.py
from .item import Item
from .order import Order
//- models/item.py
class Item: ...
//- models/order.py
class Order: ...
//- tools/__init__.py
from .a import *
//- tools/a.py
def a(): ...
"#,
        expect![[r#"
            main.py  same_file
            models/__init__.py  imported
            models/item.py  imported
            models/order.py  elsewhere
            tools/__init__.py  imported
            tools/a.py  imported
        "#]],
    );
}

#[test]
fn csharp_namespaces() {
    check(
        r#"
//- App/Program.cs
using Shop.Orders;
using System;

class Program { static void Main() { $0 } }
//- Lib/Shop/Orders/Order.cs
namespace Shop.Orders { class Order {} }
//- Lib/Shop/Orders/Line.cs
namespace Shop.Orders { class Line {} }
//- Lib/Shop/Cart.cs
namespace Shop { class Cart {} }
"#,
        expect![[r#"
            App/Program.cs  same_file
            Lib/Shop/Cart.cs  elsewhere
            Lib/Shop/Orders/Line.cs  imported
            Lib/Shop/Orders/Order.cs  imported
        "#]],
    );
}

#[test]
fn csharp_enclosing_namespaces_are_seen_without_a_using() {
    check(
        r#"
//- Web/Controllers/Home.cs
namespace Shop.Web
{
    class Home { void Index() { $0 } }
}
//- Lib/Shop/Cart.cs
namespace Shop { class Cart {} }
//- Lib/Shop/Web/Routes.cs
namespace Shop.Web { class Routes {} }
//- Lib/Shop/Orders/Order.cs
namespace Shop.Orders { class Order {} }
"#,
        // `Shop.Web` sees `Shop.Web` and `Shop`, not the sibling `Shop.Orders`.
        expect![[r#"
            Lib/Shop/Cart.cs  imported
            Lib/Shop/Orders/Order.cs  elsewhere
            Lib/Shop/Web/Routes.cs  imported
            Web/Controllers/Home.cs  same_file
        "#]],
    );
}

#[test]
fn precedence_and_names() {
    let import = |module: &str| Import {
        line: 0,
        module: module.into(),
        names: vec!["x".into()],
    };
    let files = [
        ("a/main.py", Language::Python),
        ("a/near.py", Language::Python),
        ("b/far.py", Language::Python),
        ("b/far.java", Language::Java),
        ("root.py", Language::Python),
    ];
    // The file imports its own folder's module and itself: same_dir and same_file win.
    let imports = [import("a.near"), import("a.main"), import("b.far")];
    let origins = Origins::from_parts("a/main.py", Language::Python, &imports, &[], files);
    let of = |path: &str| origins.of(path);
    assert_eq!(of("a/main.py"), Origin::SameFile);
    assert_eq!(of("a/near.py"), Origin::SameDir);
    assert_eq!(of("b/far.py"), Origin::Imported);
    // Another language family's file of the same module is not imported.
    assert_eq!(of("b/far.java"), Origin::Elsewhere);
    assert_eq!(of("root.py"), Origin::Elsewhere);
    // Files at the root share the root folder.
    let at_root = Origins::without_imports("setup.py");
    assert_eq!(at_root.of("root.py"), Origin::SameDir);
    assert_eq!(at_root.of("a/root.py"), Origin::Elsewhere);
    for origin in Origin::ALL {
        assert_eq!(Origin::from_name(origin.name()), Some(origin));
    }
    assert_eq!(Origin::from_name("nearby"), None);
}

#[test]
fn a_file_the_snapshot_lacks_gives_its_imports_from_the_query() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    Fixture::parse("//- lib/store.py\nclass Store: ...\n//- lib/other.py\nx = 1\n")
        .write(&root)
        .expect("write");
    let index = indexed(dir.path(), &root);
    let text = "from lib.store import Store\n\nStore(";
    let query = Query::new("app/new.py", text, Position { line: 2, col: 6 }).expect("query");
    let origins = Origins::new(&index.snapshot(), &query);
    assert_eq!(origins.of("lib/store.py"), Origin::Imported);
    assert_eq!(origins.of("lib/other.py"), Origin::Elsewhere);
}
