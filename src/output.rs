//! Where results go and how they are written.
//!
//! The original artifact is never opened for writing. Every file a run
//! writes for the user (results, regression tests, reports) goes through
//! [`write`], the one door that decides how: a regular file (or a name not
//! yet taken) is written to a temporary file in the destination directory
//! and renamed into place, so the output path always holds a complete
//! input, even if the run is interrupted mid-write; the file gets the
//! permissions the umask gives new files (as the artifact beside it has).
//! A destination that is not a regular file ([`Sink`]) is written through,
//! never replaced: `-` and `/dev/stdout` are standard output, `/dev/fd/N`
//! (`--report >(jq .)`) is descriptor N, a device, FIFO or socket is opened
//! and written (no temporary beside it, no rename onto it: a rename onto
//! `/dev/stdout` would replace the machine's link with a file). Two runs
//! that would write the same output take turns ([`OutputLock`]).

use crate::error::{Error, Result};
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The default output path: beside the original, `<name>.reduced`, the
/// name kept byte for byte (file names need not be UTF-8).
pub fn default_output(artifact: &Path) -> PathBuf {
    let mut name: OsString = artifact
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "artifact".into());
    name.push(".reduced");
    artifact.with_file_name(name)
}

/// The process's umask (read once: reading it means setting it).
fn umask() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    *UMASK.get_or_init(|| unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    })
}

/// Reads the umask now, while the process has one thread (call early).
pub fn init_umask() {
    let _ = umask();
}

/// An exclusive advisory lock held for as long as a run may write one
/// output: a second run on the same artifact waits instead of overwriting the
/// first's result with its own. The lock file is named after the output's
/// absolute path, in a directory of the user's under the system's temporary
/// directory (nothing is added beside the artifacts).
pub struct OutputLock {
    _file: Option<File>,
}

impl OutputLock {
    /// Takes the lock for `output`; `waiting` is called once if another run
    /// holds it, before blocking until it is free.
    pub fn acquire(output: &Path, waiting: impl FnOnce()) -> Result<OutputLock> {
        use std::os::unix::ffi::OsStrExt;
        // A stream keeps nothing between runs: nothing to take turns on.
        if sink(output) != Sink::File {
            return Ok(OutputLock { _file: None });
        }
        let werr = |path: &Path| {
            let path = path.to_owned();
            move |source| Error::Write { path, source }
        };
        let dir =
            std::env::temp_dir().join(format!("cargo-reduce-crash-{}", unsafe { libc::getuid() }));
        std::fs::create_dir_all(&dir).map_err(werr(&dir))?;
        // The output may not exist yet: its directory's real path, then its name.
        let parent = match output.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let real = parent
            .canonicalize()
            .unwrap_or_else(|_| parent.to_owned())
            .join(output.file_name().unwrap_or_default());
        let key = sha1_smol::Sha1::from(real.as_os_str().as_bytes())
            .digest()
            .to_string();
        let path = dir.join(format!("{key}.lock"));
        let file = lock_exclusive(&path, waiting)?;
        Ok(OutputLock { _file: Some(file) })
    }
}

/// Opens (creating it if needed) the lock file `path` and takes an exclusive
/// `flock` on it, calling `waiting` once first if someone else holds it. The
/// lock lasts as long as the returned file is open.
///
/// The wait is a non-blocking attempt every [`LOCK_POLL`], not a blocking
/// `flock`: Ctrl-C must end it at once ([`Error::Interrupted`]) whichever
/// thread waits, and a signal interrupts a blocking call only on the thread
/// that takes it (in a directory run, a worker waits while the signal goes
/// to the main thread).
pub(crate) fn lock_exclusive(path: &Path, waiting: impl FnOnce()) -> Result<File> {
    let werr = |source| Error::Write {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(werr)?;
    let fd = file.as_raw_fd();
    let mut waiting = Some(waiting);
    loop {
        if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(file);
        }
        let err = std::io::Error::last_os_error();
        match err.kind() {
            std::io::ErrorKind::WouldBlock => {
                if let Some(f) = waiting.take() {
                    f();
                }
            }
            std::io::ErrorKind::Interrupted => {}
            _ => return Err(werr(err)),
        }
        if crate::interrupt::requested() {
            return Err(Error::Interrupted);
        }
        std::thread::sleep(LOCK_POLL);
    }
}

/// How often a run waiting for a lock tries it again.
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// A file as the file system knows it: device and inode. Two paths with the
/// same key are one file (a hard link, a symbolic link, `./x` and `x`).
type FileKey = (u64, u64);

