//! Typed (`fuzz_target!(|x: T| ...)`) targets of the `buggy` fixture: reduce
//! a noisy crashing artifact with the default strategy and compare the
//! reduced value's `Debug` form with the minimal value a Hypothesis-quality
//! choice-sequence shrinker reaches (smallest values, fewest elements, first
//! variants; then, among inputs of that length, the enum variants that read
//! shortest). The expected values and why they are minimal are in
//! `tests/fixtures/buggy/README.md` (the `typed*` rows).
//!
//! Artifacts are seeded random byte blobs (200–2000 bytes): typed bugs are
//! usually hit by random bytes. The seeds below are the first two (from 0)
//! whose blob crashes each target with its bug, found once by classifying
//! seeds in batches with `--classify`; each test re-checks that its artifact
//! crashes with the expected bug before reducing it.
//!
//! `benches/choices.rs` regenerates the same artifacts (same generator, same
//! seeds): keep the two in sync.

mod common;

use common::*;
use serde_json::Value;

/// One typed target and what reducing it must give.
struct Case {
    target: &'static str,
    /// The crash's panic message (`kind` is always `panic`).
    message: &'static str,
    /// `src/lib.rs:LINE:COL` of the panic.
    location: &'static str,
    /// The minimal value's `Debug` form (compared whitespace-insensitively,
    /// ignoring the trailing commas of `{:#?}`).
    expected: &'static str,
    /// Seeds of [`blob`] that crash with this target's bug.
    seeds: [u64; 2],
}

