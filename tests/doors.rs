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

use common::real;
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
    let judged = judged_trials("doors");
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
        judged(
            "a_panic_raised_inside_std_is_placed_at_its_caller",
            item3_std_panics,
        ),
        judged(
            "a_hook_silenced_on_every_run_keeps_bugs_apart_by_their_message",
            item4_hook_every_run,
        ),
        judged(
            "a_hang_is_placed_at_its_function_across_targets",
            item5_hangs,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

// ------------------------------------------------------------------ helpers

/// The `trust` fixture, copied once per test process (shared with
/// `trust.rs`'s copy: builds without a sanitizer go to the shared driver
/// directory, `common::run`).
fn trust() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| copy_fixture_as("trust", "trust-doors"))
}

/// The `doors` fixture built by `cargo +nightly fuzz build` (every
/// target): (root, directory of the real binaries).
fn doors_built() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = copy_fixture_as("doors", "doors-real");
        let bins = real::cargo_fuzz_build(&root);
        (root, bins)
    })
}

/// `/abs/root/src/lib.rs:3:9` → `src/lib.rs:3:9` (as the judge says it).
fn relative_to(root: &Path, loc: &str) -> String {
    let root = root.canonicalize().unwrap();
    loc.strip_prefix(&format!("{}/", root.display()))
        .unwrap_or(loc)
        .to_owned()
}

/// A fresh, empty directory under the test's temporary root.
fn scratch(name: &str) -> PathBuf {
    let dir = tmp_root().join("doors-scratch").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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

// ------------------------------------------------------------------ 3

/// `capacity overflow` panics at std's `raw_vec/mod.rs:28:5`, reached from
/// two callers, were one bug, and a reduction slipped from one caller's to
/// the other's. `std_panic`'s `A…HUGE` (caller `read_records`) is reduced
/// from an input that also holds a `B…` line (caller `read_names`, which
/// needs fewer bytes): the result stays `read_records`'s; a directory run
/// finds two bugs, the `records` target's crash joining the first. Every
/// verdict is the real binary's: where libFuzzer's stack at the abort says
/// the panic came from.
fn item3_std_panics() -> Result<(), Failed> {
    let (root, bins) = doors_built();
    // One test at a time empties and fills the copy's `fuzz/artifacts`.
    let _serial = lock_target("doors-real");
    let arts = root.join("fuzz/artifacts");
    let _ = std::fs::remove_dir_all(&arts);
    let mut doc = Vec::new();
    for i in 0..30 {
        doc.extend(format!("c{i} some ordinary line\n").bytes());
    }
    let mut a = b"x\nA 12345 HUGE abc\n".to_vec();
    a.extend(&doc);
    a.extend(b"Bzz\n");
    a.extend(&doc);
    let a = artifact(root, "std_panic", "crash-a", &a);
    let mut b = doc.clone();
    b.extend(b"Bnames\n");
    let b = artifact(root, "std_panic", "crash-b", &b);
    let r = artifact(root, "records", "crash-r", b"R0123456789abcdef");
    let caller = |target: &str, file: &Path| -> Result<String, Failed> {
        let report = real::judge(root, &bins.join(target), file, &[]);
        check(report.verdict.kind == "panic", || report.output.clone())?;
        real::panic_caller(root, &bins.join(target), &report)
            .ok_or_else(|| format!("no caller on the real stack:\n{}", report.output).into())
    };
    let (at_a, at_b, at_r) = (
        caller("std_panic", &a)?,
        caller("std_panic", &b)?,
        caller("records", &r)?,
    );
    check(at_a != at_b && at_a == at_r, || {
        format!("fixture: callers {at_a} {at_b} {at_r}")
    })?;

    // One artifact: the result keeps its caller.
    let out = run_default(
        &[
            "--message-format",
            "json",
            "--no-explain",
            &a.display().to_string(),
        ],
        root,
    );
    out.assert_no_panic();
    check(out.code == Some(0), || out.describe())?;
    let sig = out.message("reduce-finished")["signature"].clone();
    check(
        relative_to(root, sig["location"].as_str().unwrap_or("")) == at_a,
        || {
            format!(
                "signature {sig}, the real caller {at_a}\n{}",
                out.describe()
            )
        },
    )?;
    let reduced = reduced_path(&a);
    let again = caller("std_panic", &reduced)?;
    check(again == at_a, || {
        format!(
            "the result {:?} is {again}'s capacity overflow, not {at_a}'s",
            std::fs::read(&reduced).unwrap_or_default()
        )
    })?;

    // A directory run: two bugs, `records` with the first.
    std::fs::remove_file(&reduced).unwrap();
    let out = run_default(
        &[
            "--message-format",
            "json",
            "--no-explain",
            &arts.display().to_string(),
        ],
        root,
    );
    out.assert_no_panic();
    check(out.code == Some(0), || out.describe())?;
    let bugs: Vec<serde_json::Value> = out
        .json()
        .into_iter()
        .filter(|v| v["reason"] == "bug")
        .collect();
    check(bugs.len() == 2, || {
        format!("expected two bugs\n{}", out.describe())
    })?;
    for bug in &bugs {
        let at = relative_to(root, bug["signature"]["location"].as_str().unwrap_or(""));
        let targets: Vec<&str> = bug["targets"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.as_str())
            .collect();
        let expected: &[&str] = if at == at_a {
            &["records", "std_panic"]
        } else {
            &["std_panic"]
        };
        check(targets == expected && (at == at_a || at == at_b), || {
            format!("bug at {at} of {targets:?}\n{}", out.describe())
        })?;
        let output = root.join(bug["output"].as_str().unwrap());
        let representative = Path::new(bug["representative"].as_str().unwrap());
        let target = representative
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str())
            .unwrap();
        let real_at = caller(target, &output)?;
        check(real_at == at, || {
            format!("{output:?}: real {real_at}, ours {at}")
        })?;
    }
    std::fs::remove_dir_all(&arts).unwrap();
    Ok(())
}

