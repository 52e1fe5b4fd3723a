//! Staging of collective buffers: how a typed user buffer becomes the contiguous bytes the
//! algorithms move, directly (predefined and contiguous derived types: the buffer's own bytes at
//! an offset) or packed into / unpacked from a temporary (non-contiguous derived types), in a
//! blocking call (`Plan::bytes_of`, `Plan::unpack`) or as local steps of a schedule (`stage`,
//! `unstage`). Three shapes of buffer: one run of elements (`Plan`), per-rank blocks of one
//! datatype (`TypedBlocks`: gather, scatter, allgather and their v forms) and per-peer blocks of
//! their own datatypes (`PeerBlocks`: the v/w all-to-alls and the neighborhood collectives).
//!
//! The boundary looks up the handles (datatype, op), checks what needs ABI values (MPI_IN_PLACE,
//! MPI_ROOT) and builds these; nothing here knows an ABI.
use super::alltoall::Slot;
use super::gather::Blocks;
use super::schedule::{Schedule, Step};
use crate::datatype::TypeRepr;
use crate::error::{err, ErrorClass, MpiResult};
use std::os::raw::c_void;
use std::sync::Arc;

/// How a user buffer of a collective reaches the byte algorithms: contiguous bytes at an offset
/// from the buffer address (predefined and contiguous derived types), or packed into / unpacked
/// from a temporary (non-contiguous derived types).
#[derive(Clone)]
pub enum Shape {
    Direct(isize),
    Staged(Arc<TypeRepr>, usize),
}

/// A checked buffer description: `bytes` contiguous bytes once packed.
#[derive(Clone)]
pub struct Plan {
    pub shape: Shape,
    pub bytes: usize,
    /// A derived type: the buffer may be MPI_BOTTOM (NULL) with absolute displacements.
    pub derived: bool,
    /// For a user-defined op on a non-contiguous type: the temporary of a `Staged` plan keeps the
    /// type's native layout (element i's data at `i * extent` plus its offset from the true lower
    /// bound, which is this value) instead of packed bytes, because the user's function addresses
    /// the elements through the datatype.
    pub native_lb: Option<isize>,
}

impl Plan {
    /// `n` elements of a predefined type of `size` bytes; `name` names the type in the overflow
    /// error.
    pub fn predefined(n: usize, size: usize, name: impl FnOnce() -> String) -> MpiResult<Plan> {
        let bytes = n.checked_mul(size).ok_or_else(|| err(ErrorClass::Count, format!("count {n} of {} overflows", name())))?;
        Ok(Plan { shape: Shape::Direct(0), bytes, derived: false, native_lb: None })
    }

    /// `n` elements of committed derived type `t`; `name` names it in the overflow error.
    pub fn derived(n: usize, t: Arc<TypeRepr>, name: impl FnOnce() -> String) -> MpiResult<Plan> {
        let bytes = n.checked_mul(t.layout.size).ok_or_else(|| err(ErrorClass::Count, format!("count {n} of {} overflows", name())))?;
        Ok(match t.layout.contiguous_span(n) {
            Some((off, b)) => Plan { shape: Shape::Direct(off as isize), bytes: b, derived: true, native_lb: None },
            None => Plan { shape: Shape::Staged(t, n), bytes, derived: true, native_lb: None },
        })
    }

    /// The plan of `count` elements of derived type `t` for a user-defined op: the buffer in the
    /// type's native layout, `count` elements of `extent` bytes each (from the true lower bound).
    /// Direct when the elements are contiguous and gap-free, else staged through a temporary.
    pub fn native(n: usize, t: Arc<TypeRepr>) -> MpiResult<Plan> {
        let l = &t.layout;
        let extent = l.extent();
        if n > 0 && l.size > 0 && (extent <= 0 || l.true_extent() > extent) {
            return Err(err(ErrorClass::Type, format!("a user-defined op cannot combine this datatype: its elements overlap (extent {extent}, true extent {})", l.true_extent())));
        }
        let extent = extent.max(0) as usize;
        let bytes = n.checked_mul(extent).ok_or_else(|| err(ErrorClass::Count, format!("count {n} of a datatype of extent {extent} overflows")))?;
        if l.size == 0 || n == 0 {
            return Ok(Plan { shape: Shape::Direct(0), bytes: 0, derived: true, native_lb: None });
        }
        if l.blocks.len() == 1 && l.size == extent {
            return Ok(Plan { shape: Shape::Direct(l.true_lb as isize), bytes, derived: true, native_lb: None });
        }
        let lb = l.true_lb as isize;
        Ok(Plan { shape: Shape::Staged(t, n), bytes, derived: true, native_lb: Some(lb) })
    }