const CASES: &[Case] = &[
    Case {
        target: "typed",
        message: "stack underflow",
        location: "src/lib.rs:282:34",
        expected: "[Push(0), Add]",
        seeds: [SEED_TYPED_0, SEED_TYPED_1],
    },
    Case {
        target: "typed_nested",
        message: "delete with a revoked token",
        location: "src/lib.rs:371:32",
        expected: "Request { method: Delete, auth: Some(Token(4096)), retries: None }",
        seeds: [SEED_NESTED_0, SEED_NESTED_1],
    },
    Case {
        target: "typed_fields",
        message: "namespaced record with a header",
        location: "src/lib.rs:390:13",
        expected: r#"Record { name: ":", note: "", payload: [0, 0, 0], flags: 0 }"#,
        seeds: [SEED_FIELDS_0, SEED_FIELDS_1],
    },
    Case {
        target: "typed_threshold",
        message: "burst over budget past the soft limit",
        location: "src/lib.rs:409:10",
        expected: "(1000, 301)",
        seeds: [SEED_THRESHOLD_0, SEED_THRESHOLD_1],
    },
    Case {
        target: "typed_ops",
        message: "audit fee exceeds the balance",
        location: "src/lib.rs:455:14",
        expected: "[Deposit(2), Withdraw(1), Audit]",
        seeds: [SEED_OPS_0, SEED_OPS_1],
    },
    Case {
        target: "typed_packet",
        message: "fragment ends past the reassembly buffer",
        location: "src/lib.rs:485:10",
        expected: "Packet { seq: 0, timestamp: 0, source: [0, 0, 0, 0], ttl: 0, options: [], \
                   kind: Fragment { offset: 1501 }, payload: [] }",
        seeds: [SEED_PACKET_0, SEED_PACKET_1],
    },
    Case {
        target: "typed_config",
        message: "attempt to multiply with overflow",
        location: "src/lib.rs:511:44",
        expected: r#"Config { name: "", id: 0, version: (0, 0, 0), retries: None, timeouts: [],
                   mode: Strict, limits: Limits { max_body: 0, max_conn: 262144 } }"#,
        seeds: [SEED_CONFIG_0, SEED_CONFIG_1],
    },
    Case {
        target: "typed_events",
        message: "guest checkout has no account to charge",
        location: "src/lib.rs:554:28",
        expected: "[Event { at: 0, user: None, action: AddToCart { item: 0, qty: 1 } }, \
                   Event { at: 0, user: None, action: Checkout }]",
        seeds: [SEED_EVENTS_0, SEED_EVENTS_1],
    },
    Case {
        target: "typed_telemetry",
        message: "attempt to add with overflow",
        location: "src/lib.rs:577:18",
        expected: r#"Report { header: Header { device: 0, boot_time: 0, firmware: (0, 0, 0) },
                   seq: 0, location: None, samples: [], label: "",
                   reading: Temperature { centi_celsius: 5453 } }"#,
        seeds: [SEED_TELEMETRY_0, SEED_TELEMETRY_1],
    },
    Case {
        target: "typed_window",
        message: "attempt to subtract with overflow",
        location: "src/lib.rs:612:21",
        expected: "[0, 0, 0, 0, 0, 0, 0, 4096]",
        seeds: [SEED_WINDOW_0, SEED_WINDOW_1],
    },
    Case {
        target: "typed_matrix",
        message: "kernel reads past the end of a row",
        location: "src/lib.rs:643:22",
        expected: "[[0, 0, 0], [0, 0, 0], []]",
        seeds: [SEED_MATRIX_0, SEED_MATRIX_1],
    },
    Case {
        target: "typed_route",
        message: "index out of bounds: the len is 6 but the index is 6",
        location: "src/lib.rs:682:9",
        expected: "[Hop { node: 1, cost: 0 }, Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }, \
                   Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }, \
                   Hop { node: 0, cost: 0 }, Hop { node: 0, cost: 0 }]",
        seeds: [SEED_ROUTE_0, SEED_ROUTE_1],
    },
    Case {
        target: "typed_batch",
        message: "index out of bounds: the len is 4 but the index is 4",
        location: "src/lib.rs:713:13",
        expected: "[Job { id: 0, priority: 128, deadline: 0 }, Job { id: 0, priority: 128, deadline: 0 }, \
                   Job { id: 0, priority: 128, deadline: 0 }, Job { id: 0, priority: 128, deadline: 0 }, \
                   Job { id: 0, priority: 128, deadline: 0 }]",
        seeds: [SEED_BATCH_0, SEED_BATCH_1],
    },
    Case {
        target: "typed_allocator",
        message: "a page run fits in its segment",
        location: "src/lib.rs:978:14",
        expected: "[Alloc { index: 0, layout: Size { size: 1, align: 21 } }]",
        seeds: [SEED_ALLOCATOR_0, SEED_ALLOCATOR_1],
    },
    Case {
        target: "typed_slotmap",
        message: "the trailing sentinel follows every slot",
        location: "src/lib.rs:1077:14",
        // The shortlex minimum is `[Insert, Remove(0)]` (variant 3); the
        // presentation step picks `Clear` (variant 5), same 14 bytes, which
        // reads shorter.
        expected: "Target { ctor: New, ops: [Insert, Clear] }",
        seeds: [SEED_SLOTMAP_0, SEED_SLOTMAP_1],
    },
    Case {
        target: "typed_delta",
        message: "a delete never runs past the last chunk",
        location: "src/lib.rs:1200:18",
        expected: "[Insert { site: 0, pos: 0, text: 100 }, Delete { site: 0, pos: 2, len: 2 }]",
        seeds: [SEED_DELTA_0, SEED_DELTA_1],
    },
    Case {
        target: "typed_smartstring",
        message: "inline buffer is not valid UTF-8",
        location: "src/lib.rs:1337:27",
        // A known local minimum: the shortlex minimum is
        // `(FromString("\u{80}"), [Pop])` (12 bytes), but both seeds crash
        // through a `Push`, and moving the character from the `Push` draw
        // (a u32 code point) into the constructor's string (UTF-8, length at
        // the end) is no deletion or lowering (see the fixture README).
        expected: r#"(New, [Push('\u{80}'), Pop])"#,
        seeds: [SEED_SMARTSTRING_0, SEED_SMARTSTRING_1],
    },
    Case {
        target: "typed_bcn",
        message: "attempt to multiply with overflow",
        location: "src/lib.rs:1424:20",
        // The shortlex minimum has `BC2Unorm` (variant 8); `BC2Srgb`
        // (variant 9), same 12 bytes, reads one character shorter.
        expected: "(1, 1073741821, BC2Srgb, [])",
        seeds: [SEED_BCN_0, SEED_BCN_1],
    },
    Case {
        target: "typed_patch",
        message: "clamped to the last line",
        location: "src/lib.rs:1498:18",
        expected: "[Edit { offset: (1, 0), length: (0, 0), text: [0, 0, 0, 0] }]",
        seeds: [SEED_PATCH_0, SEED_PATCH_1],
    },
];

