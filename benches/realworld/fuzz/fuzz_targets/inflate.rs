#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut stream = inflate::InflateStream::new();
    let mut data = data;
    while !data.is_empty() {
        match stream.update(data) {
            Ok((0, _)) | Err(_) => break,
            Ok((n, _)) => data = &data[n..],
        }
    }
});
