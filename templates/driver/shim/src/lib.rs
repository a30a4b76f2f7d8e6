//! Stand-in for `libfuzzer-sys` used by cargo-reduce-crash's in-process driver.
//!
//! The fuzz target file is compiled unmodified as the crate root of its
//! binary, exactly as `cargo fuzz build` compiles it; only `libfuzzer-sys` is
//! replaced by this crate (a `[patch]` of the fuzz package, or the dependency
//! of a generated package on stable). It keeps the real crate's macro surface
//! (`fuzz_target!` in all its forms, `fuzz_mutator!`, `fuzz_crossover!`,
//! `Corpus`, the `arbitrary` re-export), but `fuzz_target!` expands into plain
//! Rust functions with fixed symbol names, and this crate provides the
//! binary's `main` (as libFuzzer does for the real binary): the driver loop
//! that runs many inputs per process, catches panics with `catch_unwind`
//! and reports each outcome to cargo-reduce-crash.
//!
//! The `__driver` module is the driver's main loop and wire protocol. The
//! parent side of that protocol lives in cargo-reduce-crash's `exec` module;
//! keep the two in step (the greeting's magic number).

#![allow(clippy::missing_safety_doc)]
// The stack depth libFuzzer counts is a thread-local of the sanitizer
// runtime; a sanitizer build is a nightly build.
#![cfg_attr(rc_any_sanitizer, feature(thread_local))]

pub use arbitrary;

/// Whether the input should be kept in the corpus (same as libfuzzer-sys).
#[derive(Debug)]
pub enum Corpus {
    Keep,
    Reject,
}

impl From<()> for Corpus {
    fn from(_: ()) -> Self {
        Self::Keep
    }
}

impl Corpus {
    #[doc(hidden)]
    pub fn to_libfuzzer_code(self) -> i32 {
        match self {
            Corpus::Keep => 0,
            Corpus::Reject => -1,
        }
    }
}

/// libFuzzer's mutator is not linked in the driver: mutation is never needed
/// while reducing, so this leaves the data unchanged.
pub fn fuzzer_mutate(data: &mut [u8], size: usize, max_size: usize) -> usize {
    assert!(size <= data.len());
    assert!(max_size <= data.len());
    size
}

#[doc(hidden)]
pub fn rust_libfuzzer_debug_path() -> &'static Option<String> {
    static NONE: Option<String> = None;
    &NONE
}

#[doc(hidden)]
pub fn initialize(_argc: *const isize, _argv: *const *const *const u8) -> isize {
    0
}

// The functions `fuzz_target!` defines in the target's crate. They have
// fixed symbol names, so the driver below can call them without knowing the
// crate (Rust ABI: a panic unwinds through them into `catch_unwind`).
unsafe extern "Rust" {
    fn __rc_init();
    fn __rc_entry(bytes: &[u8]) -> i32;
    fn __rc_debug(bytes: &[u8]) -> String;
    fn __rc_value(bytes: &[u8]) -> Option<String>;
    fn __rc_typed() -> bool;
}

/// The binary's entry point, as libFuzzer's `main` is for the real build
/// (the target file says `#![no_main]`).
#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    __driver::main(__driver::Target {
        init: || unsafe { __rc_init() },
        entry: |b| unsafe { __rc_entry(b) },
        debug: |b| unsafe { __rc_debug(b) },
        value: |b| unsafe { __rc_value(b) },
        typed: unsafe { __rc_typed() },
    })
}

