//! A vector of `Copy` elements kept on the stack up to `N` of them, on the heap beyond. The
//! request arrays of MPI_Waitall and its family are short in the common case, and their three
//! heap allocations per call showed in the message-rate profile.
use std::mem::MaybeUninit;

pub struct StackVec<T: Copy, const N: usize> {
    /// Elements written to `inline` (unused once `heap` holds them).
    len: usize,
    inline: [MaybeUninit<T>; N],
    /// All the elements, once there were more than `N`.
    heap: Option<Vec<T>>,
}

impl<T: Copy, const N: usize> StackVec<T, N> {
    #[inline]
    pub fn new() -> Self {
        StackVec { len: 0, inline: [const { MaybeUninit::uninit() }; N], heap: None }
    }

    /// An empty vector with room for `n` elements (on the heap right away when `n` > `N`).
    #[inline]
    pub fn with_capacity(n: usize) -> Self {
        let mut v = Self::new();
        v.reserve_total(n);
        v
    }

    /// `n` copies of `x`.
    #[inline]
    pub fn filled(x: T, n: usize) -> Self {
        let mut v = Self::new();
        v.fill(x, n);
        v
    }

    /// Makes an empty vector `n` copies of `x`, in place: a `StackVec` returned by value is a copy
    /// of its whole inline array, which showed in the per-call instruction count of MPI_Waitall.
    #[inline]
    pub fn fill(&mut self, x: T, n: usize) {
        debug_assert!(self.len == 0 && self.heap.is_none());
        if n > N {
            self.heap = Some(vec![x; n]);
        } else {
            for e in &mut self.inline[..n] {
                e.write(x);
            }
            self.len = n;
        }
    }

    /// Makes room for `n` elements in all, on the heap right away when `n` > `N` (so the pushes
    /// that follow move nothing).
    /// Inline: a compare; the move to the heap out of line (left inline, the optimiser made the
    /// whole function a call in MPI_Waitall).
    #[inline(always)]
    pub fn reserve_total(&mut self, n: usize) {
        if n > N && self.heap.is_none() {
            self.move_to_heap(n);
        }
    }

    /// Inline: the inline array's case; the heap's out of line (see `reserve_total`).
    #[inline(always)]
    pub fn push(&mut self, x: T) {
        if self.heap.is_none() && self.len < N {
            self.inline[self.len].write(x);
            self.len += 1;
        } else {
            self.push_slow(x);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, x: T) {
        if self.heap.is_none() {
            self.move_to_heap(2 * N.max(1));
        }
        if let Some(h) = &mut self.heap {
            h.push(x);
        }
    }

    #[cold]
    #[inline(never)]
    fn move_to_heap(&mut self, cap: usize) {
        let mut h = Vec::with_capacity(cap);
        h.extend_from_slice(self.as_slice());
        self.heap = Some(h);
    }

    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.heap {
            Some(h) => h,
            // SAFETY: the first `len` elements of `inline` were written by `push`; MaybeUninit<T>
            // has T's layout.
            None => unsafe { std::slice::from_raw_parts(self.inline.as_ptr() as *const T, self.len) },
        }
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.heap {
            Some(h) => h,
            // SAFETY: as in `as_slice`; `&mut self` makes the slice unique.
            None => unsafe { std::slice::from_raw_parts_mut(self.inline.as_mut_ptr() as *mut T, self.len) },
        }
    }
}

impl<T: Copy, const N: usize> Default for StackVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy, const N: usize> std::ops::Deref for StackVec<T, N> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Copy, const N: usize> std::ops::DerefMut for StackVec<T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Copy, const N: usize> FromIterator<T> for StackVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        let it = it.into_iter();
        let mut v = Self::with_capacity(it.size_hint().0);
        for x in it {
            v.push(x);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::StackVec;

    #[test]
    fn stays_inline_then_spills_in_order() {
        let mut v: StackVec<u32, 4> = StackVec::new();
        for i in 0..4 {
            v.push(i);
        }
        assert!(v.heap.is_none());
        assert_eq!(&*v, &[0, 1, 2, 3]);
        v.push(4);
        v.push(5);
        assert!(v.heap.is_some());
        assert_eq!(&*v, &[0, 1, 2, 3, 4, 5]);
        v[5] = 9;
        assert_eq!(v.as_slice()[5], 9);
    }

    #[test]
    fn collect_with_known_length_over_n_goes_to_heap() {
        let v: StackVec<u8, 2> = (0..10u8).collect();
        assert!(v.heap.is_some());
        assert_eq!(v.len(), 10);
        let f: StackVec<u8, 4> = StackVec::filled(7, 3);
        assert_eq!(&*f, &[7, 7, 7]);
        assert_eq!(&*StackVec::<u8, 4>::filled(1, 5), &[1; 5]);
        let w: StackVec<u8, 16> = (0..10u8).collect();
        assert!(w.heap.is_none());
        assert_eq!(&*w, &(0..10).collect::<Vec<u8>>()[..]);
    }

    #[test]
    fn fill_and_reserve_in_place() {
        let mut v: StackVec<u8, 4> = StackVec::new();
        v.fill(3, 2);
        assert!(v.heap.is_none());
        assert_eq!(&*v, &[3, 3]);
        v.reserve_total(6);
        assert!(v.heap.is_some());
        assert_eq!(&*v, &[3, 3]);
        let mut h: StackVec<u8, 2> = StackVec::new();
        h.fill(1, 3);
        assert_eq!(&*h, &[1, 1, 1]);
    }
}
