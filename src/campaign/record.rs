//! What is known about one artifact's bytes, kept beside it as
//! `.reduce-crash/<sha1>.json` so that a rerun does not repeat work: the
//! classification (valid for one driver binary and one set of settings) and
//! the finished reductions (valid while their output is unchanged).

use crate::error::{Error, Result};
use crate::output::write_atomic;
use crate::run::outcome::{CrashDetails, Signature};
use crate::session::{Options, Reproduction, StrategyChoice};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{RECORD_DIR, RECORD_VERSION};

/// What rerunning an artifact showed, as stored in its record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Classification {
    Crash {
        signature: Signature,
        slowest_secs: f64,
        /// What the crash report said beyond the signature (the access, the
        /// stack), for triage; none for crashes without a report (panics).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<CrashDetails>,
    },
    /// Returned normally (at least once; never crashed).
    Pass { runs: usize },
    /// Rejected every time.
    Reject { runs: usize },
    Flaky {
        crashed: usize,
        runs: usize,
        detail: String,
    },
}

impl Classification {
    pub fn from_reproduction(r: Reproduction) -> Classification {
        match r {
            Reproduction::Crash { signature, slowest } => Classification::Crash {
                details: signature.details.as_deref().cloned(),
                signature,
                slowest_secs: slowest.as_secs_f64(),
            },
            Reproduction::NoCrash {
                rejected: true,
                runs,
                ..
            } => Classification::Reject { runs },
            Reproduction::NoCrash { runs, .. } => Classification::Pass { runs },
            Reproduction::Flaky {
                crashed,
                runs,
                detail,
            } => Classification::Flaky {
                crashed,
                runs,
                detail,
            },
        }
    }

    /// `crash`, `pass`, `reject` or `flaky`.
    pub fn status(&self) -> &'static str {
        match self {
            Classification::Crash { .. } => "crash",
            Classification::Pass { .. } => "pass",
            Classification::Reject { .. } => "reject",
            Classification::Flaky { .. } => "flaky",
        }
    }

    pub fn signature(&self) -> Option<&Signature> {
        match self {
            Classification::Crash { signature, .. } => Some(signature),
            _ => None,
        }
    }

    /// The crash report's details, for a crash that came with a report.
    pub fn details(&self) -> Option<&CrashDetails> {
        match self {
            Classification::Crash { details, .. } => details.as_ref(),
            _ => None,
        }
    }

    /// One line for humans, e.g. `returned normally (3 runs)`.
    pub fn describe(&self) -> String {
        match self {
            Classification::Crash { signature, .. } => signature.to_string(),
            Classification::Pass { runs } => {
                format!("does not crash: returned normally ({runs} runs)")
            }
            Classification::Reject { runs } => format!("does not crash: rejected ({runs} runs)"),
            Classification::Flaky {
                crashed,
                runs,
                detail,
            } => format!("flaky: crashed {crashed} of {runs} runs ({detail})"),
        }
    }
}

/// A reduced output made from the artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducedRecord {
    /// The output's file name (beside the artifact).
    pub output: String,
    /// sha1 of the output's bytes when it was written.
    pub sha1: String,
    pub len: u64,
    pub signature: Signature,
    /// The strategy setting it was reduced with ([`strategy_key`]).
    pub strategy: String,
    pub verified_fresh: bool,
    /// The source lines only crashing inputs ran, from the explanation
    /// after the reduction (none when it had none to list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_lines: Vec<crate::session::lines::FailingLine>,
    /// The explanation as a person reads it (what `--emit-test` puts in
    /// its comment), if there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained: Option<String>,
}

/// Everything known about one artifact's bytes, stored as
/// `<artifact dir>/.reduce-crash/<sha1>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub format_version: u32,
    /// sha1 of the artifact's bytes (also the file name).
    pub sha1: String,
    pub len: u64,
    pub target: String,
    /// sha1 of the driver binary it ran in.
    pub driver: String,
    /// The settings the classification depends on ([`settings_key`]).
    pub settings: String,
    pub classification: Classification,
    /// Complete reductions (interrupted or budget-limited ones are not kept).
    #[serde(default)]
    pub reduced: Vec<ReducedRecord>,
}

/// What a record must have been made under to be reused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordKey {
    /// sha1 of the driver binary.
    pub driver: String,
    /// [`settings_key`].
    pub settings: String,
}