#[macro_export]
macro_rules! fuzz_target {
    (|$bytes:ident| $body:expr) => {
        $crate::fuzz_target!(init: (), |$bytes: &[u8]| -> () { $body });
    };
    (|$bytes:ident: &[u8]| $body:expr) => {
        $crate::fuzz_target!(init: (), |$bytes: &[u8]| -> () { $body });
    };
    (|$bytes:ident: &[u8]| -> $rty:ty $body:block) => {
        $crate::fuzz_target!(init: (), |$bytes: &[u8]| -> $rty { $body });
    };
    (init: $init:expr, |$bytes:ident| $body:expr) => {
        $crate::fuzz_target!(init: $init, |$bytes: &[u8]| -> () { $body });
    };
    (init: $init:expr, |$bytes:ident: &[u8]| $body:expr) => {
        $crate::fuzz_target!(init: $init, |$bytes: &[u8]| -> () { $body });
    };
    (init: $init:expr, |$bytes:ident: &[u8]| -> $rty:ty $body:block) => {
        const _: () = {
            #[unsafe(no_mangle)]
            pub fn __rc_typed() -> bool {
                false
            }

            #[unsafe(no_mangle)]
            pub fn __rc_init() {
                $init;
            }

            #[unsafe(no_mangle)]
            pub fn __rc_entry(bytes: &[u8]) -> i32 {
                $crate::Corpus::from(__libfuzzer_sys_run(bytes)).to_libfuzzer_code()
            }

            #[unsafe(no_mangle)]
            pub fn __rc_debug(bytes: &[u8]) -> String {
                format!("{:?}", bytes)
            }

            #[unsafe(no_mangle)]
            pub fn __rc_value(_bytes: &[u8]) -> Option<String> {
                None
            }

            // A uniquely named frame, as in libfuzzer-sys.
            #[inline(never)]
            fn __libfuzzer_sys_run($bytes: &[u8]) -> $rty {
                $body
            }
        };
    };
    (|$data:ident: $dty:ty| $body:expr) => {
        $crate::fuzz_target!(init: (), |$data: $dty| -> () { $body });
    };
    (|$data:ident: $dty:ty| -> $rty:ty $body:block) => {
        $crate::fuzz_target!(init: (), |$data: $dty| -> $rty { $body });
    };
    (init: $init:expr, |$data:ident: $dty:ty| $body:expr) => {
        $crate::fuzz_target!(init: $init, |$data: $dty| -> () { $body });
    };
    (init: $init:expr, |$data:ident: $dty:ty| -> $rty:ty $body:block) => {
        const _: () = {
            #[unsafe(no_mangle)]
            pub fn __rc_typed() -> bool {
                true
            }

            #[unsafe(no_mangle)]
            pub fn __rc_init() {
                $init;
            }

            #[unsafe(no_mangle)]
            pub fn __rc_entry(bytes: &[u8]) -> i32 {
                use $crate::arbitrary::{Arbitrary, Unstructured};
                // Same early reject as libfuzzer-sys.
                if bytes.len() < <$dty as Arbitrary>::size_hint(0).0 {
                    return -1;
                }
                let u = Unstructured::new(bytes);
                let data = match <$dty as Arbitrary>::arbitrary_take_rest(u) {
                    Ok(d) => d,
                    Err(_) => return -1,
                };
                $crate::Corpus::from(__libfuzzer_sys_run(data)).to_libfuzzer_code()
            }

            #[unsafe(no_mangle)]
            pub fn __rc_debug(bytes: &[u8]) -> String {
                use $crate::arbitrary::{Arbitrary, Unstructured};
                let u = Unstructured::new(bytes);
                match <$dty as Arbitrary>::arbitrary_take_rest(u) {
                    Ok(d) => format!("{:#?}", d),
                    Err(e) => format!("Arbitrary Error: {}", e),
                }
            }

            /// The compact `Debug` form of the decoded value, or `None` when
            /// the input is rejected before the body runs (too short, or does
            /// not decode). Used for value-level caching and structure probing.
            #[unsafe(no_mangle)]
            pub fn __rc_value(bytes: &[u8]) -> Option<String> {
                use $crate::arbitrary::{Arbitrary, Unstructured};
                if bytes.len() < <$dty as Arbitrary>::size_hint(0).0 {
                    return None;
                }
                let u = Unstructured::new(bytes);
                match <$dty as Arbitrary>::arbitrary_take_rest(u) {
                    Ok(d) => Some(format!("{:?}", d)),
                    Err(_) => None,
                }
            }

            // A uniquely named frame, as in libfuzzer-sys.
            #[inline(never)]
            fn __libfuzzer_sys_run($data: $dty) -> $rty {
                $body
            }
        };
    };
}

/// Custom mutators are not used while reducing; the body is still compiled
/// (so the target type-checks as it does under libfuzzer-sys) but never run.
#[macro_export]
macro_rules! fuzz_mutator {
    (
        |
        $data:ident : &mut [u8] ,
        $size:ident : usize ,
        $max_size:ident : usize ,
        $seed:ident : u32 $(,)*
        |
        $body:block
    ) => {
        const _: () = {
            #[allow(dead_code, unused_variables, unused_mut)]
            fn __rc_custom_mutator(
                $data: &mut [u8],
                $size: usize,
                $max_size: usize,
                $seed: u32,
            ) -> usize {
                $body
            }
        };
    };
}

/// Custom cross-over functions are not used while reducing (see `fuzz_mutator!`).
#[macro_export]
macro_rules! fuzz_crossover {
    (
        |
        $data1:ident : &[u8] ,
        $data2:ident : &[u8] ,
        $out:ident : &mut [u8] ,
        $seed:ident : u32 $(,)*
        |
        $body:block
    ) => {
        const _: () = {
            #[allow(dead_code, unused_variables, unused_mut)]
            fn __rc_custom_crossover(
                $data1: &[u8],
                $data2: &[u8],
                $out: &mut [u8],
                $seed: u32,
            ) -> usize {
                $body
            }
        };
    };
}

#[doc(hidden)]
pub mod __driver;
mod fork_server;
mod limits;
mod probe;
mod sancov;
mod serve;
mod signals;
mod stack;