fn file_key(path: &Path) -> Option<FileKey> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// `path` with its directory's real path (the file itself need not exist;
/// a symbolic link at `path` is resolved when it does).
fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let parent = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    parent
        .canonicalize()
        .unwrap_or_else(|_| parent.to_owned())
        .join(path.file_name().unwrap_or_default())
}

/// The one place that decides where a run may write. A run names its inputs
/// first (artifacts, corpus entries); then every file it would write is
/// claimed here before any work starts. A claim is refused (exit 5) when
/// the path is one of the inputs (by name, through a symbolic link, or as a
/// hard link to it), is already claimed by this run (the result and the test
/// file of `-o X --emit-test X`; standard output twice, or by
/// `--message-format json`), is a directory, or cannot be created: its
/// directory does not exist, or its name is longer than the file system
/// allows; a descriptor must be open for writing. So nothing a run writes
/// can land on what the user gave it, and a bad output path fails in a
/// second, not after the whole reduction. A destination that is not a
/// regular file ([`sink`]) is written through by [`write`].
#[derive(Debug, Default)]
pub struct Destinations {
    inputs: std::collections::HashSet<FileKey>,
    input_paths: std::collections::HashSet<PathBuf>,
    /// Claimed paths (real paths) and what they are for.
    claimed: Vec<(PathBuf, Option<FileKey>, &'static str)>,
    /// Claimed descriptors of this process (`-`, `/dev/stdout`, `/dev/fd/N`).
    fds: Vec<(i32, &'static str)>,
}

impl Destinations {
    /// A run that reads `inputs`.
    pub fn new<'p>(inputs: impl IntoIterator<Item = &'p Path>) -> Destinations {
        let mut d = Destinations::default();
        for input in inputs {
            d.input_paths.insert(real_path(input));
            if let Some(key) = file_key(input) {
                d.inputs.insert(key);
            }
        }
        d
    }

    /// Standard output already carries `by` (`--message-format json`): no
    /// result or report may go there too.
    pub fn stdout_used_by(mut self, by: Option<&'static str>) -> Destinations {
        if let Some(by) = by {
            self.fds.push((1, by));
        }
        self
    }

    /// Claims `path` for writing `what` (`-o/--output`, …) in a directory
    /// that exists.
    pub fn claim(&mut self, path: &Path, what: &'static str) -> Result<PathBuf> {
        self.claim_in(path, what, false)
    }

    /// Claims `path` for writing `what` (`--emit-test`), creating its
    /// directory when it is written if need be: the nearest existing
    /// ancestor must be a directory.
    pub fn claim_creating_dirs(&mut self, path: &Path, what: &'static str) -> Result<PathBuf> {
        self.claim_in(path, what, true)
    }

    fn claim_in(&mut self, path: &Path, what: &'static str, create: bool) -> Result<PathBuf> {
        let unusable = |detail: String| Error::OutputUnusable {
            path: path.to_owned(),
            option: what,
            detail,
        };
        let twice = |other| Error::OutputTwice {
            path: path.to_owned(),
            option: what,
            other,
        };
        match sink(path) {
            Sink::File => {}
            Sink::Fd(fd) => {
                fd_writable(fd).map_err(unusable)?;
                if let Some((_, other)) = self.fds.iter().find(|(f, _)| *f == fd) {
                    return Err(twice(other));
                }
                self.fds.push((fd, what));
                return Ok(path.to_owned());
            }
            Sink::Stream { path: real, kind } => {
                let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(
                    real.as_os_str(),
                ))
                .map_err(|e| unusable(e.to_string()))?;
                if kind != StreamKind::Socket
                    && unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0
                {
                    return Err(unusable(format!(
                        "the {} {} is not writable ({})",
                        Sink::Stream {
                            path: real.clone(),
                            kind
                        }
                        .describe(),
                        real.display(),
                        std::io::Error::last_os_error()
                    )));
                }
                // A device takes any number of writes (`/dev/null` twice);
                // a pipe or socket would get two outputs run together.
                let key = file_key(&real);
                if kind != StreamKind::Device {
                    if let Some((_, _, other)) = self
                        .claimed
                        .iter()
                        .find(|(p, k, _)| *p == real || (key.is_some() && *k == key))
                    {
                        return Err(twice(other));
                    }
                }
                self.claimed.push((real, key, what));
                return Ok(path.to_owned());
            }
        }
        let real = real_path(path);
        let key = file_key(path);
        if self.input_paths.contains(&real) || key.is_some_and(|k| self.inputs.contains(&k)) {
            return Err(Error::OutputIsInput {
                path: path.to_owned(),
                option: what,
            });
        }
        if let Some((_, _, other)) = self
            .claimed
            .iter()
            .find(|(p, k, _)| *p == real || (key.is_some() && *k == key))
        {
            return Err(twice(other));
        }
        if path.is_dir() {
            return Err(unusable("it is a directory".into()));
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let existing = match create {
            true => dir
                .ancestors()
                .find(|d| d.exists())
                .unwrap_or(Path::new(".")),
            false => dir,
        };
        if !existing.is_dir() {
            return Err(unusable(match existing.exists() {
                true => format!("{} is not a directory", existing.display()),
                false => format!("its directory {} does not exist", dir.display()),
            }));
        }
        let name = path.file_name().unwrap_or_default();
        let max = name_max(existing);
        if name.len() > max {
            return Err(unusable(format!(
                "its name is {} bytes long, more than the {max} its file system allows",
                name.len()
            )));
        }
        self.claimed.push((real, key, what));
        Ok(path.to_owned())
    }
}

/// The longest file name `dir`'s file system takes (`NAME_MAX`, 255 where
/// it cannot be asked).
fn name_max(dir: &Path) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return 255;
    };
    let n = unsafe { libc::pathconf(c.as_ptr(), libc::_PC_NAME_MAX) };
    if n > 0 {
        n as usize
    } else {
        255
    }
}