    /// The contiguous bytes of user buffer `p`: its own address (moved by the type's offset), or a
    /// packed copy left in `tmp`. With `fill` false a staged buffer is not packed (receive only).
    ///
    /// # Safety
    /// `p` must hold the plan's elements (readable when `fill`).
    pub unsafe fn bytes_of(&self, p: *const c_void, tmp: &mut Vec<u8>, fill: bool) -> *mut u8 {
        match &self.shape {
            Shape::Direct(off) => (p as *mut u8).wrapping_offset(*off),
            Shape::Staged(t, n) => {
                *tmp = vec![0u8; self.bytes];
                if let (Some(lb), true) = (self.native_lb, fill) {
                    // Through a packed copy: the user's buffer is read only where the type has
                    // data (its holes may not even be mapped, with MPI_BOTTOM).
                    let mut packed = vec![0u8; *n * t.layout.size];
                    // SAFETY: `p` holds `n` elements of `t`; `tmp - lb` is where the elements of
                    // `t` fall inside tmp's `n * extent` bytes (checked in `Plan::native`).
                    unsafe {
                        crate::datatype::copy(&t.layout, p as *mut u8, *n, packed.as_mut_ptr(), packed.len(), 0, true);
                        crate::datatype::copy(&t.layout, tmp.as_mut_ptr().wrapping_offset(-lb), *n, packed.as_mut_ptr(), packed.len(), 0, false);
                    }
                } else if fill {
                    // SAFETY: `p` holds `n` elements of `t` (caller); tmp has `n * size` bytes.
                    unsafe { crate::datatype::copy(&t.layout, p as *mut u8, *n, tmp.as_mut_ptr(), self.bytes, 0, true) };
                }
                tmp.as_mut_ptr()
            }
        }
    }

    /// Unpacks `tmp` (from `bytes_of`) into user buffer `p`; nothing to do for direct buffers.
    ///
    /// # Safety
    /// `p` must hold the plan's elements, writable, disjoint from `tmp`.
    pub unsafe fn unpack(&self, p: *mut c_void, tmp: &mut [u8]) {
        if let Shape::Staged(t, n) = &self.shape {
            if let Some(lb) = self.native_lb {
                let mut packed = vec![0u8; *n * t.layout.size];
                // SAFETY: as in `bytes_of`, in the other direction; only the type's data bytes of
                // `p` are written.
                unsafe {
                    crate::datatype::copy(&t.layout, tmp.as_mut_ptr().wrapping_offset(-lb), *n, packed.as_mut_ptr(), packed.len(), 0, true);
                    crate::datatype::copy(&t.layout, p as *mut u8, *n, packed.as_mut_ptr(), packed.len(), 0, false);
                }
                return;
            }
            // SAFETY: per this function's contract.
            unsafe { crate::datatype::copy(&t.layout, p as *mut u8, *n, tmp.as_mut_ptr(), tmp.len(), 0, false) };
        }
    }

    /// A private copy of the `bytes_of` bytes at `p` (for MPI_IN_PLACE, where the result
    /// overwrites the input).
    ///
    /// # Safety
    /// `p` holds the plan's elements, readable.
    pub unsafe fn owned(&self, p: *const c_void) -> Vec<u8> {
        let mut tmp = Vec::new();
        // SAFETY: per this function's contract.
        let q = unsafe { self.bytes_of(p, &mut tmp, true) };
        if !tmp.is_empty() || self.bytes == 0 {
            return tmp;
        }
        // SAFETY: a direct plan: `q` is the user's `self.bytes` contiguous bytes.
        unsafe { std::slice::from_raw_parts(q, self.bytes) }.to_vec()
    }
}

/// A user buffer address a schedule's local step keeps.
#[derive(Clone, Copy)]
pub struct UserPtr(pub *mut c_void);
// SAFETY: the buffer is the application's, which MPI forbids it to touch until the collective
// completes; the schedule's steps run on one thread at a time.
unsafe impl Send for UserPtr {}

