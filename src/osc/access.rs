//! Moving data to and from a target's window memory: the origin's data as a packed byte stream
//! (MPI 4.1 section 12.3: the target datatype's typemap is applied at the target address), read
//! or written where the target's memory is (`Target::Direct`: memcpy through the typemap;
//! `Target::Remote`: one transport read or write of peer memory per contiguous block, CMA for
//! shared memory), and the read-combine-write
//! of accumulates under the target's accumulate mutex.
use super::window::{Target, Window};
use crate::datatype::Layout;
use crate::error::{err, MpiResult, ErrorClass};
use crate::op::Reduction;
use crate::p2p::Engine;
use crate::transport::Transport;

/// `count` elements of type `layout` at target address `addr` (bytes, in the target's space).
pub struct TargetSpan<'a> {
    /// The engine whose transport reaches a remote target's memory.
    pub engine: &'a Engine,
    pub target: Target,
    pub addr: usize,
    pub layout: &'a Layout,
    pub count: usize,
}

impl TargetSpan<'_> {
    fn contiguous(&self) -> Option<(i64, usize)> {
        let l = self.layout;
        let one = l.blocks.len() == 1 && l.size as i64 == l.extent();
        (one || self.count <= 1 && l.blocks.len() == 1).then(|| (l.blocks.get(0).0, l.size * self.count))
    }

    /// The (address, length) of every contiguous block, in typemap order.
    fn blocks(&self) -> Box<dyn Iterator<Item = (usize, usize)> + '_> {
        if let Some((off, len)) = self.contiguous() {
            return Box::new(std::iter::once((self.addr.wrapping_add(off as usize), len)));
        }
        let l = self.layout;
        Box::new(l.map().pieces(self.count, 0, l.size * self.count).map(|(off, len)| (self.addr.wrapping_add(off as usize), len)))
    }

    /// Writes the packed `data` into the target elements.
    ///
    /// # Safety
    /// For a direct target the elements must be valid, writable memory of this address space.
    pub unsafe fn write(&self, data: &[u8]) -> MpiResult {
        match self.target {
            Target::Direct(_) => {
                // SAFETY: per contract; `data` holds `count * size` bytes (checked by the caller).
                unsafe { crate::datatype::copy(self.layout, self.addr as *mut u8, self.count, data.as_ptr() as *mut u8, data.len(), 0, false) };
                Ok(())
            }
            Target::Remote { peer, .. } => {
                let mut at = 0;
                for (a, len) in self.blocks() {
                    self.engine.transport().write(peer, a as u64, data[at..].as_ptr(), len).map_err(|e| unreachable(peer, e))?;
                    at += len;
                }
                Ok(())
            }
        }
    }

    /// Reads the target elements into the packed `data`.
    ///
    /// # Safety
    /// For a direct target the elements must be valid, readable memory of this address space.
    pub unsafe fn read(&self, data: &mut [u8]) -> MpiResult {
        match self.target {
            Target::Direct(_) => {
                // SAFETY: per contract.
                unsafe { crate::datatype::copy(self.layout, self.addr as *mut u8, self.count, data.as_mut_ptr(), data.len(), 0, true) };
                Ok(())
            }
            Target::Remote { peer, .. } => {
                let mut at = 0;
                for (a, len) in self.blocks() {
                    self.engine.transport().read(peer, a as u64, data[at..].as_mut_ptr(), len).map_err(|e| unreachable(peer, e))?;
                    at += len;
                }
                Ok(())
            }
        }
    }

    /// The target elements as one contiguous range of this address space, if they are.
    fn direct_slice(&self) -> Option<*mut u8> {
        match (self.target, self.contiguous()) {
            (Target::Direct(_), Some((off, _))) => Some(self.addr.wrapping_add(off as usize) as *mut u8),
            _ => None,
        }
    }
}

fn unreachable(peer: usize, e: std::io::Error) -> crate::error::MpiError {
    err(ErrorClass::Other, format!("cannot reach the window memory of the target (rank {peer} of MPI_COMM_WORLD): {e}"))
}

/// One accumulate-family operation at a target, atomically with respect to every other
/// accumulate to that target: `result` (if any) receives the old contents, then the target
/// becomes `origin op target` (nothing is written for MPI_NO_OP). `n` elements of `red`.
///
/// `origin`, `result` and the span's data are packed streams (typemap order, no gaps). When the
/// basic element has gaps (the C pair types `{short; int}`, `{double; int}`, `{long; int}`,
/// `{long double; int}`, whose kernels work on the padded struct of `red.size` bytes), `elem` is
/// its layout: each side is unpacked to the padded structs, combined, and packed back, all under
/// the target's accumulate mutex, so a pair is never seen half-updated.
///
/// # Safety
/// As `TargetSpan::write`/`read`; `origin` holds `n` elements (unless the op is MPI_NO_OP).
pub unsafe fn accumulate(w: &Window, t: usize, span: &TargetSpan, red: &Reduction, n: usize, origin: &[u8], result: Option<&mut Vec<u8>>, elem: Option<&Layout>) -> MpiResult {
    let bytes = n * elem.map_or(red.size, |l| l.size);
    let no_op = red.op() == Some(crate::op::Op::NoOp);
    let acc = &w.region.rank(t).acc;
    super::sync::lock(acc);
    // SAFETY: (whole block) per this function's contract; the mutex serialises accumulates.
    let r = unsafe {
        if let (Some(p), None) = (span.direct_slice(), elem) {
            if let Some(res) = result {
                res.resize(bytes, 0);
                std::ptr::copy_nonoverlapping(p, res.as_mut_ptr(), bytes);
            }
            if !no_op {
                red.apply(origin.as_ptr(), p, n);
            }
            Ok(())
        } else {
            let mut tmp = vec![0u8; bytes];
            span.read(&mut tmp).and_then(|()| {
                if let Some(res) = result {
                    res.clear();
                    res.extend_from_slice(&tmp);
                }
                if no_op {
                    return Ok(());
                }
                match elem {
                    None => red.apply(origin.as_ptr(), tmp.as_mut_ptr(), n),
                    Some(l) => {
                        // Padded structs of both sides (the kernels' layout), then the stream again.
                        let mut o = vec![0u8; n * red.size];
                        let mut v = vec![0u8; n * red.size];
                        crate::datatype::copy(l, o.as_mut_ptr(), n, origin.as_ptr() as *mut u8, bytes, 0, false);
                        crate::datatype::copy(l, v.as_mut_ptr(), n, tmp.as_mut_ptr(), bytes, 0, false);
                        red.apply(o.as_ptr(), v.as_mut_ptr(), n);
                        crate::datatype::copy(l, v.as_mut_ptr(), n, tmp.as_mut_ptr(), bytes, 0, true);
                    }
                }
                span.write(&tmp)
            })
        }
    };
    super::sync::unlock(acc);
    r
}

/// MPI_Compare_and_swap at the target: the old value goes to `result`; the target takes
/// `origin` if it equalled `compare` (bytewise, the datatypes being integers or bytes).
///
/// # Safety
/// As `accumulate`; the three buffers hold one element of `span.layout.size` bytes.
pub unsafe fn compare_and_swap(w: &Window, t: usize, span: &TargetSpan, origin: &[u8], compare: &[u8], result: &mut [u8]) -> MpiResult {
    let acc = &w.region.rank(t).acc;
    super::sync::lock(acc);
    // SAFETY: per contract, under the target's accumulate mutex.
    let r = unsafe { span.read(result).and_then(|()| if result == compare { span.write(origin) } else { Ok(()) }) };
    super::sync::unlock(acc);
    r
}
