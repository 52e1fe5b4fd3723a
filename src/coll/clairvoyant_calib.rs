//! The Clairvoyant round length's cost model, calibrated: a round costs a fixed part (one
//! zero-byte message round trip: in threads mode a transfer is exactly that, an address and its
//! ack) plus a per-byte part (copying and combining a segment: a memcpy plus an f64 sum of a
//! segment-sized buffer). Defaults: 4 µs + 1 ns per byte.
//!
//! Every rank must build the same schedule, so the round length must be bit-identical on all
//! ranks. It is agreed once per communicator, at the first Clairvoyant candidate reduce (so
//! never on the critical path of later calls): each process measures its per-byte cost once,
//! lazily; comm ranks 0 and 1 time a zero-byte ping-pong (the median of 9 trips after an
//! untimed one); then every rank sends its
//! (fixed ns, picoseconds per byte) to every other and all take rank 0's fixed part and the
//! upper median of the per-byte parts, which is exact and the same everywhere (an allreduce done
//! by hand on a phase of that reduce).
use super::Coll;
use crate::error::MpiResult;
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Instant;

/// The phase of the first candidate reduce that carries the calibration messages.
const PHASE_CALIBRATE: i32 = 249;

/// Bounds that keep a disturbed measurement (a preempted rank) from making absurd schedules.
const FIXED_NS: (i64, i64) = (500, 100_000);
const PS_PER_BYTE: (i64, i64) = (50, 20_000);

/// A round's cost: `fixed_ns + bytes * ps_per_byte / 1000` ns for a segment of `bytes` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundCost {
    pub fixed_ns: i64,
    pub ps_per_byte: i64,
}

/// The uncalibrated model.
pub const DEFAULT: RoundCost = RoundCost {
    fixed_ns: 4_000,
    ps_per_byte: 1_000,
};

impl RoundCost {
    /// Round length in ns for segments of `seg_bytes` bytes.
    pub fn round_ns(&self, seg_bytes: usize) -> i64 {
        self.fixed_ns
            .saturating_add((seg_bytes as i64).saturating_mul(self.ps_per_byte) / 1000)
    }
}

/// This process's per-byte cost of copying and combining segments of about `bytes` bytes
/// (picoseconds per byte), measured once: memcpy + f64-sum passes over segment-sized windows of
/// a region larger than a core's L2 (a segment to combine comes from another core or from
/// memory, never from our own cache). After an untimed sweep that faults the pages in, each
/// window is timed on its own, at a quarter, one and four times `bytes`, and the per-byte cost
/// is the slope of the line `clairvoyant::robust_fit::fit_timings` draws through those timings
/// (the lower quartile per size, then Theil-Sen): a preempted window is an outlier it ignores,
/// where one timing of a whole sweep took it in (whole-vector step estimates of 3.26 ms at 128K
/// floats and 1.18 ms at 1M were seen on a loaded machine). The fixed part of a window (a
/// timer read) falls in the intercept, which is not used: the fixed cost of a round is the
/// ping-pong's. As many bytes are moved as by the one-sweep measure it replaces.
fn local_ps_per_byte(bytes: usize) -> i64 {
    const REGION: usize = 4 << 20;
    static PS: OnceLock<i64> = OnceLock::new();
    *PS.get_or_init(|| {
        let words = REGION / 8;
        let src: Vec<f64> = (0..words).map(|i| i as f64).collect();
        let mut dst = vec![0f64; words];
        let pass = |d: &mut [f64], s: &[f64]| {
            d.copy_from_slice(s);
            for (d, s) in d.iter_mut().zip(s) {
                *d += *s;
            }
            black_box(d);
        };
        pass(&mut dst, black_box(&src));
        // Window sizes in words, each at least 4 KiB and at most a quarter of the region.
        let sizes = [bytes / 4, bytes, bytes * 4].map(|b| (b / 8).clamp(512, words / 4));
        let mut samples = Vec::new();
        let mut at = 0;
        // Two sweeps' worth of windows, walking the region, so each comes from memory, not
        // from the previous one's cache.
        for _ in 0..2 * words / sizes.iter().sum::<usize>() {
            for &w in &sizes {
                if at + w > words {
                    at = 0;
                }
                let t = Instant::now();
                pass(&mut dst[at..at + w], black_box(&src[at..at + w]));
                samples.push(((w * 8) as f64, t.elapsed().as_nanos() as f64));
                at += w;
            }
        }
        ps_per_byte_of(&samples)
    })
}

