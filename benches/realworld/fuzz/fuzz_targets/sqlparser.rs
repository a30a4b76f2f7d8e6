#![no_main]

use libfuzzer_sys::fuzz_target;

use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

fuzz_target!(|data: &[u8]| {
    if let Ok(sql) = std::str::from_utf8(data) {
        let _ = Parser::parse_sql(&GenericDialect {}, sql);
    }
});