/// What a destination the user named really is, decided by [`sink`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// A regular file, or a name not taken yet: replaced atomically.
    File,
    /// One of this process's open descriptors: `-` and `/dev/stdout` (1),
    /// `/dev/stderr` (2), `/dev/fd/N` and `/proc/self/fd/N` (N), or a link
    /// to one. Written through the descriptor itself, so a pipe, a socket
    /// or a file the shell opened gets the bytes where it expects them.
    Fd(i32),
    /// A character or block device, a FIFO, a socket, or another process's
    /// descriptor under `/proc/<pid>/fd/`: opened at `path` (links
    /// resolved) and written through.
    Stream { path: PathBuf, kind: StreamKind },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    Device,
    Fifo,
    Socket,
    /// `/proc/<pid>/fd/N` of another process.
    ProcFd,
}

impl Sink {
    /// What the destination is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Sink::File => "file".to_owned(),
            Sink::Fd(1) => "standard output".to_owned(),
            Sink::Fd(2) => "standard error".to_owned(),
            Sink::Fd(n) => format!("descriptor {n}"),
            Sink::Stream { kind, .. } => match kind {
                StreamKind::Device => "device",
                StreamKind::Fifo => "named pipe (FIFO)",
                StreamKind::Socket => "socket",
                StreamKind::ProcFd => "another process's descriptor",
            }
            .to_owned(),
        }
    }
}

/// Where `path` really leads: `-` is standard output; otherwise each
/// symbolic link on the way is followed (at most 40, as the kernel does),
/// and the walk stops at this process's `/proc/<pid>/fd/N` (what
/// `/dev/stdout` and `/dev/fd/N` lead to), at a device, FIFO or socket, or
/// at a regular file, a directory or a missing name ([`Sink::File`]: the
/// claim's checks and the atomic write handle those).
pub fn sink(path: &Path) -> Sink {
    if path.as_os_str() == "-" {
        return Sink::Fd(1);
    }
    let mut p = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    for _ in 0..40 {
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return Sink::File;
        };
        let Ok(parent) = parent.canonicalize() else {
            return Sink::File;
        };
        let full = parent.join(name);
        if let Some((pid, fd)) = proc_fd(&full) {
            return match pid == std::process::id() {
                true => Sink::Fd(fd),
                false => Sink::Stream {
                    path: full,
                    kind: StreamKind::ProcFd,
                },
            };
        }
        let Ok(meta) = full.symlink_metadata() else {
            return Sink::File;
        };
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        let kind = if t.is_symlink() {
            match std::fs::read_link(&full) {
                Ok(target) => {
                    p = parent.join(target);
                    continue;
                }
                Err(_) => return Sink::File,
            }
        } else if t.is_fifo() {
            StreamKind::Fifo
        } else if t.is_socket() {
            StreamKind::Socket
        } else if t.is_char_device() || t.is_block_device() {
            StreamKind::Device
        } else {
            return Sink::File;
        };
        return Sink::Stream { path: full, kind };
    }
    Sink::File
}

