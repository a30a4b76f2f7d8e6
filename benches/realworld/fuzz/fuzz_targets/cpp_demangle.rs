#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(sym) = cpp_demangle::Symbol::new(data) {
        let _ = sym.to_string();
    }
});