/// The options that change how an artifact is classified (and bucketed).
pub fn settings_key(opts: &Options) -> String {
    format!(
        "match={} reruns={} timeout={} libfuzzer_timeout={} rss_limit_mb={} malloc_limit_mb={}",
        opts.match_mode.name(),
        opts.reruns.max(1),
        opts.timeout
            .map_or_else(|| "auto".to_owned(), |t| format!("{}", t.as_secs_f64())),
        opts.libfuzzer_timeout
            .map_or_else(|| "none".to_owned(), |n| n.to_string()),
        opts.rss_limit_mb,
        opts.malloc_limit_mb,
    )
}

/// The options that change what a reduction produces.
pub fn strategy_key(opts: &Options) -> String {
    let strategy = match opts.strategy {
        StrategyChoice::Auto => "auto",
        StrategyChoice::Bytes(s) => s.name(),
        StrategyChoice::Tree(t) => t.name(),
    };
    let mut key = match &opts.grammar {
        Some(g) => format!("{strategy} grammar={g}"),
        None => strategy.to_owned(),
    };
    // The byte pipeline's random stage: other settings, other results.
    if opts.pipeline != crate::reduce::Pipeline::default() {
        key += &format!(
            " seed={} random-tests={}",
            opts.pipeline.seed, opts.pipeline.random_tests
        );
    }
    key
}

/// Hex sha1 of some bytes.
pub fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// Hex sha1 of a file's bytes, read in chunks (driver binaries are large).
pub fn sha1_file(path: &Path) -> Result<String> {
    let rerr = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(rerr)?;
    let mut hasher = sha1_smol::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(rerr)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.digest().to_string())
}

/// Where the record of an artifact with these bytes lives.
pub fn record_path(artifact: &Path, sha1: &str) -> PathBuf {
    let dir = match artifact.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    dir.join(RECORD_DIR).join(format!("{sha1}.json"))
}

/// The record at `path`; `None` if there is none or it cannot be read
/// (a broken record is as good as none: it is rewritten).
pub fn read_record(path: &Path) -> Option<Record> {
    let text = crate::input::read_file(path).ok()?;
    serde_json::from_slice(&text).ok()
}

/// Writes a record atomically, creating the record directory.
pub fn write_record(path: &Path, record: &Record) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_owned(),
            source,
        })?;
    }
    let mut text = serde_json::to_vec_pretty(record).expect("records serialize");
    text.push(b'\n');
    write_atomic(path, &text)
}

impl Record {
    /// Is the classification valid for this driver and these settings?
    pub fn matches(&self, key: &RecordKey, sha1: &str) -> bool {
        self.format_version == RECORD_VERSION
            && self.sha1 == sha1
            && self.driver == key.driver
            && self.settings == key.settings
    }

    /// The recorded reduction to `dir/output_name` with this strategy, if
    /// the output is still there with the bytes it was written with.
    pub fn valid_output(
        &self,
        dir: &Path,
        output_name: &str,
        strategy: &str,
    ) -> Option<&ReducedRecord> {
        let r = self
            .reduced
            .iter()
            .find(|r| r.output == output_name && r.strategy == strategy)?;
        let bytes = crate::input::read_file(&dir.join(output_name)).ok()?;
        (bytes.len() as u64 == r.len && sha1_hex(&bytes) == r.sha1).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::outcome::MatchMode;
    use crate::run::project::Locate;

    fn record(dir: &Path, output: &[u8]) -> (Record, RecordKey) {
        std::fs::write(dir.join("crash-1.reduced"), output).unwrap();
        let key = RecordKey {
            driver: "d".repeat(40),
            settings: "match=location".into(),
        };
        let rec = Record {
            format_version: RECORD_VERSION,
            sha1: sha1_hex(b"artifact"),
            len: 8,
            target: "t".into(),
            driver: key.driver.clone(),
            settings: key.settings.clone(),
            classification: Classification::Crash {
                signature: Signature::panic("x", "src/lib.rs:1:1"),
                slowest_secs: 0.001,
                details: None,
            },
            reduced: vec![ReducedRecord {
                output: "crash-1.reduced".into(),
                sha1: sha1_hex(output),
                len: output.len() as u64,
                signature: Signature::panic("x", "src/lib.rs:1:1"),
                strategy: "auto".into(),
                verified_fresh: true,
                failing_lines: Vec::new(),
                explained: None,
            }],
        };
        (rec, key)
    }

    #[test]
    fn a_record_is_valid_for_its_driver_settings_and_unchanged_output_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (rec, key) = record(dir, b"abc");
        let sha = sha1_hex(b"artifact");
        assert!(rec.matches(&key, &sha));
        assert!(rec.valid_output(dir, "crash-1.reduced", "auto").is_some());

        // Another driver binary, other settings, other bytes, old format: invalid.
        let other_driver = RecordKey {
            driver: "e".repeat(40),
            ..key.clone()
        };
        assert!(!rec.matches(&other_driver, &sha));
        let other_settings = RecordKey {
            settings: "match=message".into(),
            ..key.clone()
        };
        assert!(!rec.matches(&other_settings, &sha));
        assert!(!rec.matches(&key, &sha1_hex(b"other")));
        let old = Record {
            format_version: 0,
            ..rec.clone()
        };
        assert!(!old.matches(&key, &sha));

        // Another strategy, a changed or a missing output: reduce again.
        assert!(rec.valid_output(dir, "crash-1.reduced", "ddmin").is_none());
        std::fs::write(dir.join("crash-1.reduced"), b"abd").unwrap();
        assert!(rec.valid_output(dir, "crash-1.reduced", "auto").is_none());
        std::fs::remove_file(dir.join("crash-1.reduced")).unwrap();
        assert!(rec.valid_output(dir, "crash-1.reduced", "auto").is_none());
    }

