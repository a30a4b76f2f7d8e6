//! Issue 35: write through the right door. Each test reproduces a probe
//! that lost data, gave a false result or wrote an unsafe report, on
//! copies of `tests/fixtures/trust` (and `tests/fixtures/doors`).
//!
//! A custom harness (libtest-mimic), as in `trust.rs`: the tests whose
//! verdict needs the real `cargo fuzz build` binary (nightly, cargo-fuzz),
//! and those that need to make device nodes (root, as CI containers run),
//! are reported as *ignored* on a machine without them, never as passed.
//! Devices, FIFOs and sockets are made in a temporary directory: no test
//! writes to the machine's own `/dev`.

mod common;

use common::*;
use libtest_mimic::{Arguments, Failed, Trial};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn main() {
    let args = Arguments::from_args();
    let no_mknod = !can_mknod();
    if no_mknod {
        eprintln!("doors: cannot make device nodes here (not root?): the device tests are ignored");
    }
    let trials = vec![
        Trial::test(
            "outputs_that_are_not_files_are_written_through",
            item1_streams,
        ),
        Trial::test(
            "a_full_device_is_an_error_and_stays_a_device",
            item1_full_device,
        )
        .with_ignored_flag(no_mknod),
        Trial::test(
            "standard_output_is_claimed_once_before_any_work",
            item1_stdout_claims,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

// ------------------------------------------------------------------ helpers

fn check(ok: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok {
        Ok(())
    } else {
        Err(msg().into())
    }
}

/// The `trust` fixture, copied once per test process (shared with
/// `trust.rs`'s copy: builds without a sanitizer go to the shared driver
/// directory, `common::run`).
fn trust() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| copy_fixture_as("trust", "trust-doors"))
}

/// A fresh, empty directory under the test's temporary root.
fn scratch(name: &str) -> PathBuf {
    let dir = tmp_root().join("doors-scratch").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `data` as `fuzz/artifacts/<target>/<name>` under `root`.
fn artifact(root: &Path, target: &str, name: &str, data: &[u8]) -> PathBuf {
    let dir = root.join("fuzz/artifacts").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    let _ = std::fs::remove_file(reduced_path(&path));
    path
}

/// An input of `parse` whose first line unwraps `None`, in noise.
fn unwrapping(seed: &str) -> Vec<u8> {
    let mut data = b"U no value here\n".to_vec();
    data.extend(
        noisy_with_len(seed, b"", 600)
            .into_iter()
            .map(|b| if b == b'\n' { b' ' } else { b }),
    );
    data
}

fn cstr(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap()
}

fn mkfifo(p: &Path) {
    assert_eq!(unsafe { libc::mkfifo(cstr(p).as_ptr(), 0o600) }, 0);
}

/// `/dev/full`'s device numbers (1, 7) and `/dev/null`'s (1, 3), made at
/// `p`: the same driver, a node of our own.
fn mknod_char(p: &Path, minor: u32) -> bool {
    let dev = libc::makedev(1, minor);
    unsafe { libc::mknod(cstr(p).as_ptr(), libc::S_IFCHR | 0o666, dev) == 0 }
}

fn can_mknod() -> bool {
    let dir = tempfile::tempdir().unwrap();
    mknod_char(&dir.path().join("null"), 3)
}

fn kind(p: &Path) -> String {
    match std::fs::symlink_metadata(p) {
        Err(e) => format!("missing ({e})"),
        Ok(m) => {
            let t = m.file_type();
            if t.is_symlink() {
                format!("link to {}", std::fs::read_link(p).unwrap().display())
            } else if t.is_fifo() {
                "fifo".into()
            } else if t.is_char_device() {
                "char device".into()
            } else if t.is_socket() {
                "socket".into()
            } else if t.is_file() {
                format!("regular file of {} bytes", m.len())
            } else {
                "other".into()
            }
        }
    }
}

/// Names in `dir` that look like our temporaries.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".reduce-crash-"))
        .collect()
}

// ------------------------------------------------------------------ 1

/// `-o /dev/stdout` as root replaced the machine's `/dev/stdout` link with
/// a regular file; `--report FIFO` replaced the FIFO (its reader blocked
/// forever); `--report >(jq .)` failed after all the work. Here the same
/// kinds of destination, made in a scratch directory: a link to this
/// process's `/proc/self/fd/1` (what `/dev/stdout` is), `-`, a FIFO with a
/// reader, `/dev/fd/N` of a pipe the test holds, and a socket.
fn item1_streams() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let dir = scratch("item1");
    let a = artifact(root, "parse", "crash-streams", &unwrapping("item1"));
    let arts = a.parent().unwrap().to_owned();

    // `-o` through a link to /proc/self/fd/1, and `-o -`.
    let link = dir.join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    for out in [link.display().to_string(), "-".to_owned()] {
        let r = run(
            &["--no-explain", "-o", &out, &a.display().to_string()],
            root,
        );
        r.assert_no_panic();
        check(r.code == Some(0) && r.stdout == "U", || {
            format!("-o {out}: the result should be on stdout\n{}", r.describe())
        })?;
        check(kind(&link) == "link to /proc/self/fd/1", || {
            format!("-o {out}: the link became {}", kind(&link))
        })?;
        check(
            !reduced_path(&a).exists() && !dir.join("-").exists(),
            || format!("-o {out} wrote a file"),
        )?;
        check(temporaries(&dir).is_empty(), || {
            format!("{:?}", temporaries(&dir))
        })?;
    }

    // A FIFO with a reader waiting on it: the reader gets the report.
    let fifo = dir.join("report.fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_string(&mut s)
                .unwrap();
            s
        })
    };
    let r = run(
        &[
            "--no-explain",
            "--report",
            &fifo.display().to_string(),
            &arts.display().to_string(),
        ],
        root,
    );
    r.assert_no_panic();
    check(r.code == Some(0), || r.describe())?;
    let got = reader.join().unwrap();
    let report: serde_json::Value = serde_json::from_str(&got)
        .map_err(|e| format!("the FIFO's reader got no report ({e}): {got:?}"))?;
    check(
        report["bugs"].as_array().is_some_and(|b| b.len() == 1),
        || format!("{report}"),
    )?;
    check(kind(&fifo) == "fifo", || {
        format!("the FIFO became {}", kind(&fifo))
    })?;
    check(temporaries(&dir).is_empty(), || {
        format!("{:?}", temporaries(&dir))
    })?;

    // `/dev/fd/7`, a pipe the test reads (`--sarif >(jq .)`).
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (rd, wr) = (fds[0], fds[1]);
    let args = with_target_dir(&[
        "--no-explain".to_owned(),
        "--sarif".to_owned(),
        "/dev/fd/7".to_owned(),
        arts.display().to_string(),
    ]);
    let mut cmd = command(&args, root);
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(wr, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let child = cmd.spawn().unwrap();
    unsafe { libc::close(wr) };
    let reader = std::thread::spawn(move || {
        let mut f = unsafe { <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(rd) };
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        s
    });
    let r = finish(child, args, started, RUN_LIMIT);
    r.assert_no_panic();
    check(r.code == Some(0), || r.describe())?;
    let sarif: serde_json::Value = serde_json::from_str(&reader.join().unwrap())
        .map_err(|e| format!("no SARIF through /dev/fd/7: {e}\n{}", r.describe()))?;
    check(sarif["version"] == "2.1.0", || format!("{sarif}"))?;

    // A socket: the listener gets the Markdown.
    let sock = dir.join("summary.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let accept = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    });
    let r = run(
        &[
            "--no-explain",
            "--markdown",
            &sock.display().to_string(),
            &arts.display().to_string(),
        ],
        root,
    );
    r.assert_no_panic();
    check(r.code == Some(0), || r.describe())?;
    let md = accept.join().unwrap();
    check(md.starts_with("## Fuzzing crashes: 1 bug"), || md.clone())?;
    check(kind(&sock) == "socket", || kind(&sock))?;
    std::fs::remove_dir_all(&arts).unwrap();
    Ok(())
}

/// `--markdown /dev/full` replaced the device node with a 781-byte file and
/// exited 0; `-o` there likewise.
fn item1_full_device() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let dir = scratch("item1-full");
    let full = dir.join("full");
    assert!(mknod_char(&full, 7));
    let a = artifact(root, "parse", "crash-full", &unwrapping("item1-full"));
    let arts = a.parent().unwrap().to_owned();
    for args in [
        vec![
            "-o".to_owned(),
            full.display().to_string(),
            a.display().to_string(),
        ],
        vec![
            "--markdown".to_owned(),
            full.display().to_string(),
            arts.display().to_string(),
        ],
    ] {
        let mut all = vec!["--no-explain".to_owned()];
        all.extend(args);
        let r = run(&all, root);
        r.assert_no_panic();
        check(
            r.code == Some(5)
                && r.error_lines().len() == 1
                && r.stderr.contains("No space left on device"),
            || format!("expected one error line and exit 5\n{}", r.describe()),
        )?;
        check(kind(&full) == "char device", || kind(&full))?;
        check(temporaries(&dir).is_empty(), || {
            format!("{:?}", temporaries(&dir))
        })?;
    }
    std::fs::remove_dir_all(&arts).unwrap();
    Ok(())
}

