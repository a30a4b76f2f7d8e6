//! Tells the shim which sanitizer the target is built with (cargo sets
//! `CARGO_CFG_SANITIZE` from the target's rustflags, e.g. `-Zsanitizer=address`):
//! the sanitizer runtimes provide their own coverage hooks, malloc hooks and
//! signal handlers, so the shim defines those only without one.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(rc_sanitizer, values(any()))");
    println!("cargo::rustc-check-cfg=cfg(rc_no_sanitizer)");
    println!("cargo::rustc-check-cfg=cfg(rc_any_sanitizer)");
    println!("cargo::rerun-if-changed=build.rs");
    match std::env::var("CARGO_CFG_SANITIZE") {
        Ok(list) if !list.is_empty() => {
            for s in list.split(',') {
                println!("cargo::rustc-cfg=rc_sanitizer=\"{s}\"");
            }
            // A sanitizer means nightly (and its runtime's
            // `__sancov_lowest_stack`, for stack depth).
            println!("cargo::rustc-cfg=rc_any_sanitizer");
        }
        _ => println!("cargo::rustc-cfg=rc_no_sanitizer"),
    }
}
