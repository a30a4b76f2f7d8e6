//! Regression test written by cargo-reduce-crash.
//!
//! Artifact:   {{ARTIFACT}}
//! Reduced:    {{ORIGINAL_LEN}} → {{REDUCED_LEN}} bytes
//! Signature:  {{SIGNATURE}}
//! Reproduce:  {{REPRODUCE}}
//!
//! It replays the reduced input through the fuzz target `{{TARGET}}` exactly
//! as `cargo fuzz run` does (the target file is included unmodified, `init:`
//! runs first). Keep it in the fuzz package's `tests/` directory.
//!
{{HOW_TO_RUN}}
//!
//! A crash aborts the test process (libFuzzer's panic hook aborts); the
//! panic message is printed above the failure.

#[allow(unused_attributes)]
#[path = "{{TARGET_PATH}}"]
mod fuzz_target;

extern "C" {
    fn LLVMFuzzerInitialize(argc: *const isize, argv: *const *const *const u8) -> isize;
    #[allow(improper_ctypes)]
    fn rust_fuzzer_test_input(input: &[u8]) -> i32;
}

{{DEBUG_COMMENT}}
const INPUT: &[u8] = {{BYTES}};

#[test]
fn {{TEST_NAME}}() {
    unsafe {
        LLVMFuzzerInitialize(std::ptr::null(), std::ptr::null());
    }
    // Show the panic even though the test harness captures output: the
    // process aborts before the captured output would be printed.
    let fuzz_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{info}");
        fuzz_hook(info);
    }));
    unsafe {
        rust_fuzzer_test_input(INPUT);
    }
}
