//! Placeholder until the Earley benchmark lands.
fn main() {}