/// `/proc/<pid>/fd/N` or `/proc/<pid>/task/<tid>/fd/N` (a real path:
/// `self` and `thread-self` already resolved) as (pid, N).
fn proc_fd(path: &Path) -> Option<(u32, i32)> {
    let rest = path.strip_prefix("/proc").ok()?;
    let parts: Vec<&str> = rest.iter().map(|c| c.to_str()).collect::<Option<_>>()?;
    let (pid, fd) = match parts.as_slice() {
        [pid, "fd", fd] => (pid, fd),
        [pid, "task", _, "fd", fd] => (pid, fd),
        _ => return None,
    };
    Some((pid.parse().ok()?, fd.parse().ok()?))
}

/// Can descriptor `fd` of this process be written? `Err` says why not.
fn fd_writable(fd: i32) -> std::result::Result<(), String> {
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(format!("descriptor {fd} is not open"));
    }
    if flags & libc::O_ACCMODE == libc::O_RDONLY {
        return Err(format!("descriptor {fd} is open only for reading"));
    }
    Ok(())
}

/// Writes what the user asked for to `path`, the one door for results,
/// regression tests and reports: atomically when it is a regular file (or
/// not there yet), written through when it is not ([`sink`]). A failed
/// write (a full device, a pipe whose reader went away) is an error.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let werr = |source| Error::Write {
        path: path.to_owned(),
        source,
    };
    match sink(path) {
        Sink::File => write_atomic(path, bytes),
        Sink::Fd(1) => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(werr)
        }
        Sink::Fd(fd) => {
            // A duplicate, so that closing it leaves the caller's open.
            let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            if dup < 0 {
                return Err(werr(std::io::Error::last_os_error()));
            }
            let mut file = unsafe { <File as std::os::unix::io::FromRawFd>::from_raw_fd(dup) };
            file.write_all(bytes)
                .and_then(|()| file.flush())
                .map_err(werr)
        }
        Sink::Stream {
            path: real,
            kind: StreamKind::Socket,
        } => {
            let mut s = std::os::unix::net::UnixStream::connect(&real).map_err(werr)?;
            s.write_all(bytes).and_then(|()| s.flush()).map_err(werr)?;
            let _ = s.shutdown(std::net::Shutdown::Write);
            Ok(())
        }
        Sink::Stream { path: real, kind } => {
            let mut file = open_stream(&real, kind == StreamKind::Fifo).map_err(|e| match e {
                Some(e) => werr(e),
                None => Error::Interrupted,
            })?;
            file.write_all(bytes)
                .and_then(|()| file.flush())
                .map_err(werr)
        }
    }
}

/// Opens a device or FIFO for writing, never creating anything. A FIFO
/// with no reader yet is waited for (as `echo > fifo` waits) without
/// blocking in `open()`, so Ctrl-C stops the wait (`Err(None)`).
fn open_stream(path: &Path, fifo: bool) -> std::result::Result<File, Option<std::io::Error>> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = libc::O_NOCTTY | libc::O_CLOEXEC | if fifo { libc::O_NONBLOCK } else { 0 };
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(flags)
            .open(path)
        {
            Ok(file) => {
                if fifo {
                    let fd = file.as_raw_fd();
                    unsafe {
                        let fl = libc::fcntl(fd, libc::F_GETFL);
                        libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
                    }
                }
                return Ok(file);
            }
            Err(e) if fifo && e.raw_os_error() == Some(libc::ENXIO) => {
                if crate::interrupt::requested() {
                    return Err(None);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Some(e)),
        }
    }
}