/// Standard output is one destination: `--report - --markdown -` and
/// `--report -` with `--message-format json` (whose messages are on
/// stdout) are refused in a second, before any build.
fn item1_stdout_claims() -> Result<(), Failed> {
    let root = trust();
    let _serial = lock_target("parse");
    let dir = scratch("item1-claims");
    let a = artifact(root, "parse", "crash-claims", &unwrapping("item1-claims"));
    let arts = a.parent().unwrap().display().to_string();
    let link = dir.join("out");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let link = link.display().to_string();
    for args in [
        vec!["--report", "-", "--markdown", "-", &arts],
        vec!["--report", "-", "--sarif", &link, &arts],
        vec!["--message-format", "json", "--report", "-", &arts],
        vec![
            "--message-format",
            "json",
            "-o",
            &link,
            &a.to_str().unwrap(),
        ],
    ] {
        let started = Instant::now();
        let r = run(&args, root);
        r.assert_no_panic();
        check(r.code == Some(5), || r.describe())?;
        check(started.elapsed() < Duration::from_secs(20), || {
            format!("refused only after work\n{}", r.describe())
        })?;
        check(r.stdout.lines().all(|l| l.starts_with('{')), || {
            r.describe()
        })?;
    }
    std::fs::remove_file(&a).unwrap();
    Ok(())
}
