#![no_main]

use libfuzzer_sys::fuzz_target;

use std::io::{Cursor, Read};

fuzz_target!(|data: &[u8]| {
    if let Ok(mut archive) = zip::ZipArchive::new(Cursor::new(data)) {
        for i in 0..archive.len() {
            if let Ok(mut file) = archive.by_index(i) {
                let mut out = Vec::new();
                let _ = file.read_to_end(&mut out);
            }
        }
    }
});
