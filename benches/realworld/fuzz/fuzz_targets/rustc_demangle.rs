#![no_main]

use libfuzzer_sys::fuzz_target;

use std::fmt::Write;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let mut out = String::new();
        let _ = write!(out, "{}", rustc_demangle::demangle(s));
        let _ = write!(out, "{:#}", rustc_demangle::demangle(s));
    }
});