// Found by `find_typed_seeds` (the first two crashing seeds from 0 up).
const SEED_TYPED_0: u64 = 77;
const SEED_TYPED_1: u64 = 99;
const SEED_NESTED_0: u64 = 116;
const SEED_NESTED_1: u64 = 223;
const SEED_FIELDS_0: u64 = 134;
const SEED_FIELDS_1: u64 = 881;
const SEED_THRESHOLD_0: u64 = 0;
const SEED_THRESHOLD_1: u64 = 1;
const SEED_OPS_0: u64 = 783;
const SEED_OPS_1: u64 = 1120;
const SEED_PACKET_0: u64 = 0;
const SEED_PACKET_1: u64 = 1;
const SEED_CONFIG_0: u64 = 1;
const SEED_CONFIG_1: u64 = 13;
const SEED_EVENTS_0: u64 = 28;
const SEED_EVENTS_1: u64 = 37;
const SEED_TELEMETRY_0: u64 = 1;
const SEED_TELEMETRY_1: u64 = 2;
const SEED_WINDOW_0: u64 = 102;
const SEED_WINDOW_1: u64 = 491;
const SEED_MATRIX_0: u64 = 501;
const SEED_MATRIX_1: u64 = 3564;
const SEED_ROUTE_0: u64 = 153;
const SEED_ROUTE_1: u64 = 1540;
const SEED_BATCH_0: u64 = 302;
const SEED_BATCH_1: u64 = 636;
// Targets mirroring real cargo-fuzz targets (see the fixture's README).
const SEED_ALLOCATOR_0: u64 = 15;
const SEED_ALLOCATOR_1: u64 = 351;
const SEED_SLOTMAP_0: u64 = 4;
const SEED_SLOTMAP_1: u64 = 16;
const SEED_DELTA_0: u64 = 80;
const SEED_DELTA_1: u64 = 147;
const SEED_SMARTSTRING_0: u64 = 67;
const SEED_SMARTSTRING_1: u64 = 161;
const SEED_BCN_0: u64 = 0;
const SEED_BCN_1: u64 = 3;
const SEED_PATCH_0: u64 = 15;
const SEED_PATCH_1: u64 = 20;

/// A seeded random blob of 200–2000 bytes (the same in `benches/choices.rs`).
fn blob(target: &str, seed: u64) -> Vec<u8> {
    let mut rng = Rng::from_name(&format!("typed-blob:{target}:{seed}"));
    let len = 200 + rng.below(1801);
    (0..len).map(|_| rng.byte()).collect()
}

