//! Fuzzes the decoder of the driver's answers (`exec`'s frame reader): the
//! tool reads whatever a crashing, half-dead driver left in the pipe, so
//! any bytes, read as answers of the kinds the first byte selects, must
//! decode or be refused without panicking and without allocating more than
//! the bytes could describe.
//!
//! `cargo +nightly fuzz run -s none protocol corpus/protocol -- -rss_limit_mb=512`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    reduce_crash::run::exec::fuzz_decode(data);
});
