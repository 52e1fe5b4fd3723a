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
//! (fixed ns, picoseconds per byte) to every other and all take the MAX of the integers, which is
//! exact and the same everywhere (an allreduce done by hand on a phase of that reduce).
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

/// This process's per-byte cost of copying and combining `bytes`-byte segments (picoseconds per
/// byte), measured once: a memcpy + f64-sum pass over each segment-sized window of a region
/// larger than a core's L2 (a segment to combine comes from another core or from memory, never
/// from our own cache), timed on the second sweep (the first one faults the pages in).
fn local_ps_per_byte(bytes: usize) -> i64 {
    const REGION: usize = 4 << 20;
    static PS: OnceLock<i64> = OnceLock::new();
    *PS.get_or_init(|| {
        let w = (bytes / 8).max(512);
        let windows = (REGION / (w * 8)).max(4);
        let src: Vec<f64> = (0..w * windows).map(|i| i as f64).collect();
        let mut dst = vec![0f64; w * windows];
        let mut ns = 0;
        for _ in 0..2 {
            let t = Instant::now();
            for (d, s) in dst.chunks_mut(w).zip(black_box(&src).chunks(w)) {
                d.copy_from_slice(s);
                for (d, s) in d.iter_mut().zip(s) {
                    *d += *s;
                }
                black_box(&mut *d);
            }
            ns = t.elapsed().as_nanos();
        }
        (ns.saturating_mul(1000) / (src.len() as u128 * 8)) as i64
    })
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
    let max = |i: usize| all.iter().map(|v| v[i]).max().unwrap_or(0);
    Ok(RoundCost {
        fixed_ns: max(0).clamp(FIXED_NS.0, FIXED_NS.1),
        ps_per_byte: max(1).clamp(PS_PER_BYTE.0, PS_PER_BYTE.1),
    })
}
