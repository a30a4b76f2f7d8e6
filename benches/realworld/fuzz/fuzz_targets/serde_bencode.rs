#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = serde_bencode::from_bytes::<serde_bencode::value::Value>(data);
});