/// The contiguous bytes of user buffer `p` in schedule `s`: its own address, or a staging buffer
/// of the schedule, packed by a local step of the current round when `fill` (every run packs
/// afresh: a persistent collective's buffer may change between starts).
pub fn stage(plan: &Plan, s: &mut Schedule, p: *const c_void, fill: bool) -> *mut u8 {
    let Shape::Staged(..) = plan.shape else {
        // SAFETY: a plan of its own buffer: the empty Vec is not used by a direct shape.
        return unsafe { plan.bytes_of(p, &mut Vec::new(), false) };
    };
    let t = s.scratch(plan.bytes);
    if fill {
        let (plan, user, dst) = (plan.clone(), UserPtr(p as *mut c_void), UserPtr(t as *mut c_void));
        s.push(Step::Local(Box::new(move || {
            let (user, dst) = (user, dst);
            let mut tmp = Vec::new();
            // SAFETY: the user buffer holds the plan's elements (checked at the call); the
            // staging buffer holds `plan.bytes` bytes.
            unsafe {
                let src = plan.bytes_of(user.0, &mut tmp, true);
                std::ptr::copy_nonoverlapping(src, dst.0 as *mut u8, plan.bytes);
            }
        })));
    }
    t
}

/// Unpacks staging buffer `t` (from `stage`) into user buffer `p` in a last round of `s`.
pub fn unstage(plan: &Plan, s: &mut Schedule, p: *mut c_void, t: *mut u8) {
    if let Shape::Staged(..) = plan.shape {
        s.round();
        unstage_now(plan, s, p, t);
    }
}

/// `unstage` in the current round of `s` (which the caller started after the one that filled
/// `t`): for several buffers unpacked in one last round.
pub fn unstage_now(plan: &Plan, s: &mut Schedule, p: *mut c_void, t: *mut u8) {
    if let Shape::Staged(..) = plan.shape {
        let (plan, user, src) = (plan.clone(), UserPtr(p), UserPtr(t as *mut c_void));
        s.push(Step::Local(Box::new(move || {
            let (user, src) = (user, src);
            // SAFETY: the staging buffer holds `plan.bytes` bytes the schedule filled; the user
            // buffer the plan's elements, disjoint from it.
            unsafe { plan.unpack(user.0, std::slice::from_raw_parts_mut(src.0 as *mut u8, plan.bytes)) };
        })));
    }
}

/// The bytes of user buffer `p` as a private copy inside schedule `s`, taken by steps of the
/// current round at every run (MPI_IN_PLACE: the result overwrites the input).
pub fn private(plan: &Plan, s: &mut Schedule, p: *const c_void) -> *const u8 {
    let src = stage(plan, s, p, true);
    if matches!(plan.shape, Shape::Staged(..)) || plan.bytes == 0 {
        return src;
    }
    let t = s.scratch(plan.bytes);
    s.push(Step::Copy { src, dst: t, bytes: plan.bytes });
    t
}

/// Which blocks of `TypedBlocks` to pack from the user buffer into the temporary of a staged
/// buffer.
#[derive(Clone, Copy, PartialEq)]
pub enum Fill {
    Nothing,
    One(usize),
    All,
}

/// A checked buffer of per-rank blocks of one datatype (gather, scatter, allgather and their v
/// forms): block `i` is `counts[i]` elements at `displs[i]` bytes from the buffer address.
pub struct TypedBlocks {
    pub t: Arc<TypeRepr>,
    counts: Vec<usize>,
    /// Byte displacement of each block from the buffer address.
    displs: Vec<isize>,
    pub lens: Vec<usize>,
    /// Where each block's bytes start when every block is contiguous (None: staged).
    direct: Option<Vec<isize>>,
}

impl TypedBlocks {
    /// Where block `i`'s bytes are, relative to the buffer address, when the block is
    /// contiguous: (offset, length).
    pub fn contiguous_block(&self, i: usize) -> Option<(isize, usize)> {
        Some((*self.direct.as_ref()?.get(i)?, *self.lens.get(i)?))
    }

    /// The blocks of `counts[i]` elements of `t` at `displs[i]` extents of `t`; `name` names the
    /// type in the overflow error.
    pub fn new(t: Arc<TypeRepr>, counts: Vec<usize>, displs: &[i64], name: impl Fn() -> String) -> MpiResult<TypedBlocks> {
        let extent = t.layout.extent();
        let displs = displs
            .iter()
            .map(|&d| d.checked_mul(extent).map(|b| b as isize).ok_or_else(|| err(ErrorClass::Arg, format!("displacement {d} times the extent {extent} overflows"))))
            .collect::<MpiResult<Vec<isize>>>()?;
        let lens = counts
            .iter()
            .map(|&k| k.checked_mul(t.layout.size).ok_or_else(|| err(ErrorClass::Count, format!("count {k} of datatype {} overflows", name()))))
            .collect::<MpiResult<Vec<usize>>>()?;
        let direct = counts.iter().zip(&displs).map(|(&k, &d)| t.layout.contiguous_span(k).map(|(off, _)| d + off as isize)).collect();
        Ok(TypedBlocks { t, counts, displs, lens, direct })
    }

