#![no_main]

use libfuzzer_sys::fuzz_target;

use std::io::Read;

fuzz_target!(|data: &[u8]| {
    let mut decoder = libflate::deflate::Decoder::new(data);
    let mut out = Vec::new();
    let _ = decoder.read_to_end(&mut out);
});
