//! A tiny INI-style config parser: `[section]` headers, `key = value` pairs,
//! `#` and `;` comment lines, and double-quoted values (`motd = "a # b"`).
//!
//! Parsing is lenient: malformed lines are skipped and reported in
//! [`Config::warnings`]. It has one bug, found by the `parse` fuzz target.

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Config {
    pub entries: Vec<Entry>,
    pub warnings: Vec<String>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    pub section: String,
    pub key: String,
    pub value: String,
}

impl Config {
    /// The value of `key` in `section` (`""` for keys before any header).
    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.section == section && e.key == key)
            .map(|e| e.value.as_str())
    }
}

pub fn parse(input: &str) -> Config {
    let mut config = Config::default();
    let mut section = String::new();
    for (n, raw) in input.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            match header.strip_suffix(']') {
                Some(name) => section = name.trim().to_string(),
                None => config
                    .warnings
                    .push(format!("line {}: unclosed section header", n + 1)),
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            config
                .warnings
                .push(format!("line {}: expected `key = value`", n + 1));
            continue;
        };
        let key = key.trim();
        if key.is_empty() {
            config.warnings.push(format!("line {}: empty key", n + 1));
            continue;
        }
        config.entries.push(Entry {
            section: section.clone(),
            key: key.to_string(),
            value: parse_value(value.trim()),
        });
    }
    config
}

fn parse_value(value: &str) -> String {
    if let Some(quoted) = value.strip_prefix('"') {
        // BUG: assumes the closing quote is always there, so an unterminated
        // string such as `name = "abc` panics instead of being reported.
        let end = quoted.find('"').unwrap();
        return quoted[..end].to_string();
    }
    // Unquoted values end at a `#` comment.
    match value.find('#') {
        Some(i) => value[..i].trim_end().to_string(),
        None => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sections_quotes_and_comments() {
        let c =
            parse("top = 1\n[server]\nhost = example.org # main\nmotd = \"hi # there\"\nbroken\n");
        assert_eq!(c.get("", "top"), Some("1"));
        assert_eq!(c.get("server", "host"), Some("example.org"));
        assert_eq!(c.get("server", "motd"), Some("hi # there"));
        assert_eq!(c.warnings, ["line 5: expected `key = value`"]);
    }
}