// ------------------------------------------------------------------ 4

/// A target that installs a silent panic hook on every run: bug A (`unwrap`
/// on `None`) was reduced to an input of bug B (`panic!("bug B")`), exit 0,
/// signature `panic: <panic without hook>`. The A artifact below also holds
/// a `B` line, which alone is a smaller crash.
fn item4_hook_every_run() -> Result<(), Failed> {
    let (root, bins) = doors_built();
    // One test at a time empties and fills the copy's `fuzz/artifacts`.
    let _serial = lock_target("doors-real");
    let a = artifact(
        root,
        "hook_every_run",
        "crash-a",
        b"some text\nA bug A needs four bytes\nmore text\nB and bug B\n",
    );
    for mode in ["location", "message"] {
        let _ = std::fs::remove_file(reduced_path(&a));
        let out = run_default(
            &[
                "--match",
                mode,
                "--message-format",
                "json",
                "--no-explain",
                &a.display().to_string(),
            ],
            root,
        );
        out.assert_no_panic();
        check(out.code == Some(0), || out.describe())?;
        let sig = out.message("reduce-finished")["signature"].clone();
        check(
            sig["message"]
                .as_str()
                .is_some_and(|m| m.contains("Option::unwrap()")),
            || format!("--match {mode}: signature {sig}\n{}", out.describe()),
        )?;
        let result = std::fs::read(reduced_path(&a)).unwrap();
        check(
            result.first() == Some(&b'A') && !result.contains(&b'B'),
            || format!("--match {mode}: the result {result:?} is not bug A's"),
        )?;
        // The real binary: the silenced panic unwinds into libFuzzer and
        // aborts (it cannot say which bug); ours, run alone, says bug A.
        let real = real::judge(root, &bins.join("hook_every_run"), &reduced_path(&a), &[]);
        check(real.verdict.kind == "deadly-signal", || real.output.clone())?;
        let fresh = run_default(
            &[
                "--classify",
                "--message-format",
                "json",
                "--fuzz-target",
                "hook_every_run",
                &reduced_path(&a).display().to_string(),
            ],
            root,
        )
        .message("classified");
        check(
            fresh["signature"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("Option::unwrap()")),
            || format!("{fresh}"),
        )?;
    }
    // The human signature says what told it apart.
    let out = run_default(&["--classify", &a.display().to_string()], root);
    check(out.stdout.contains("told apart by its message"), || {
        out.describe()
    })?;
    std::fs::remove_dir_all(root.join("fuzz/artifacts/hook_every_run")).unwrap();
    Ok(())
}

// ------------------------------------------------------------------ 5

/// One hang reached from two targets was two bugs. `skip_run`'s hang from
/// `hang_a` and `hang_b` is one bug; `hang_b`'s hang in `wait_close` is
/// another, though the same target: each named by the function libFuzzer's
/// alarm stack shows it in.
fn item5_hangs() -> Result<(), Failed> {
    let (root, bins) = doors_built();
    // One test at a time empties and fills the copy's `fuzz/artifacts`.
    let _serial = lock_target("doors-real");
    let arts = root.join("fuzz/artifacts");
    let _ = std::fs::remove_dir_all(&arts);
    let ha = artifact(root, "hang_a", "timeout-a", b"S some text LOOP more");
    let hb = artifact(root, "hang_b", "timeout-b", b"SS other text LOOP");
    let hw = artifact(root, "hang_b", "timeout-w", b"W text WAIT text");
    let mut real_places = Vec::new();
    for (target, file) in [("hang_a", &ha), ("hang_b", &hb), ("hang_b", &hw)] {
        let report = real::judge(root, &bins.join(target), file, &["-timeout=1"]);
        check(report.verdict.kind == "timeout", || report.output.clone())?;
        let f = real::alarm_function(root, &bins.join(target), &report)
            .ok_or_else(|| format!("no function at the alarm:\n{}", report.output))?;
        real_places.push(f);
    }
    check(
        real_places[0] == real_places[1] && real_places[1] != real_places[2],
        || format!("fixture: {real_places:?}"),
    )?;
    let out = run_default(
        &[
            "--message-format",
            "json",
            "--no-reduce",
            &arts.display().to_string(),
            "--",
            "-timeout=1",
        ],
        root,
    );
    out.assert_no_panic();
    check(out.code == Some(0), || out.describe())?;
    let bugs: Vec<serde_json::Value> = out
        .json()
        .into_iter()
        .filter(|v| v["reason"] == "bug")
        .collect();
    let mut seen: Vec<(String, Vec<String>)> = bugs
        .iter()
        .map(|b| {
            let f = b["signature"]["function"].as_str().unwrap_or("").to_owned();
            let t = b["targets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect();
            (f, t)
        })
        .collect();
    seen.sort();
    let mut expected = vec![
        (
            real_places[0].clone(),
            vec!["hang_a".to_owned(), "hang_b".to_owned()],
        ),
        (real_places[2].clone(), vec!["hang_b".to_owned()]),
    ];
    expected.sort();
    check(seen == expected, || {
        format!(
            "bugs {seen:?}, the real alarm stacks say {expected:?}\n{}",
            out.describe()
        )
    })?;
    std::fs::remove_dir_all(&arts).unwrap();
    Ok(())
}
