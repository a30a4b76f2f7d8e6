//! Empty: the crates under test are dependencies of `fuzz/`.
