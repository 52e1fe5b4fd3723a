//! A run-length list of one element's basic elements (`(what, how many)` in typemap order),
//! repeated `reps` times: the basic-element counterpart of [`super::blocks::Blocks`], so a vector of
//! 2^26 structs keeps one struct's runs, not 2^26 copies.
use super::{BuildError, MAX_BLOCKS};

#[derive(Clone, Debug)]
pub struct Runs<T> {
    runs: Vec<(T, u64)>,
    reps: u64,
}

impl<T> Default for Runs<T> {
    fn default() -> Runs<T> {
        Runs { runs: Vec::new(), reps: 1 }
    }
}

impl<T: Copy + PartialEq> PartialEq<Vec<(T, u64)>> for Runs<T> {
    fn eq(&self, other: &Vec<(T, u64)>) -> bool {
        self.reps == 1 && &self.runs == other
    }
}

impl<T: Copy + PartialEq> Runs<T> {
    /// The runs of one repetition.
    pub fn runs(&self) -> &[(T, u64)] {
        &self.runs
    }
    /// How many times [`Runs::runs`] repeats in one element.
    pub fn reps(&self) -> u64 {
        self.reps
    }

    /// Appends `n` of `t`, merged with the last run if it is the same; a repetition is expanded
    /// first (refused past [`MAX_BLOCKS`] runs).
    pub fn push(&mut self, t: T, n: u64) -> Result<(), BuildError> {
        if n == 0 {
            return Ok(());
        }
        if self.reps > 1 {
            let total = (self.runs.len() as u64).saturating_mul(self.reps);
            if total > MAX_BLOCKS {
                return Err(BuildError::TooManyBlocks(total));
            }
            let one = std::mem::take(&mut self.runs);
            let reps = std::mem::replace(&mut self.reps, 1);
            for _ in 0..reps {
                for &(t, n) in &one {
                    self.push(t, n)?;
                }
            }
        }
        let len = self.runs.len() as u64;
        match self.runs.last_mut() {
            Some(last) if last.0 == t => last.1 = last.1.checked_add(n).ok_or(BuildError::Overflow)?,
            _ if len >= MAX_BLOCKS => return Err(BuildError::TooManyBlocks(len + 1)),
            _ => self.runs.push((t, n)),
        }
        Ok(())
    }

    /// Appends `reps` copies of `c`: one run stays one run; an empty list becomes a repetition.
    pub fn repeat(&mut self, c: &Runs<T>, reps: u64) -> Result<(), BuildError> {
        if reps == 0 || c.runs.is_empty() {
            return Ok(());
        }
        let reps = reps.checked_mul(c.reps).ok_or(BuildError::Overflow)?;
        if c.runs.len() == 1 {
            return self.push(c.runs[0].0, c.runs[0].1.checked_mul(reps).ok_or(BuildError::Overflow)?);
        }
        if self.runs.is_empty() {
            self.runs = c.runs.clone();
            self.reps = reps;
            return Ok(());
        }
        let total = (c.runs.len() as u64).saturating_mul(reps);
        if total > MAX_BLOCKS {
            return Err(BuildError::TooManyBlocks(total));
        }
        for _ in 0..reps {
            for &(t, n) in &c.runs {
                self.push(t, n)?;
            }
        }
        Ok(())
    }
}