/// `debug` without whitespace outside string literals and without the
/// trailing commas `{:#?}` puts before `)`, `]` and `}`.
fn normalize(debug: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut escaped = false;
    for c in debug.chars() {
        if in_str {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            c if c.is_whitespace() => {}
            ')' | ']' | '}' => {
                if out.ends_with(',') {
                    out.pop();
                }
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

fn case(target: &str) -> &'static Case {
    CASES
        .iter()
        .find(|c| c.target == target)
        .unwrap_or_else(|| panic!("no case for {target}"))
}

/// The signature is this case's bug (kind, message, location suffix).
fn is_bug(case: &Case, sig: &Value) -> bool {
    sig["kind"] == "panic"
        && sig["message"] == case.message
        && sig["location"]
            .as_str()
            .is_some_and(|l| l.ends_with(case.location))
}

/// Reduces the blob of `seed` with the default strategy and checks the result.
/// Returns a description of what went wrong, or `None`.
fn reduce_seed(case: &Case, seed: u64) -> Option<String> {
    let fx = fixture();
    let data = blob(case.target, seed);
    let name = format!("typed-seed-{seed}");
    let artifact = fx.write_artifact(case.target, &name, &data);
    let output = reduced_path(&artifact);

    let original = classify_one(&artifact, None, &[]);
    assert!(
        is_bug(case, &original["signature"]),
        "seed {seed} of {} does not crash with its bug (`{}` at {}): {original}\n\
         (re-run find_typed_seeds if the fixture changed)",
        case.target,
        case.message,
        case.location
    );
    let id = identity(&original).unwrap();

    let run = reduce(&artifact, &[]);
    run.assert_code(0);
    let v = run.message("reduce-finished");
    check_finished(&v, case.target, &artifact, &output, data.len());
    assert_eq!(v["typed"], true, "{v}");
    assert_eq!(sig_identity(&v["signature"]), id, "{v}");
    assert_unmodified(&artifact, &data);
    let classified = assert_reproduces(&output, &id, &[]);

    let debug = v["debug"]
        .as_str()
        .unwrap_or_else(|| panic!("no debug form: {v}"));
    assert_eq!(
        classified["debug"].as_str(),
        Some(debug),
        "--classify shows another value than the reduction: {classified}"
    );
    let reduced = std::fs::read(&output).unwrap();
    eprintln!(
        "{} seed {seed}: {} -> {} bytes, {} tests, strategy {}, debug {}",
        case.target,
        data.len(),
        reduced.len(),
        v["tests_executed"],
        v["strategy"],
        normalize(debug)
    );
    if normalize(debug) != normalize(case.expected) {
        return Some(format!(
            "{} seed {seed}: reduced to {} bytes {:02x?} with strategy {}\n  debug:    {}\n  expected: {}",
            case.target,
            reduced.len(),
            reduced,
            v["strategy"],
            normalize(debug),
            normalize(case.expected)
        ));
    }
    None
}

/// Reduces both seeds of `target`; fails listing every mismatch.
fn check_target(target: &str) {
    let case = case(target);
    let _guard = lock_target(target);
    let failures: Vec<String> = case
        .seeds
        .iter()
        .filter_map(|&seed| reduce_seed(case, seed))
        .collect();
    assert!(
        failures.is_empty(),
        "the reduced value is not the minimal one:\n{}",
        failures.join("\n")
    );
}

#[test]
fn typed_reduces_to_minimal_value() {
    check_target("typed");
}

#[test]
fn typed_nested_reduces_to_minimal_value() {
    check_target("typed_nested");
}

#[test]
fn typed_fields_reduces_to_minimal_value() {
    check_target("typed_fields");
}

#[test]
fn typed_threshold_reduces_to_minimal_value() {
    check_target("typed_threshold");
}

#[test]
fn typed_ops_reduces_to_minimal_value() {
    check_target("typed_ops");
}

#[test]
fn typed_packet_reduces_to_minimal_value() {
    check_target("typed_packet");
}

#[test]
fn typed_config_reduces_to_minimal_value() {
    check_target("typed_config");
}

#[test]
fn typed_events_reduces_to_minimal_value() {
    check_target("typed_events");
}

#[test]
fn typed_telemetry_reduces_to_minimal_value() {
    check_target("typed_telemetry");
}

#[test]
fn typed_window_reduces_to_minimal_value() {
    check_target("typed_window");
}

#[test]
fn typed_matrix_reduces_to_minimal_value() {
    check_target("typed_matrix");
}

#[test]
fn typed_route_reduces_to_minimal_value() {
    check_target("typed_route");
}

#[test]
fn typed_batch_reduces_to_minimal_value() {
    check_target("typed_batch");
}

#[test]
fn typed_allocator_reduces_to_minimal_value() {
    check_target("typed_allocator");
}

#[test]
fn typed_slotmap_reduces_to_minimal_value() {
    check_target("typed_slotmap");
}

#[test]
fn typed_delta_reduces_to_minimal_value() {
    check_target("typed_delta");
}

#[test]
fn typed_smartstring_reduces_to_minimal_value() {
    check_target("typed_smartstring");
}

#[test]
fn typed_bcn_reduces_to_minimal_value() {
    check_target("typed_bcn");
}

#[test]
fn typed_patch_reduces_to_minimal_value() {
    check_target("typed_patch");
}

#[test]
fn normalize_ignores_layout_only() {
    assert_eq!(
        normalize("Record {\n    name: \": x\",\n    payload: [\n        0,\n    ],\n}"),
        "Record{name:\": x\",payload:[0]}"
    );
    assert_eq!(
        normalize("(\n    1000,\n    301,\n)"),
        normalize("(1000, 301)")
    );
    assert_eq!(normalize(r#""a\" ,)""#), r#""a\" ,)""#);
    assert_ne!(normalize("[Push(0), Add]"), normalize("[Push(7), Add]"));
}
