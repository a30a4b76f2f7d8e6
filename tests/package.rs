//! The package is what `cargo install cargo-reduce-crash` builds: it must
//! hold everything the binary reads (the driver's shim template, the
//! grammars, the regression test template). Packaged as `cargo package`
//! makes the `.crate`, unpacked, installed with `cargo install --path`, the
//! installed binary reduces the bundled example's crash. A file left out of
//! the package fails here, not for the first user.

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        if rel.components().any(|c| c.as_os_str() == "target") {
            continue;
        }
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

#[test]
fn the_packaged_crate_installs_and_reduces_the_example() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("package");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let name = format!("cargo-reduce-crash-{}", env!("CARGO_PKG_VERSION"));

    // The .crate, as crates.io would get it (the working tree's files, so
    // that a change not yet committed is checked too).
    let package_target = work.join("target");
    run(Command::new(env!("CARGO"))
        .args(["package", "--no-verify", "--allow-dirty", "--target-dir"])
        .arg(&package_target)
        .current_dir(repo));
    let crate_file = package_target.join("package").join(format!("{name}.crate"));
    run(Command::new("tar")
        .arg("xzf")
        .arg(&crate_file)
        .arg("-C")
        .arg(&work));
    let unpacked = work.join(&name);
    assert!(unpacked.join("Cargo.toml").is_file());
    for file in ["LICENSE-MIT", "LICENSE-APACHE", "README.md"] {
        assert!(
            unpacked.join(file).is_file(),
            "{file} is not in the package"
        );
    }

    // Installed from it, in a target directory of its own (release, as
    // `cargo install` builds), with the lockfile the package carries.
    let root = work.join("root");
    run(Command::new(env!("CARGO"))
        .args(["install", "--locked", "--path"])
        .arg(&unpacked)
        .arg("--root")
        .arg(&root)
        .arg("--target-dir")
        .arg(work.join("install-target"))
        .env_remove("CARGO_TARGET_DIR"));
    let binary = root.join("bin/cargo-reduce-crash");
    assert!(binary.is_file());

    // The installed binary reduces the bundled example's crash (a copy of
    // it: the repository is not written to).
    let example = work.join("example");
    copy_tree(&repo.join("example"), &example);
    let artifact =
        example.join("fuzz/artifacts/parse/crash-cf96a301780887d89add50e33b7d21f259b66d80");
    let output = work.join("reduced");
    let out = run(Command::new(&binary)
        .arg("reduce-crash")
        .arg(&artifact)
        .arg("-o")
        .arg(&output)
        .args(["--message-format", "json"])
        .current_dir(&example)
        .env_remove("CARGO_TARGET_DIR")
        .env("NO_COLOR", "1"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"reason\":\"reduce-finished\""),
        "no reduce-finished message:\n{stdout}"
    );
    let reduced = std::fs::read(&output).unwrap();
    assert!(
        !reduced.is_empty() && reduced.len() <= 3,
        "the example reduces to 3 bytes, got {reduced:?}"
    );
}

/// `cargo-reduce-crash = { default-features = false }`: the library alone,
/// without clap and indicatif, builds, and its dependency tree has neither.
#[test]
fn the_library_builds_without_the_command_line() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-default-features");
    run(Command::new(env!("CARGO"))
        .args(["build", "--no-default-features", "--lib", "--target-dir"])
        .arg(&target)
        .current_dir(repo));
    let tree = run(Command::new(env!("CARGO"))
        .args([
            "tree",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(repo));
    let tree = String::from_utf8_lossy(&tree.stdout);
    for cli_only in ["clap ", "indicatif "] {
        assert!(!tree.contains(cli_only), "{cli_only}in:\n{tree}");
    }
}
