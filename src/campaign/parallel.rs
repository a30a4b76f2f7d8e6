//! Reducing the buckets: each on a driver of its own, `-j` at a time
//! ([`in_parallel`]), every result's output checked and recorded.

use super::*;

/// One worker's drivers, started on first use.
pub(super) struct Pool<'a> {
    opts: &'a Options,
    targets: &'a [Target],
    running: HashMap<usize, Executor>,
}

impl Pool<'_> {
    fn get(&mut self, target: usize) -> Result<&mut Executor> {
        if !self.running.contains_key(&target) {
            let exec = session::start_driver(self.opts, &self.targets[target].binary)?;
            self.running.insert(target, exec);
        }
        Ok(self.running.get_mut(&target).expect("just started"))
    }
}

/// What [`in_parallel`] reports on the calling thread.
pub(super) enum Event<R> {
    /// Task `k`'s work said it is under way (`work`'s third argument).
    Started(usize),
    /// Task `k` finished with this result.
    Done(usize, R),
}

/// Runs `work` on every task with up to `jobs` threads, each with its own
/// drivers; `on` sees each task's start (when `work` calls the function it
/// is given) and result on the calling thread as they happen (so only that
/// thread reports and writes records). Stops handing out tasks once
/// interrupted.
pub(super) fn in_parallel<T: Sync, R: Send>(
    opts: &Options,
    targets: &[Target],
    jobs: usize,
    tasks: &[T],
    work: impl Fn(&mut Pool<'_>, &T, &dyn Fn()) -> R + Sync,
    mut on: impl FnMut(Event<R>),
) {
    if tasks.is_empty() {
        return;
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, tasks.len()) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || {
                let mut pool = Pool {
                    opts,
                    targets,
                    running: HashMap::new(),
                };
                loop {
                    if interrupt::requested() {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= tasks.len() {
                        break;
                    }
                    let started = || {
                        let _ = tx.send(Event::Started(i));
                    };
                    let result = work(&mut pool, &tasks[i], &started);
                    if tx.send(Event::Done(i, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for event in rx {
            on(event);
        }
    });
}

/// Reruns one artifact in a fresh driver.
pub(super) fn classify_one(pool: &mut Pool<'_>, found: &Found) -> Result<Classification> {
    let data = session::read_artifact(&found.path)?;
    let opts = pool.opts;
    let exec = pool.get(found.target)?;
    exec.set_value_cache(false);
    // Every original runs in a fresh process, as when reduced alone.
    exec.restart();
    Ok(Classification::from_reproduction(
        session::check_reproduces(
            opts,
            exec,
            &data,
            crate::run::timeouts::named_timeout(&found.path),
            session::Hangs::OnceIfTwiceTheGoal,
        )?,
    ))
}

/// Reduces one reproducing artifact with a worker's driver.
pub(super) fn reduce_one(
    pool: &mut Pool<'_>,
    projects: &[FuzzProject],
    grammar: Option<&Grammar>,
    found: &Found,
    emit_test: Option<PathBuf>,
    started: &dyn Fn(),
) -> Result<Summary> {
    let Some(Classification::Crash {
        signature,
        slowest_secs,
        ..
    }) = &found.class
    else {
        unreachable!("only reproducing artifacts are reduced");
    };
    let opts = pool.opts;
    let data = session::read_artifact(&found.path)?;
    let output = found.output();
    let tree = match (grammar, &opts.grammar) {
        (Some(g), Some(spec)) => Some(session::parse_artifact(g, spec, &found.path, &data)?),
        _ => None,
    };
    let target = &pool.targets[found.target];
    let (project, name, kind) = (
        &projects[target.project],
        target.name.clone(),
        target.kind.clone(),
    );
    let exec = pool.get(found.target)?;
    let job = ReduceJob {
        project,
        target: &name,
        build: &kind,
        artifact: &found.path,
        data: &data,
        signature: signature.clone(),
        slowest: Duration::from_secs_f64(*slowest_secs),
        output,
        emit_test,
        parsed: grammar.zip(tree.as_ref()),
        clock: None,
    };
    started();
    session::reduce_reproduced(opts, exec, job, None)
}

impl Campaign<'_> {
    /// Reduces each bucket's representative (every member with `--each`)
    /// unless its record has the result, `-j` at a time; reports each
    /// bucket as it finishes and records complete results.
    pub(super) fn reduce(
        &mut self,
        buckets: &[Bucket],
        bugs: &[Bug],
        reporter: &mut Reporter,
    ) -> Vec<Vec<(usize, Reduction)>> {
        let strategy = strategy_key(self.opts);
        let mut checks = Pool {
            opts: self.opts,
            targets: &self.targets,
            running: HashMap::new(),
        };
        let mut results: Vec<Vec<(usize, Reduction)>> = Vec::with_capacity(bugs.len());
        let mut tasks: Vec<(usize, usize)> = Vec::new(); // (bug, artifact)
        let mut cached_tests: Vec<(usize, usize, Option<String>)> = Vec::new();
        let mine = match &self.copts.partition {
            Some(p) => p.mine(bugs),
            None => vec![true; bugs.len()],
        };
        for (b, bug) in bugs.iter().enumerate() {
            if !mine[b] || !self.copts.reduce {
                let why = if self.copts.reduce {
                    Reduction::Skipped
                } else {
                    Reduction::NotAsked
                };
                results.push(vec![(self.representative(buckets, bug), why)]);
                continue;
            }
            // One reduction per bug: the smallest original of all its
            // buckets (`--each`: every artifact of every bucket).
            let members: Vec<usize> = if self.copts.each {
                bug.buckets
                    .iter()
                    .flat_map(|&k| buckets[k].members.iter().copied())
                    .collect()
            } else {
                vec![self.representative(buckets, bug)]
            };
            let mut known = Vec::new();
            for &m in &members {
                let f = &self.found[m];
                let recorded = self.record(f).and_then(|r| {
                    r.valid_output(&f.dir(), &f.output_name(), &strategy)
                        .cloned()
                });
                if let Some((message, code)) = &f.refused {
                    known.push((
                        m,
                        Reduction::Failed {
                            message: message.clone(),
                            code: *code,
                        },
                    ));
                    continue;
                }
                // A record is only a claim: the output must still crash the
                // same way, run alone in a fresh process.
                match recorded {
                    Some(r) if self.output_reproduces(&mut checks, m) => {
                        if self.opts.emit_test.is_some() && m == self.representative(buckets, bug) {
                            cached_tests.push((b, m, r.explained.clone()));
                        }
                        known.push((m, Reduction::Cached(r)))
                    }
                    _ => tasks.push((b, m)),
                }
            }
            results.push(known);
        }
        // `--emit-test DIR` for bugs whose result is recorded: written from
        // that result, as a reduction would have.
        for (b, m, explained) in &cached_tests {
            let (b, m) = (*b, *m);
            let Some(path) = test_path(&mut self.destinations, self.opts, &bugs[b], reporter)
            else {
                continue;
            };
            if let Err(e) =
                self.emit_cached_test(&mut checks, m, explained.as_deref(), &path, reporter)
            {
                reporter.warn(format!("{}: {e}", path.display()));
            }
        }
        drop(checks);
        // `--emit-test DIR`: a test per bug, named by its fingerprint, for
        // its representative.
        let mut tests: HashMap<(usize, usize), PathBuf> = HashMap::new();
        if self.opts.emit_test.is_some() {
            for &(b, m) in &tasks {
                if m != self.representative(buckets, &bugs[b]) {
                    continue;
                }
                if let Some(p) = test_path(&mut self.destinations, self.opts, &bugs[b], reporter) {
                    tests.insert((b, m), p);
                }
            }
        }
        let mut pending: Vec<usize> = vec![0; bugs.len()];
        for &(b, _) in &tasks {
            pending[b] += 1;
        }
        // Bugs that are entirely known are done already.
        for (b, n) in pending.iter().enumerate() {
            if *n == 0 {
                self.show_bug(buckets, bugs, b, &results[b], reporter);
            }
        }
        if !tasks.is_empty() && !interrupt::requested() {
            let jobs = self.copts.jobs.clamp(1, tasks.len());
            let open = pending.iter().filter(|&&n| n > 0).count();
            reporter.status(
                "Reducing",
                format!(
                    "{} of {} with {} (identity: {})",
                    plural(tasks.len(), "artifact"),
                    plural(open, "bug"),
                    plural(jobs, "job"),
                    self.opts.match_mode.name()
                ),
            );
            reporter.reductions_started(tasks.len());
        }
        let mut record_warning = None;
        {
            let this = &*self;
            let on = |event: Event<Result<Summary>>| {
                let (k, result) = match event {
                    Event::Started(k) => {
                        // `reduce-started` in JSON, as for a single artifact.
                        let f = &this.found[tasks[k].1];
                        if let Some(Classification::Crash { signature, .. }) = &f.class {
                            let target = &this.targets[f.target].name;
                            reporter.started(target, &f.path, f.len as usize, signature);
                        }
                        return;
                    }
                    Event::Done(k, result) => (k, result),
                };
                let (b, m) = tasks[k];
                // Records are written on this thread only.
                match &result {
                    Ok(summary) => {
                        if let Err(e) = this.record_reduction(m, summary, &strategy) {
                            record_warning.get_or_insert(e.to_string());
                        }
                    }
                    // The record's classification was wrong: forget it, so
                    // the next run classifies the artifact again.
                    Err(Error::NotAsClassified { .. }) => {
                        let _ = std::fs::remove_file(this.found[m].record_path());
                    }
                    Err(_) => {}
                }
                results[b].push((m, Reduction::from_result(result)));
                reporter.reduction_done();
                pending[b] -= 1;
                if pending[b] == 0 {
                    this.show_bug(buckets, bugs, b, &results[b], reporter);
                }
            };
            in_parallel(
                this.opts,
                &this.targets,
                this.copts.jobs,
                &tasks,
                |pool, &(b, m), started| {
                    let found = &this.found[m];
                    let test = tests.get(&(b, m)).cloned();
                    reduce_one(
                        pool,
                        &this.projects,
                        this.grammar.as_ref(),
                        found,
                        test,
                        started,
                    )
                },
                on,
            );
        }
        reporter.clear_progress();
        if let Some(w) = record_warning {
            self.record_warning.get_or_insert(w);
        }
        // Whatever never ran (interrupted) is listed too.
        for &(b, m) in &tasks {
            if !results[b].iter().any(|(x, _)| *x == m) {
                results[b].push((m, Reduction::NotRun));
                pending[b] -= 1;
                if pending[b] == 0 {
                    self.show_bug(buckets, bugs, b, &results[b], reporter);
                }
            }
        }
        results
    }

    /// The artifact a bug is reduced from: the smallest original of all its
    /// buckets (each bucket's first member is its smallest).
    pub(super) fn representative(&self, buckets: &[Bucket], bug: &Bug) -> usize {
        bug.buckets
            .iter()
            .map(|&k| buckets[k].representative())
            .min_by(|&a, &b| {
                let (fa, fb) = (&self.found[a], &self.found[b]);
                fa.len.cmp(&fb.len).then_with(|| fa.path.cmp(&fb.path))
            })
            .expect("a bug has a bucket")
    }

    /// Whether artifact `m`'s existing output crashes with its signature
    /// when run alone in a fresh process.
    pub(super) fn output_reproduces(&self, pool: &mut Pool<'_>, m: usize) -> bool {
        let f = &self.found[m];
        let Some((signature, slowest)) = crash_of(f) else {
            return false;
        };
        let Ok(bytes) = crate::input::read_file(&f.output()) else {
            return false;
        };
        let Ok(exec) = pool.get(f.target) else {
            return false;
        };
        exec.set_value_cache(false);
        exec.set_timeout(session::test_timeout(self.opts, signature, slowest));
        exec.restart();
        matches!(exec.run(&bytes).map(|r| r.outcome),
            Ok(Outcome::Crash(ref s)) if self.opts.match_mode.matches(signature, s))
    }

    /// Writes the regression test of artifact `m`'s recorded result.
    fn emit_cached_test(
        &self,
        pool: &mut Pool<'_>,
        m: usize,
        explained: Option<&str>,
        path: &Path,
        reporter: &mut Reporter,
    ) -> Result<()> {
        let f = &self.found[m];
        let (signature, slowest) = crash_of(f).expect("only crashing artifacts have results");
        let target = &self.targets[f.target];
        let output = f.output();
        let result = session::ExistingResult {
            project: &self.projects[target.project],
            target: &target.name,
            build: &target.kind,
            artifact: &f.path,
            original_len: f.len as usize,
            signature,
            slowest,
            output: &output,
            explained,
        };
        let exec = pool.get(f.target)?;
        session::emit_test_for_existing(self.opts, exec, &result, path, Some(reporter))
    }

    /// Adds a complete reduction to the artifact's record (an interrupted
    /// or budget-limited one only removes the stale entry: the file changed).
    pub(super) fn record_reduction(
        &self,
        m: usize,
        summary: &Summary,
        strategy: &str,
    ) -> Result<()> {
        let f = &self.found[m];
        let Some(mut record) = self.record(f) else {
            return Ok(());
        };
        record.reduced.retain(|r| r.output != f.output_name());
        if !summary.interrupted && !summary.budget_exhausted {
            if let Ok(bytes) = crate::input::read_file(&summary.output) {
                record.reduced.push(ReducedRecord {
                    output: f.output_name(),
                    sha1: sha1_hex(&bytes),
                    len: bytes.len() as u64,
                    signature: summary.signature.clone(),
                    strategy: strategy.to_owned(),
                    verified_fresh: summary.verified_fresh,
                    failing_lines: summary.failing_lines().to_vec(),
                    explained: summary.explanation.as_ref().map(|e| e.text.clone()),
                });
            }
        }
        write_record(&f.record_path(), &record)
    }
}

/// `--emit-test DIR`'s file for `bug` (`crash_<fingerprint>.rs`), claimed
/// for this run; `None` (with a warning) if it cannot be.
fn test_path(
    destinations: &mut Destinations,
    opts: &Options,
    bug: &Bug,
    reporter: &mut Reporter,
) -> Option<PathBuf> {
    let dir = opts.emit_test.as_ref()?;
    let path = dir.join(format!("crash_{}.rs", bug.fingerprint.replace('-', "_")));
    match destinations.claim_creating_dirs(&path, "--emit-test") {
        Ok(p) => Some(p),
        Err(e) => {
            reporter.warn(e.to_string());
            None
        }
    }
}

/// An artifact's crash signature and slowest run, if it crashed.
fn crash_of(f: &Found) -> Option<(&Signature, Duration)> {
    match &f.class {
        Some(Classification::Crash {
            signature,
            slowest_secs,
            ..
        }) => Some((signature, Duration::from_secs_f64(*slowest_secs))),
        _ => None,
    }
}