/// What an earlier run left at `output`, if it is a regular file: a
/// stream is never read back (reading `/dev/stdout` redirected to a file
/// would read this run's own messages as a result).
pub fn previous(output: &Path) -> Option<Vec<u8>> {
    match sink(output) {
        Sink::File => crate::input::read_file(output).ok(),
        _ => None,
    }
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
    // A second Ctrl-C lets a write that started finish: no temporary file
    // is left behind (and only verified results are written).
    let _writing = crate::interrupt::hold();
    let mut tmp = tempfile::Builder::new()
        .prefix(".reduce-crash-")
        .tempfile_in(dir)
        .map_err(werr)?;
    // tempfile creates 0600; a result is an ordinary new file.
    let mode = 0o666 & !umask();
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
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
    }

    #[test]
    fn destinations_are_never_inputs_links_or_each_other() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("crash-1");
        std::fs::write(&a, b"x").unwrap();
        let hard = tmp.path().join("hard");
        std::fs::hard_link(&a, &hard).unwrap();
        let soft = tmp.path().join("soft");
        std::os::unix::fs::symlink(&a, &soft).unwrap();
        let dotted = tmp.path().join(".").join("crash-1");
        for p in [&a, &hard, &soft, &dotted] {
            let mut d = Destinations::new([a.as_path()]);
            let e = d.claim(p, "-o/--output").unwrap_err();
            assert!(matches!(e, Error::OutputIsInput { .. }), "{p:?}: {e}");
            assert_eq!(e.exit_code(), crate::exit_code::BAD_INPUT);
        }
        let mut d = Destinations::new([a.as_path()]);
        let out = tmp.path().join("out");
        d.claim(&out, "-o/--output").unwrap();
        let e = d.claim(&out, "--emit-test").unwrap_err();
        assert!(matches!(e, Error::OutputTwice { .. }), "{e}");
        assert!(e.to_string().contains("-o/--output"), "{e}");
        let e = d
            .claim(&tmp.path().join("no/such/dir/x"), "-o/--output")
            .unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        // A test file's directory is made when it is written.
        d.claim_creating_dirs(&tmp.path().join("fuzz/tests/t1.rs"), "--emit-test")
            .unwrap();
        let e = d
            .claim_creating_dirs(&a.join("tests/t2.rs"), "--emit-test")
            .unwrap_err();
        assert!(e.to_string().contains("is not a directory"), "{e}");
        let e = d.claim(tmp.path(), "--emit-test").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let long = tmp.path().join("x".repeat(300));
        let e = d.claim(&long, "--emit-test").unwrap_err();
        assert!(e.to_string().contains("300 bytes"), "{e}");
        d.claim(&tmp.path().join("t.rs"), "--emit-test").unwrap();
    }

    #[test]
    fn sinks_follow_links_to_streams_and_descriptors() {
        let tmp = tempfile::tempdir().unwrap();
        let p = |n: &str| tmp.path().join(n);
        assert_eq!(sink(Path::new("-")), Sink::Fd(1));
        assert_eq!(sink(&p("missing")), Sink::File);
        std::fs::write(p("file"), b"x").unwrap();
        assert_eq!(sink(&p("file")), Sink::File);
        assert_eq!(sink(tmp.path()), Sink::File);
        std::os::unix::fs::symlink("/proc/self/fd/1", p("out")).unwrap();
        assert_eq!(sink(&p("out")), Sink::Fd(1));
        std::os::unix::fs::symlink("/proc/thread-self/fd/9", p("nine")).unwrap();
        assert_eq!(sink(&p("nine")), Sink::Fd(9));
        let fifo = p("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // A relative link to a link to the FIFO.
        std::os::unix::fs::symlink("fifo", p("l1")).unwrap();
        std::os::unix::fs::symlink(p("l1"), p("l2")).unwrap();
        for name in ["fifo", "l2"] {
            assert_eq!(
                sink(&p(name)),
                Sink::Stream {
                    path: fifo.canonicalize().unwrap(),
                    kind: StreamKind::Fifo
                }
            );
        }
        // A loop of links is left to the write, which fails as it would.
        std::os::unix::fs::symlink(p("loop2"), p("loop1")).unwrap();
        std::os::unix::fs::symlink(p("loop1"), p("loop2")).unwrap();
        assert_eq!(sink(&p("loop1")), Sink::File);
    }

    #[test]
    fn a_fifo_without_a_reader_yet_is_waited_for() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                std::fs::read(&fifo).unwrap()
            })
        };
        write(&fifo, b"through").unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn output_names_keep_the_original_s_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let a = Path::new(std::ffi::OsStr::from_bytes(b"dir/crash-\xff"));
        let b = Path::new(std::ffi::OsStr::from_bytes(b"dir/crash-\xfe"));
        assert_ne!(default_output(a), default_output(b));
        assert_eq!(
            default_output(a).as_os_str().as_bytes(),
            b"dir/crash-\xff.reduced"
        );
    }

    #[test]
    fn results_follow_the_umask() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        write_atomic(&out, b"x").unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
    }

    #[test]
    fn a_second_lock_on_one_output_waits_for_the_first() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("crash-1.reduced");
        let first = OutputLock::acquire(&out, || panic!("nobody holds it yet")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let out2 = out.clone();
        let second = std::thread::spawn(move || {
            let mut waited = false;
            let _lock = OutputLock::acquire(&out2, || waited = true).unwrap();
            tx.send(waited).unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(rx.try_recv().is_err(), "the second run must wait");
        drop(first);
        second.join().unwrap();
        assert!(rx.recv().unwrap());
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