/// The per-byte cost (ps) of the timings `samples` (bytes, ns): the slope of their
/// `fit_timings` line; when the sizes do not differ (a clamped window) or the slope is not positive, the
/// median of the per-byte rates.
fn ps_per_byte_of(samples: &[(f64, f64)]) -> i64 {
    let slope = crate::clairvoyant::robust_fit::fit_timings(samples).map(|l| l.slope).filter(|&b| b > 0.0);
    let per_byte = slope.or_else(|| crate::clairvoyant::robust_fit::median(&mut samples.iter().map(|&(x, y)| y / x).collect::<Vec<_>>()));
    (per_byte.unwrap_or(1.0) * 1000.0).round() as i64
}

/// The communicator's agreed round cost (see the module documentation); every rank of `cx`
/// calls this at the same call.
pub fn agree(cx: &Coll, seg_bytes: usize) -> MpiResult<RoundCost> {
    let n = cx.size();
    let me = cx.rank();
    let ph = cx.phase(PHASE_CALIBRATE);
    let nothing = std::ptr::NonNull::<u8>::dangling().as_ptr();
    let mut fixed = 0i64;
    if n >= 2 && me < 2 {
        // The first trip waits for the later of the two to arrive: not timed.
        let mut rtts = Vec::with_capacity(9);
        for i in 0..10 {
            let t = Instant::now();
            // SAFETY: zero-byte messages.
            unsafe {
                if me == 0 {
                    ph.send(nothing, 0, 1)?;
                    ph.recv(nothing, 0, 1)?;
                } else {
                    ph.recv(nothing, 0, 0)?;
                    ph.send(nothing, 0, 0)?;
                }
            }
            if i > 0 {
                rtts.push(t.elapsed().as_nanos() as i64);
            }
        }
        rtts.sort_unstable();
        if me == 0 {
            fixed = rtts[rtts.len() / 2];
        }
    }
    let mine = [fixed, local_ps_per_byte(seg_bytes)];
    let mut all = vec![[0i64; 2]; n];
    let ex = Coll {
        tag: ph.tag_at(1),
        ..*cx
    };
    let mut sends = Vec::with_capacity(n);
    let mut recvs = Vec::with_capacity(n);
    for r in (0..n).filter(|&r| r != me) {
        // SAFETY: `mine` and `all[r]` (16 bytes each) live until the waits below.
        unsafe {
            sends.push(ex.isend(mine.as_ptr() as *const u8, 16, r));
            recvs.push((ex.irecv(all[r].as_mut_ptr() as *mut u8, 16, r), r));
        }
    }
    let mut res = Ok(());
    for (q, r) in recvs {
        res = res.and(ex.wait_recv(q, 16, r));
    }
    let mut ids = Vec::with_capacity(sends.len());
    for s in sends {
        match s {
            Ok(id) => ids.push(id),
            Err(e) => res = res.and(Err(e)),
        }
    }
    let sent = ex.wait_sends(&ids);
    res?;
    sent?;
    all[me] = mine;
    // Only rank 0 measures the fixed part (the others send 0): the MAX is its value. The
    // per-byte part is every process's: the upper median over ranks, so that one process
    // measuring while preempted does not set everyone's round (the MAX did).
    let fixed = all.iter().map(|v| v[0]).max().unwrap_or(0);
    let mut per_byte: Vec<i64> = all.iter().map(|v| v[1]).collect();
    per_byte.sort_unstable();
    Ok(RoundCost {
        fixed_ns: fixed.clamp(FIXED_NS.0, FIXED_NS.1),
        ps_per_byte: per_byte[per_byte.len() / 2].clamp(PS_PER_BYTE.0, PS_PER_BYTE.1),
    })
}

#[cfg(test)]
mod tests {
    use super::ps_per_byte_of;

    #[test]
    fn per_byte_cost_ignores_preempted_windows() {
        // 0.4 ns per byte + 300 ns, three sizes, two windows preempted by 2 ms.
        let mut s: Vec<(f64, f64)> = (0..12).map(|i| {
            let x = [16384.0, 65536.0, 262144.0][i % 3];
            (x, 300.0 + 0.4 * x)
        }).collect();
        s[4].1 += 2e6;
        s[9].1 += 2e6;
        assert_eq!(ps_per_byte_of(&s), 400);
        // One size only (every window clamped): the median rate.
        let one: Vec<(f64, f64)> = (0..5).map(|i| (4096.0, 4096.0 * if i == 2 { 50.0 } else { 0.5 })).collect();
        assert_eq!(ps_per_byte_of(&one), 500);
    }
}
