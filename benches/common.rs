//! Shared by the benchmarks: copying fixture projects to a stable place
//! under `target/` (so driver builds stay cached between runs).

use std::path::{Path, PathBuf};

/// Copies `src` (without `target/` directories) to `dst`, overwriting files.
pub fn copy_tree(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target")
    {
        let entry = entry.expect("readable fixture");
        let rel = entry.path().strip_prefix(src).expect("under src");
        let to = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).expect("create dir");
        } else if std::fs::read(entry.path()).ok() != std::fs::read(&to).ok() {
            std::fs::copy(entry.path(), &to).expect("copy file");
        }
    }
}

/// `<repo>/target/bench-fixtures/<name>`, refreshed from `from`.
pub fn stable_copy(from: &str, name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dst = root.join("target/bench-fixtures").join(name);
    copy_tree(&root.join(from), &dst);
    dst
}