    /// The blocks as bytes: in the user's buffer, or in `tmp` (packing the blocks `fill` names).
    ///
    /// # Safety
    /// `buf` must hold the blocks (readable where packed).
    pub unsafe fn blocks(&self, buf: *mut c_void, tmp: &mut Vec<u8>, fill: Fill) -> Blocks {
        let base = buf as *mut u8;
        if let Some(offs) = &self.direct {
            return Blocks { base, offs: offs.clone(), lens: self.lens.clone() };
        }
        *tmp = vec![0u8; self.lens.iter().sum()];
        let offs = packed_offsets(&self.lens);
        for (i, &off) in offs.iter().enumerate() {
            if fill == Fill::All || fill == Fill::One(i) {
                // SAFETY: block `i` of the user buffer holds `counts[i]` elements (caller), the
                // temporary `lens[i]` bytes at `off`; they are disjoint.
                unsafe { crate::datatype::copy(&self.t.layout, base.wrapping_offset(self.displs[i]), self.counts[i], tmp.as_mut_ptr().offset(off), self.lens[i], 0, true) };
            }
        }
        Blocks { base: tmp.as_mut_ptr(), offs, lens: self.lens.clone() }
    }

    /// The blocks as bytes inside schedule `s`: in the user's buffer when every block is
    /// contiguous, else in a staging buffer of the schedule, packed (the blocks `fill` names) by
    /// a local step of the current round at every run.
    pub fn stage(self: &Arc<Self>, s: &mut Schedule, buf: *mut c_void, fill: Fill) -> Blocks {
        if let Some(offs) = &self.direct {
            return Blocks { base: buf as *mut u8, offs: offs.clone(), lens: self.lens.clone() };
        }
        let t = s.scratch(self.lens.iter().sum());
        let offs = packed_offsets(&self.lens);
        if fill != Fill::Nothing {
            let (me, user, dst, at) = (self.clone(), UserPtr(buf), UserPtr(t as *mut c_void), offs.clone());
            s.push(Step::Local(Box::new(move || {
                let (user, dst) = (user, dst);
                for (i, &off) in at.iter().enumerate() {
                    if fill == Fill::All || fill == Fill::One(i) {
                        // SAFETY: block `i` of the user buffer holds `counts[i]` elements (checked
                        // at the call), the staging buffer `lens[i]` bytes at `off`.
                        unsafe { crate::datatype::copy(&me.t.layout, (user.0 as *mut u8).wrapping_offset(me.displs[i]), me.counts[i], (dst.0 as *mut u8).offset(off), me.lens[i], 0, true) };
                    }
                }
            })));
        }
        Blocks { base: t, offs, lens: self.lens.clone() }
    }

    /// Unpacks the staging buffer of `b` (from `stage`) into the user's buffer, except block
    /// `skip`, in a last round of `s`.
    pub fn unstage(self: &Arc<Self>, s: &mut Schedule, buf: *mut c_void, b: &Blocks, skip: Option<usize>) {
        if self.direct.is_some() {
            return;
        }
        s.round();
        let (me, user, src, at) = (self.clone(), UserPtr(buf), UserPtr(b.base as *mut c_void), b.offs.clone());
        s.push(Step::Local(Box::new(move || {
            let (user, src) = (user, src);
            for (i, &off) in at.iter().enumerate() {
                if skip != Some(i) {
                    // SAFETY: as in `stage`, in the other direction.
                    unsafe { crate::datatype::copy(&me.t.layout, (user.0 as *mut u8).wrapping_offset(me.displs[i]), me.counts[i], (src.0 as *mut u8).offset(off), me.lens[i], 0, false) };
                }
            }
        })));
    }

    /// Unpacks a staged temporary (from `blocks`) into the user's buffer, except block `skip`.
    ///
    /// # Safety
    /// `buf` must hold the blocks, writable, disjoint from `tmp`.
    pub unsafe fn unpack(&self, buf: *mut c_void, tmp: &mut [u8], skip: Option<usize>) {
        if self.direct.is_some() {
            return;
        }
        let mut at = 0usize;
        for i in 0..self.lens.len() {
            if skip != Some(i) {
                // SAFETY: as in `blocks`, in the other direction.
                unsafe { crate::datatype::copy(&self.t.layout, (buf as *mut u8).wrapping_offset(self.displs[i]), self.counts[i], tmp.as_mut_ptr().add(at), self.lens[i], 0, false) };
            }
            at += self.lens[i];
        }
    }
}

