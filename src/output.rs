//! Where results go and how they are written.
//!
//! The original artifact is never opened for writing. Results are written to
//! a temporary file in the destination directory and renamed into place, so
//! the output path always holds a complete, interesting input, even if the
//! run is interrupted mid-write.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The default output path: beside the original, `<name>.reduced`.
pub fn default_output(artifact: &Path) -> PathBuf {
    let name = artifact
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "artifact".to_owned());
    artifact.with_file_name(format!("{name}.reduced"))
}

/// Refuses an output path that names the original artifact.
pub fn check_output(artifact: &Path, output: &Path) -> Result<()> {
    let same = match (artifact.canonicalize(), output.canonicalize()) {
        (Ok(a), Ok(o)) => a == o,
        _ => artifact == output,
    };
    if same {
        return Err(Error::OutputIsInput {
            path: output.to_owned(),
        });
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically (temporary file + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let werr = |source| Error::Write {
        path: path.to_owned(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".reduce-crash-")
        .tempfile_in(dir)
        .map_err(werr)?;
    tmp.write_all(bytes).map_err(werr)?;
    tmp.as_file().flush().map_err(werr)?;
    tmp.persist(path).map_err(|e| werr(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_beside_the_original_and_never_the_original() {
        let p = Path::new("fuzz/artifacts/t/crash-abc");
        assert_eq!(
            default_output(p),
            Path::new("fuzz/artifacts/t/crash-abc.reduced")
        );
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("crash-1");
        std::fs::write(&a, b"x").unwrap();
        assert!(check_output(&a, &a).is_err());
        assert!(check_output(&a, &tmp.path().join("out")).is_ok());
    }

    #[test]
    fn atomic_write_replaces_contents_and_leaves_no_temporaries() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        write_atomic(&out, b"first").unwrap();
        write_atomic(&out, b"2").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"2");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
