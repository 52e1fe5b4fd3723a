//! Element-wise reduction kernels, generic over the element type. Each kernel computes
//! `inout[i] = in[i] op inout[i]` for `n` elements, the argument order of MPI_Reduce_local.
//!
//! Kernels read and write through unaligned accesses: user buffers carry no alignment promise
//! (a `char` buffer may hold doubles at any offset), and on x86-64 an unaligned load costs the
//! same as an aligned one, so the loops still vectorise.

/// A kernel over `n` elements at `inp` and `inout` (see the module doc for the operand order).
pub type Kernel = unsafe fn(inp: *const u8, inout: *mut u8, n: usize);

/// Arithmetic of SUM and PROD. Integers wrap (C's unsigned rule, and what signed overflow does
/// on every MPI implementation in practice) rather than panicking in debug builds.
pub trait Arith: Copy {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

/// Bitwise operations of BAND, BOR, BXOR.
pub trait Bits: Copy {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

/// Truth values of LAND, LOR, LXOR: any non-zero value is true; results are 0 or 1.
pub trait Logic: Copy {
    fn truth(self) -> bool;
    fn from_bool(b: bool) -> Self;
}

macro_rules! int_traits {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
        }
        impl Bits for $t {
            #[inline(always)]
            fn and(self, o: Self) -> Self { self & o }
            #[inline(always)]
            fn or(self, o: Self) -> Self { self | o }
            #[inline(always)]
            fn xor(self, o: Self) -> Self { self ^ o }
        }
        impl Logic for $t {
            #[inline(always)]
            fn truth(self) -> bool { self != 0 }
            #[inline(always)]
            fn from_bool(b: bool) -> Self { b as $t }
        }
    )*};
}
int_traits!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_traits {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self { self + o }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self * o }
        }
    )*};
}
float_traits!(f32, f64);

/// A C `float _Complex` / `double _Complex` (and the Fortran COMPLEX kinds): two reals, re first.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Complex<F> {
    pub re: F,
    pub im: F,
}

impl<F: Copy + std::ops::Add<Output = F> + std::ops::Sub<Output = F> + std::ops::Mul<Output = F>> Arith for Complex<F> {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Complex { re: self.re + o.re, im: self.im + o.im }
    }
    /// The textbook product, as C compilers compute it without `-fcx-limited-range` apart from
    /// the NaN/infinity recovery of Annex G, which MPI implementations do not do either.
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Complex { re: self.re * o.re - self.im * o.im, im: self.re * o.im + self.im * o.re }
    }
}

/// The value/index pairs of MINLOC and MAXLOC, laid out as the C structs of MPI_DOUBLE_INT and
/// friends (`repr(C)` reproduces the compiler's padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair<V, I> {
    pub v: V,
    pub i: I,
}

/// Applies `f(in, inout)` element-wise and stores the result in `inout`.
///
/// # Safety
/// `inp` and `inout` must each hold `n` readable elements of `T` (`inout` writable); they may be
/// unaligned but must not overlap partially.
#[inline(always)]
unsafe fn zip<T: Copy>(inp: *const u8, inout: *mut u8, n: usize, f: impl Fn(T, T) -> T) {
    let a = inp as *const T;
    let b = inout as *mut T;
    for i in 0..n {
        // SAFETY: i < n and both buffers hold n elements (caller contract); unaligned accesses.
        let (x, y) = unsafe { (a.add(i).read_unaligned(), b.add(i).read_unaligned()) };
        // SAFETY: as above.
        unsafe { b.add(i).write_unaligned(f(x, y)) };
    }
}


/// MAX keeps `inout` unless `in` is greater, MPICH's rule (it decides which NaN survives).
///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn max<T: Copy + PartialOrd>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| if x > y { x } else { y }) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn min<T: Copy + PartialOrd>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| if x < y { x } else { y }) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn sum<T: Arith>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| x.add(y)) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn prod<T: Arith>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| x.mul(y)) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn land<T: Logic>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| T::from_bool(x.truth() && y.truth())) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn lor<T: Logic>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| T::from_bool(x.truth() || y.truth())) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn lxor<T: Logic>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| T::from_bool(x.truth() != y.truth())) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn band<T: Bits>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| x.and(y)) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn bor<T: Bits>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| x.or(y)) }
}

