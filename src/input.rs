//! Every file a run reads from the user (artifacts, corpus entries, grammar
//! files, existing results, records) is read through [`read_file`].
//!
//! Only regular files are read. A FIFO would block `open()` until a writer
//! shows up, and a blocked `open()` is restarted after SIGINT, so Ctrl-C
//! could not stop the run; a device such as `/dev/zero` never ends and
//! would be read until memory runs out. The file is opened without blocking
//! and its type checked on the open descriptor (not on the path, which may
//! change in between), so no path can make a run hang or fill memory.

use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The contents of the regular file at `path` (symbolic links followed).
/// A missing file is [`Error::ArtifactMissing`], a FIFO, socket, device or
/// directory [`Error::NotAFile`], any other failure [`Error::Read`].
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    let rerr = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::ArtifactMissing {
                path: path.to_owned(),
            })
        }
        Err(e) => return Err(rerr(e)),
    };
    let meta = file.metadata().map_err(rerr)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(Error::NotAFile {
            path: path.to_owned(),
            kind: describe(&kind),
        });
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut data).map_err(rerr)?;
    Ok(data)
}

/// What a non-regular file is, for the message.
pub fn describe(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "named pipe (FIFO)"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "device"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("crash-1");
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(read_file(&file).unwrap(), b"abc");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_file(&link).unwrap(), b"abc");

        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Returns at once (no writer): never blocks in open().
        let e = read_file(&fifo).unwrap_err();
        assert!(e.to_string().contains("named pipe"), "{e}");
        assert_eq!(e.exit_code(), crate::exit_code::BAD_INPUT);

        let e = read_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
        let e = read_file(tmp.path()).unwrap_err();
        assert!(
            matches!(e, Error::NotAFile { .. } | Error::Read { .. }),
            "{e}"
        );
        assert!(matches!(
            read_file(&tmp.path().join("missing")),
            Err(Error::ArtifactMissing { .. })
        ));
    }
}
