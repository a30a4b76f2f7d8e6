//! Timeouts as libFuzzer means them, and what "still times out" means for a
//! reduced input.
//!
//! libFuzzer's `-timeout=N` is checked by an alarm every `N/2 + 1` seconds
//! (`SetTimer(UnitTimeoutSec / 2 + 1)`; the alarm reports a unit once it has
//! run `N` whole seconds). Running one file (`cargo fuzz run <target> <file>
//! -- -timeout=N`), the alarm first sees the unit about `N/2 + 1` seconds in,
//! which is less than `N`, so the file is reported only at the second alarm:
//! it must run about `2·(N/2 + 1)` seconds (4 s for `-timeout=2`, 2 s for
//! `-timeout=1`). A `timeout-*` artifact therefore reduces for "still runs
//! at least that long", with a margin of 10% for a loaded machine.
//!
//! Which `N`:
//! * `-- -timeout=N`: that one.
//! * `--timeout SECS`: no libFuzzer semantics, "runs longer than SECS".
//! * Neither: from the original's measured run time `t` (at most the
//!   10 s check limit): the largest `N` whose reporting time (with the
//!   margin) is at most `t/2`, so the reduction may cut the work in half but
//!   no further; if even `N = 1` needs more, the largest `N` the original
//!   itself reaches. An input that runs less than `1.1 × 2` seconds is not
//!   a timeout libFuzzer would report at all.

use std::path::Path;
use std::time::Duration;

/// Slack over libFuzzer's reporting time: the reduced input must run this
/// much longer than strictly needed, so that a busier or faster run of the
/// real binary still reports it.
const MARGIN: f64 = 1.1;

/// How long a single input must run for `cargo fuzz run <file> -- -timeout=N`
/// to report it as a timeout: two alarm periods of `N/2 + 1` seconds.
pub fn reported_after(n: u64) -> Duration {
    Duration::from_secs(2 * (n / 2 + 1))
}

/// [`reported_after`] with the margin: what a reduced input must reach.
pub fn deadline_for(n: u64) -> Duration {
    reported_after(n).mul_f64(MARGIN)
}

/// The largest `-timeout=N` (at most 1200, libFuzzer's default) that an
/// input running `ran` is surely reported at.
pub fn largest_reported(ran: Duration) -> Option<u64> {
    (1..=1200u64).rev().find(|&n| deadline_for(n) <= ran)
}

/// What a timeout artifact is reduced for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeoutGoal {
    /// Every candidate is killed here; one that gets this far still times out.
    pub deadline: Duration,
    /// The libFuzzer `-timeout=N` the result is reported at (for the
    /// reproduce line), if any.
    pub libfuzzer: Option<u64>,
}

/// The goal for a timeout artifact whose original ran `measured` (or was
/// killed there), under `--timeout` (`ours`) or `-timeout=N` (`libfuzzer`).
/// `None`: the original does not time out in that sense.
pub fn goal(
    ours: Option<Duration>,
    libfuzzer: Option<u64>,
    measured: Duration,
) -> Option<TimeoutGoal> {
    if let Some(s) = ours {
        return (measured >= s).then_some(TimeoutGoal {
            deadline: s,
            libfuzzer: largest_reported(s),
        });
    }
    if let Some(n) = libfuzzer {
        let deadline = deadline_for(n);
        return (measured >= deadline).then_some(TimeoutGoal {
            deadline,
            libfuzzer: Some(n),
        });
    }
    let n = largest_reported(measured / 2).or_else(|| largest_reported(measured))?;
    Some(TimeoutGoal {
        deadline: deadline_for(n),
        libfuzzer: Some(n),
    })
}

/// The time limit for running an original the first time: long enough to
/// tell a timeout under the options from a crash.
pub fn check_limit(ours: Option<Duration>, libfuzzer: Option<u64>, default: Duration) -> Duration {
    match (ours, libfuzzer) {
        (Some(s), _) => s,
        (None, Some(n)) => deadline_for(n),
        (None, None) => default,
    }
}

/// libFuzzer names what it killed at `-timeout` `timeout-<sha1>`.
pub fn named_timeout(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("timeout-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libfuzzer_reports_one_input_after_two_alarm_periods() {
        assert_eq!(reported_after(1), Duration::from_secs(2));
        assert_eq!(reported_after(2), Duration::from_secs(4));
        assert_eq!(reported_after(3), Duration::from_secs(4));
        assert_eq!(reported_after(10), Duration::from_secs(12));
        assert_eq!(reported_after(1200), Duration::from_secs(1202));
        assert_eq!(largest_reported(Duration::from_secs(2)), None);
        assert_eq!(largest_reported(Duration::from_millis(2200)), Some(1));
        assert_eq!(largest_reported(Duration::from_secs(5)), Some(3));
    }

    #[test]
    fn the_default_goal_keeps_half_the_original_s_time() {
        // Killed at the 10 s check limit: -timeout=3 (4.4 s) fits in 5 s.
        let g = goal(None, None, Duration::from_secs(10)).unwrap();
        assert_eq!(g.libfuzzer, Some(3));
        assert_eq!(g.deadline, Duration::from_millis(4400));
        // 3 s: half is too short for -timeout=1, the whole is not.
        let g = goal(None, None, Duration::from_secs(3)).unwrap();
        assert_eq!(g.libfuzzer, Some(1));
        // 1 s: libFuzzer would not report it alone at any -timeout.
        assert_eq!(goal(None, None, Duration::from_secs(1)), None);
    }

    #[test]
    fn explicit_limits_are_kept() {
        let g = goal(None, Some(2), Duration::from_secs(10)).unwrap();
        assert_eq!(
            (g.deadline, g.libfuzzer),
            (Duration::from_millis(4400), Some(2))
        );
        assert_eq!(goal(None, Some(2), Duration::from_secs(3)), None);
        let g = goal(Some(Duration::from_secs(1)), None, Duration::from_secs(10)).unwrap();
        assert_eq!((g.deadline, g.libfuzzer), (Duration::from_secs(1), None));
        assert_eq!(
            check_limit(None, Some(2), Duration::from_secs(10)),
            Duration::from_millis(4400)
        );
        assert!(named_timeout(Path::new("fuzz/artifacts/t/timeout-abc")));
        assert!(!named_timeout(Path::new("fuzz/artifacts/t/crash-abc")));
    }
}