    #[test]
    fn records_round_trip_atomically_and_broken_ones_read_as_none() {
        let tmp = tempfile::tempdir().unwrap();
        let artifact = tmp.path().join("crash-1");
        let (rec, _) = record(tmp.path(), b"abc");
        let path = record_path(&artifact, &rec.sha1);
        assert_eq!(
            path,
            tmp.path()
                .join(RECORD_DIR)
                .join(format!("{}.json", rec.sha1))
        );
        write_record(&path, &rec).unwrap();
        assert_eq!(read_record(&path), Some(rec.clone()));
        for flaky in [
            Classification::Flaky {
                crashed: 1,
                runs: 3,
                detail: "pass; crash; pass".into(),
            },
            Classification::Pass { runs: 3 },
            Classification::Reject { runs: 3 },
            // fuzz/records found serde_json misreading this float it wrote
            // (…1234568) until its `float_roundtrip` feature was enabled.
            Classification::Crash {
                signature: Signature::panic("x", "src/lib.rs:1:1"),
                slowest_secs: 123456789.12345679,
                details: Some(CrashDetails {
                    access: Some(crate::run::outcome::Access {
                        write: true,
                        size: Some(8),
                    }),
                    address: Some(0x10),
                    frames: vec![crate::run::outcome::StackFrame {
                        function: "a::b".into(),
                        location: Some("src/lib.rs:3:9".into()),
                    }],
                }),
            },
        ] {
            let r = Record {
                classification: flaky,
                ..rec.clone()
            };
            write_record(&path, &r).unwrap();
            assert_eq!(read_record(&path), Some(r));
        }
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "temporaries left: {names:?}");
        std::fs::write(&path, b"{ not json").unwrap();
        assert_eq!(read_record(&path), None);
    }

    #[test]
    fn settings_and_strategy_keys_name_what_changes_results() {
        let mut opts = Options {
            locate: Locate::default(),
            fuzz_target: None,
            build: Default::default(),
            output: None,
            emit_test: None,
            match_mode: MatchMode::Location,
            strategy: StrategyChoice::Auto,
            grammar: None,
            timeout: None,
            libfuzzer_timeout: None,
            rss_limit_mb: 2048,
            malloc_limit_mb: 0,
            reruns: 3,
            budget: Default::default(),
            fork_server: true,
            drivers: 1,
            auto_drivers: false,
            explain_tests: 0,
            explain_time: None,
            pipeline: Default::default(),
        };
        let base = settings_key(&opts);
        assert_eq!(strategy_key(&opts), "auto");
        opts.match_mode = MatchMode::Message;
        assert_ne!(settings_key(&opts), base);
        opts.strategy = StrategyChoice::Bytes(crate::reduce::Strategy::Ddmin);
        opts.grammar = Some("json".into());
        assert_eq!(strategy_key(&opts), "ddmin grammar=json");
        opts.pipeline.seed = 3;
        assert_eq!(
            strategy_key(&opts),
            "ddmin grammar=json seed=3 random-tests=255"
        );
    }
}
