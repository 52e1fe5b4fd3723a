//! Arrival-pattern prediction: a simple moving average (Marendic et al. 2016 propose SMA) of each
//! process's offset from the first arrival over the last `WINDOW` calls, quantised so that
//! repeating patterns map to the same schedule (cache key) and every rank, running the same
//! integer arithmetic on the same shared history, gets bit-identical inputs.
use std::collections::VecDeque;

/// Calls the moving average covers.
pub const WINDOW: usize = 4;

/// The measured patterns of the last `WINDOW` calls, as offsets (ns) from each call's first
/// arrival.
#[derive(Default, Clone, Debug)]
pub struct History {
    calls: VecDeque<Vec<i64>>,
}

impl History {
    /// Adds the absolute arrival times (one clock) of one call.
    pub fn push(&mut self, arrivals: &[i64]) {
        let first = arrivals.iter().copied().min().unwrap_or(0);
        if self.calls.front().is_some_and(|c| c.len() != arrivals.len()) {
            self.calls.clear();
        }
        if self.calls.len() == WINDOW {
            self.calls.pop_front();
        }
        self.calls.push_back(arrivals.iter().map(|a| a.saturating_sub(first)).collect());
    }

    /// The most recent call's offsets.
    pub fn last(&self) -> Option<&[i64]> {
        self.calls.back().map(|v| &v[..])
    }

    /// The predicted offsets of the next call, each rounded to a multiple of `quantum` (> 0) and
    /// expressed in quanta; None without history.
    pub fn predict(&self, quantum: i64) -> Option<Vec<i64>> {
        let first = self.calls.front()?;
        let k = self.calls.len() as i64;
        Some((0..first.len()).map(|p| {
            let sum: i64 = self.calls.iter().map(|c| c[p]).fold(0i64, i64::saturating_add);
            (sum / k + quantum / 2) / quantum
        }).collect())
    }
}

/// Mean absolute difference (ns) between a prediction (in quanta) and the measured offsets.
pub fn error_ns(predicted: &[i64], quantum: i64, measured: &[i64]) -> i64 {
    if predicted.len() != measured.len() || predicted.is_empty() {
        return 0;
    }
    let sum: i64 = predicted.iter().zip(measured).map(|(q, m)| (q * quantum - m).abs()).fold(0, i64::saturating_add);
    sum / predicted.len() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn moving_average_quantised() {
        let mut h = History::default();
        assert!(h.predict(10).is_none());
        h.push(&[100, 130, 100]);
        h.push(&[200, 250, 210]);
        // offsets (0,30,0) and (0,50,10): mean (0,40,5) -> quanta of 10: (0,4,1) (5 rounds up).
        assert_eq!(h.predict(10).unwrap(), vec![0, 4, 1]);
        for _ in 0..WINDOW {
            h.push(&[0, 0, 70]);
        }
        assert_eq!(h.predict(10).unwrap(), vec![0, 0, 7]);
        assert_eq!(error_ns(&[0, 0, 7], 10, &[0, 10, 60]), 6);
        h.push(&[1, 2]); // a different size restarts the history
        assert_eq!(h.predict(1).unwrap(), vec![0, 1]);
    }
}