/// Where each of blocks of `lens` bytes starts when they are packed one after the other.
fn packed_offsets(lens: &[usize]) -> Vec<isize> {
    lens.iter()
        .scan(0isize, |at, &l| {
            let o = *at;
            *at += l as isize;
            Some(o)
        })
        .collect()
}

/// One typed block of a vector collective: `plan`'s elements at `addr`, to or from peer `peer`
/// (None: MPI_PROC_NULL, never touched).
pub struct PeerBlock {
    pub peer: Option<usize>,
    pub addr: *mut c_void,
    pub plan: Plan,
}

/// The blocks of one side (send or receive) of a vector collective, in peer order.
pub struct PeerBlocks(pub Vec<PeerBlock>);

impl PeerBlocks {
    /// The byte slots of a run: contiguous blocks in place, the others in `tmps` (packed when
    /// `fill`). `tmps` must stay alive, unmoved, until the run is over.
    ///
    /// # Safety
    /// Every block's address holds its plan's elements (readable when `fill`).
    pub unsafe fn slots(&self, tmps: &mut Vec<Vec<u8>>, fill: bool) -> Vec<Slot> {
        tmps.clear();
        tmps.resize_with(self.0.len(), Vec::new);
        self.0
            .iter()
            .zip(tmps.iter_mut())
            .map(|(b, t)| match b.peer {
                // SAFETY: per this function's contract.
                Some(_) => Slot { peer: b.peer, buf: unsafe { b.plan.bytes_of(b.addr, t, fill) }, bytes: b.plan.bytes, round: 0 },
                None => Slot { peer: None, buf: std::ptr::null_mut(), bytes: 0, round: 0 },
            })
            .collect()
    }

    /// Packed copies of every block (MPI_IN_PLACE: the data to send is what the receive buffer
    /// holds before it is overwritten), as slots over `tmps`.
    ///
    /// # Safety
    /// Every block's address holds its plan's elements, readable.
    pub unsafe fn copies(&self, tmps: &mut Vec<Vec<u8>>) -> Vec<Slot> {
        // SAFETY: per this function's contract.
        let mut slots = unsafe { self.slots(tmps, true) };
        for (s, t) in slots.iter_mut().zip(tmps.iter_mut()) {
            if s.peer.is_some() && t.is_empty() && s.bytes > 0 {
                // SAFETY: a direct slot points at `bytes` readable bytes of the user buffer.
                *t = unsafe { std::slice::from_raw_parts(s.buf, s.bytes) }.to_vec();
                s.buf = t.as_mut_ptr();
            }
        }
        slots
    }

    /// The blocks' bytes inside schedule `s`, as `stage` gives them (packed by a local step of
    /// the current round when `fill`); None for MPI_PROC_NULL.
    pub fn stage(&self, s: &mut Schedule, fill: bool) -> Vec<Option<(*mut u8, usize)>> {
        self.0.iter().map(|b| b.peer.map(|_| (stage(&b.plan, s, b.addr, fill), b.plan.bytes))).collect()
    }

    /// Private copies of every block inside schedule `s` (MPI_IN_PLACE): packed by a local step
    /// of the current round, or copied from the user buffer for a contiguous block.
    pub fn stage_copies(&self, s: &mut Schedule) -> Vec<Option<(*mut u8, usize)>> {
        self.0.iter().map(|b| b.peer.map(|_| (private(&b.plan, s, b.addr) as *mut u8, b.plan.bytes))).collect()
    }

    /// Unpacks the staged blocks `st` (from `stage`) into the user buffer in a last round of `s`.
    pub fn unstage(&self, s: &mut Schedule, st: &[Option<(*mut u8, usize)>]) {
        s.round();
        for (b, t) in self.0.iter().zip(st) {
            if let Some((t, _)) = t {
                unstage_now(&b.plan, s, b.addr, *t);
            }
        }
    }

    /// Unpacks the staged receive blocks from `tmps` (from `slots`).
    ///
    /// # Safety
    /// Every block's address holds its plan's elements, writable, disjoint from `tmps`.
    pub unsafe fn unpack(&self, tmps: &mut [Vec<u8>]) {
        for (b, t) in self.0.iter().zip(tmps.iter_mut()) {
            if b.peer.is_some() {
                // SAFETY: per this function's contract.
                unsafe { b.plan.unpack(b.addr, t) };
            }
        }
    }
}
