#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut reader) = gif::Decoder::new(data).read_info() {
        while let Ok(Some(_)) = reader.read_next_frame() {}
    }
});