///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn bxor<T: Bits>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe { zip::<T>(inp, inout, n, |x, y| x.xor(y)) }
}

/// MINLOC (MPI 4.1 section 6.9.4): the smaller value wins; on a tie, the smaller index.
///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn minloc<V: Copy + PartialOrd, I: Copy + PartialOrd>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe {
        zip::<Pair<V, I>>(inp, inout, n, |x, y| {
            if x.v < y.v {
                x
            } else if y.v < x.v {
                y
            } else {
                Pair { v: y.v, i: if x.i < y.i { x.i } else { y.i } }
            }
        })
    }
}

/// MAXLOC: the larger value wins; on a tie, the smaller index.
///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn maxloc<V: Copy + PartialOrd, I: Copy + PartialOrd>(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: forwarded caller contract.
    unsafe {
        zip::<Pair<V, I>>(inp, inout, n, |x, y| {
            if x.v > y.v {
                x
            } else if y.v > x.v {
                y
            } else {
                Pair { v: y.v, i: if x.i < y.i { x.i } else { y.i } }
            }
        })
    }
}

/// REPLACE over `n` bytes (the dispatcher scales the element count by the element size).
///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn replace_bytes(inp: *const u8, inout: *mut u8, n: usize) {
    // SAFETY: both hold n bytes (caller contract); `copy` tolerates any overlap.
    unsafe { std::ptr::copy(inp, inout, n) }
}

/// NO_OP leaves `inout` as it is.
///
/// # Safety
/// `inp` and `inout` hold `n` elements of the kernel's element type (see [`Kernel`]).
pub unsafe fn no_op(_inp: *const u8, _inout: *mut u8, _n: usize) {}

/// Kernels of the types Rust has no arithmetic for, written in C (`c-src/long_double_ops.c`,
/// compiled and linked by build.rs): x87 `long double` (MPI_LONG_DOUBLE, 16 bytes), its complex
/// (32 bytes) and `{long double, int}` (MPI_LONG_DOUBLE_INT, 32 bytes); `__float128` (MPI_REAL16,
/// gfortran's REAL(16) on x86-64) and its complex (MPI_COMPLEX32); `_Float16` (MPIX_C_FLOAT16).
/// They follow the rules of the Rust kernels above (operand order, MAX/MIN ties, textbook complex
/// product, the lower index on MINLOC/MAXLOC ties).
pub mod c {
    use std::os::raw::c_void;

    macro_rules! c_kernels {
        ($($name:ident => $sym:ident),* $(,)?) => {
            extern "C" {
                $(fn $sym(inp: *const c_void, inout: *mut c_void, n: usize);)*
            }
            $(
                /// # Safety
                /// `inp` and `inout` hold `n` elements of the kernel's element type (see [`super::Kernel`]).
                pub unsafe fn $name(inp: *const u8, inout: *mut u8, n: usize) {
                    // SAFETY: forwarded caller contract; the C kernel reads and writes n elements.
                    unsafe { $sym(inp as *const c_void, inout as *mut c_void, n) }
                }
            )*
        };
    }

    c_kernels! {
        ld_sum => oxmpi_ld_sum, ld_prod => oxmpi_ld_prod, ld_max => oxmpi_ld_max, ld_min => oxmpi_ld_min,
        ldc_sum => oxmpi_ldc_sum, ldc_prod => oxmpi_ldc_prod,
        ld_int_minloc => oxmpi_ld_int_minloc, ld_int_maxloc => oxmpi_ld_int_maxloc,
        f128_sum => oxmpi_f128_sum, f128_prod => oxmpi_f128_prod, f128_max => oxmpi_f128_max, f128_min => oxmpi_f128_min,
        f128c_sum => oxmpi_f128c_sum, f128c_prod => oxmpi_f128c_prod,
        f16_sum => oxmpi_f16_sum, f16_prod => oxmpi_f16_prod, f16_max => oxmpi_f16_max, f16_min => oxmpi_f16_min,
    }
}
