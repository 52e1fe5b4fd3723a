//! Arrival estimates from an application's progress reports (MPIX_Pap_progress,
//! MPIX_Pap_expect): the background information of Proficz 2018 and of Proficz & Ocetkiewicz
//! 2021 section 6, turned into "this rank will enter its next reduction at time t".
//!
//! * `expect(now, s)`: the application knows; the estimate is `now + s`.
//! * `progress(now, f)`: rate extrapolation. The first report of a compute phase is the anchor
//!   (t0, f0); a later one (t, f) with f > f0 gives the rate (f - f0) / (t - t0) and the
//!   estimate t + (1 - f) / rate. A fraction below the previous one starts a new phase (the
//!   application began its next iteration); f = 1 means "arriving now". One report alone gives
//!   no estimate (no rate yet), unless an earlier estimate of the phase stands.
//!
//! Times are CLOCK_MONOTONIC ns. Input is checked by the caller (`check_fraction`,
//! `check_seconds`); estimates are capped at `HORIZON_NS` ahead so a crawling rate cannot
//! overflow.

/// Estimates lie at most this far ahead (one hour).
pub const HORIZON_NS: i64 = 3_600_000_000_000;

/// One rank's estimator for one communicator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Estimator {
    /// The phase's first report (time, fraction).
    anchor: Option<(i64, f64)>,
    /// The latest fraction reported.
    last: f64,
    /// The current estimate of the arrival time.
    estimate: Option<i64>,
}

/// The reason a fraction is refused, or None.
pub fn check_fraction(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("fraction_done is NaN; pass the finished share of the compute phase, between 0 and 1".into())
    } else if !(0.0..=1.0).contains(&f) {
        Some(format!("fraction_done is {f}; pass the finished share of the compute phase, between 0 and 1"))
    } else {
        None
    }
}

/// The reason a time to arrival is refused, or None.
pub fn check_seconds(s: f64) -> Option<String> {
    if !s.is_finite() || s < 0.0 {
        Some(format!("seconds_until_arrival is {s}; pass a finite number of seconds, 0 or more"))
    } else {
        None
    }
}

impl Estimator {
    /// Forgets the phase (the rank arrived: the next report belongs to the next call).
    pub fn reset(&mut self) {
        *self = Estimator::default();
    }

    /// The current estimate, if any.
    pub fn estimate(&self) -> Option<i64> {
        self.estimate
    }

    /// A report that the application expects to arrive in `secs` (checked) seconds from `now`.
    pub fn expect(&mut self, now: i64, secs: f64) -> i64 {
        let e = now.saturating_add((secs * 1e9).min(HORIZON_NS as f64) as i64);
        self.estimate = Some(e);
        e
    }

    /// A report of `f` (checked) of the compute phase done at `now`; the new estimate, if any.
    pub fn progress(&mut self, now: i64, f: f64) -> Option<i64> {
        if self.anchor.is_some() && f < self.last {
            self.reset();
        }
        self.last = f;
        if f >= 1.0 {
            self.estimate = Some(now);
            return self.estimate;
        }
        let Some((t0, f0)) = self.anchor else {
            self.anchor = Some((now, f));
            return self.estimate;
        };
        let (dt, df) = (now - t0, f - f0);
        if dt > 0 && df > 0.0 {
            let ahead = (1.0 - f) * dt as f64 / df;
            self.estimate = Some(now.saturating_add(ahead.min(HORIZON_NS as f64) as i64));
        }
        self.estimate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_extrapolation() {
        let mut e = Estimator::default();
        assert_eq!(e.progress(1000, 0.0), None, "one report gives no rate");
        // A quarter in 100 ns: the rest takes 300 more.
        assert_eq!(e.progress(1100, 0.25), Some(1400));
        // Slower now: half in 300 ns from the anchor; the other half takes 300.
        assert_eq!(e.progress(1300, 0.5), Some(1600));
        assert_eq!(e.progress(1450, 1.0), Some(1450), "done means arriving now");
    }

    #[test]
    fn anchor_need_not_be_zero_and_stalls_slow_the_rate() {
        let mut e = Estimator::default();
        e.progress(0, 0.5);
        assert_eq!(e.progress(100, 0.75), Some(200));
        // No progress since: the rate from the anchor slows, the estimate moves out.
        assert_eq!(e.progress(150, 0.75), Some(300));
        // No time since the anchor (a repeated report at its instant): the estimate stands.
        let mut f = Estimator::default();
        f.progress(0, 0.5);
        assert_eq!(f.progress(0, 0.6), None);
    }

    #[test]
    fn going_backwards_starts_a_new_phase() {
        let mut e = Estimator::default();
        e.progress(0, 0.0);
        e.progress(100, 0.5);
        assert_eq!(e.progress(1000, 0.1), None, "the next iteration: anchor again");
        assert_eq!(e.progress(1100, 0.2), Some(1900));
    }

    #[test]
    fn expect_and_horizon() {
        let mut e = Estimator::default();
        assert_eq!(e.expect(10, 0.5), 500_000_010);
        assert_eq!(e.expect(0, 1e30), HORIZON_NS);
        e.reset();
        e.progress(0, 0.0);
        // A crawl of 1e-15 per ns would put the estimate weeks ahead.
        assert_eq!(e.progress(1, 1e-15), Some(1 + HORIZON_NS));
        e.reset();
        assert_eq!(e.estimate(), None);
    }

    #[test]
    fn absurd_input_is_named() {
        for f in [f64::NAN, -0.1, 1.5, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(check_fraction(f).is_some_and(|m| m.contains("fraction_done")), "{f}");
        }
        for f in [0.0, 0.3, 1.0] {
            assert!(check_fraction(f).is_none());
        }
        for s in [f64::NAN, -1.0, f64::INFINITY] {
            assert!(check_seconds(s).is_some_and(|m| m.contains("seconds_until_arrival")), "{s}");
        }
        assert!(check_seconds(0.0).is_none() && check_seconds(1e9).is_none());
    }
}
