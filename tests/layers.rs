//! The architecture `docs/design.md` describes, checked against the code.
//!
//! `src/` has one folder per layer; a module may use the modules of its own
//! layer and of the layers below it, never above, and no modules import each
//! other in a circle. What a module uses is read from the `crate::…` paths
//! in its product code (everything before its `#[cfg(test)]` part; comments
//! left out), as a reader would follow them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, top first. Files directly under `src/` (errors, exit codes,
/// atomic output, interrupts) are shared by all and not ranked.
const LAYERS: &[&str] = &[
    "cli", "campaign", "triage", "session", "run", "grammar", "reduce",
];

/// Module path (`run::exec`) → the modules its product code names.
fn modules() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut code = BTreeMap::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let product = text.split("#[cfg(test)]").next().unwrap();
        let without_comments: String = product
            .lines()
            .map(|l| l.split("//").next().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
        code.insert(parts.join("::"), without_comments);
    }
    let names: BTreeSet<String> = code.keys().cloned().collect();
    // The longest module a path starts with.
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|k| parts[..k].join("::"))
            .find(|m| names.contains(m))
    };
    code.iter()
        .map(|(module, text)| {
            let mut uses = BTreeSet::new();
            for (at, _) in text.match_indices("crate::") {
                let path: String = text[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == ':'
                    })
                    .collect();
                if let Some(target) = resolve(path.trim_end_matches(':')) {
                    let inside = module == &target || module.starts_with(&format!("{target}::"));
                    if !inside {
                        uses.insert(target);
                    }
                }
            }
            (module.clone(), uses)
        })
        .collect()
}

fn layer(module: &str) -> Option<usize> {
    let top = module.split("::").next().unwrap();
    LAYERS.iter().position(|l| *l == top)
}

#[test]
fn every_folder_is_a_layer_and_uses_only_those_below() {
    let graph = modules();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                LAYERS.contains(&name.as_str()),
                "src/{name}/ is not one of the layers {LAYERS:?} (add it, in order, and to docs/design.md)"
            );
        }
    }
    let mut upward = Vec::new();
    for (module, uses) in &graph {
        let Some(from) = layer(module) else { continue };
        for used in uses {
            if layer(used).is_some_and(|to| to < from) {
                upward.push(format!("{module} uses {used}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "modules using a layer above their own: {upward:#?}"
    );
}

#[test]
fn no_modules_import_each_other_in_a_circle() {
    let graph = modules();
    // Depth-first search; a module met again while on the current path
    // closes a circle.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        circles: &mut Vec<Vec<String>>,
    ) {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut circle = path[at..].to_vec();
            circle.push(m.to_owned());
            circles.push(circle);
            return;
        }
        if done.contains(m) {
            return;
        }
        path.push(m.to_owned());
        for next in &graph[m] {
            visit(next, graph, path, done, circles);
        }
        path.pop();
        done.insert(m.to_owned());
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
    // The check sees imports at all: the session runs targets.
    assert!(
        graph["session"].contains("run::exec"),
        "{:?}",
        graph["session"]
    );
}
