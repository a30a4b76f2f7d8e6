//! Fuzzes the record reader (`.reduce-crash/<sha1>.json`, kept beside the
//! artifacts): `read_record` on any bytes must not panic, and a record it
//! reads must describe itself without panicking and come back unchanged
//! when written with `write_record` and read again.
//!
//! Floats too (`slowest_secs`): this target found that serde_json without
//! its `float_roundtrip` feature misreads some numbers it wrote itself
//! (`123456789.12345679` read back as `123456789.1234568`); the tool now
//! enables that feature.
//!
//! The bytes go through a file, as in the tool, because `read_record` takes
//! a path (one file per process, in the temporary directory).
//!
//! `cargo +nightly fuzz run -s none records corpus/records seeds/records`
#![no_main]

use libfuzzer_sys::fuzz_target;
use reduce_crash::campaign::{read_record, write_record, RecordKey};
use std::path::PathBuf;
use std::sync::OnceLock;

fn paths() -> &'static (PathBuf, PathBuf) {
    static PATHS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PATHS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("records-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        (dir.join("in.json"), dir.join("out").join("record.json"))
    })
}

fuzz_target!(|data: &[u8]| {
    let (input, output) = paths();
    std::fs::write(input, data).expect("write the input");
    let Some(record) = read_record(input) else {
        return;
    };
    let _ = record.classification.describe();
    let _ = record.classification.status();
    if let Some(signature) = record.classification.signature() {
        let _ = signature.to_string();
    }
    let key = RecordKey {
        driver: record.driver.clone(),
        settings: record.settings.clone(),
    };
    let _ = record.matches(&key, &record.sha1);
    write_record(output, &record).expect("write the record");
    let again = read_record(output);
    assert_eq!(
        again.as_ref(),
        Some(&record),
        "the record changed when written and read back:\n{}",
        String::from_utf8_lossy(&std::fs::read(output).unwrap_or_default())
    );
});
