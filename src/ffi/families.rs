//! Families of C functions that differ only in the width of their counts and in how they run:
//! MPI_Bcast, MPI_Bcast_c, MPI_Ibcast, MPI_Ibcast_c, MPI_Bcast_init, MPI_Bcast_init_c are one
//! family. Each family is one line of the table below; `build.rs` reads it and, for every variant
//! of the family that `include/mpi.h` declares, generates an `export!` definition with exactly the
//! header's parameter list that calls the family's core (`$OUT_DIR/variants.rs`, included here).
//!
//! A line is `MPI_Base: FORMS => module::core(EXTRA) on KIND EXPR;` where
//! * FORMS are the variants besides `MPI_Base` itself: `I` (MPI_Ibase, nonblocking), `R`
//!   (MPI_Rbase, the request-based RMA calls), `init` (MPI_Base_init, persistent) and `c` (the
//!   large-count `_c` of each of these that the header declares);
//! * `module::core` (a path below `crate::ffi`) is called with the variant's parameters named as
//!   in MPI_Base's prototype, in its order, then the `EXTRA` arguments if any, then, if FORMS
//!   names a form other than `c`, a [`Launch`] (`Blocking`, `Nonblocking(request)`,
//!   `Persistent(request)`). A persistent form's `info` is not passed. The core is generic over
//!   the count types ([`CountArg`]): `c_int` in MPI_Base, `MPI_Count` / `MPI_Aint` in the `_c`
//!   forms, as scalars, as arrays (`*const C`) and as outputs (`*mut C`, written with
//!   [`CountArg::put`]). Where the forms differ only in C types that are both `i64` in Rust
//!   (`MPI_Aint` and `MPI_Count`), `EXTRA` may name `c_form`, which `build.rs` replaces by `true`
//!   in the `_c` variants and `false` in the others;
//! * `on KIND EXPR` is the `export!` error path (`on comm comm`, `on win win`, ...).
//!
//! `build.rs` checks that every variant's parameters are MPI_Base's plus `info`/`request`, and
//! counts the generated functions as implemented (no unsupported stub, signature checked against
//! the header). A function written by hand must not also be generated.
use crate::abi::{MPI_Request, MPI_COMM_SELF, MPI_COMM_WORLD, MPI_ERR_ARG, MPI_ERR_REQUEST, MPI_ERR_VALUE_TOO_LARGE, MPI_UNDEFINED};
use crate::p2p::SendMode;
use crate::error::{err, MpiResult};
use std::os::raw::c_int;

/// The table `build.rs` reads; the macro itself expands to nothing.
macro_rules! families {
    ($($table:tt)*) => {};
}

families! {
    MPI_Send: I init c => p2p::send(SendMode::Standard) on comm comm;
    MPI_Ssend: I init c => p2p::send(SendMode::Sync) on comm comm;
    MPI_Bsend: I init c => p2p::send(SendMode::Buffered) on comm comm;
    MPI_Rsend: I init c => p2p::send(SendMode::Ready) on comm comm;
    MPI_Recv: c => p2p::recv on comm comm;
    MPI_Irecv: c => p2p::irecv on comm comm;
    MPI_Recv_init: c => p2p::recv_init on comm comm;
    MPI_Sendrecv: c => p2p::send_recv on comm comm;
    MPI_Sendrecv_replace: c => p2p::sendrecv_replace on comm comm;
    MPI_Isendrecv: c => p2p::isendrecv on comm comm;
    MPI_Isendrecv_replace: c => p2p::isendrecv_replace on comm comm;
    MPI_Mrecv: c => p2p::mrecv on comm MPI_COMM_WORLD;
    MPI_Imrecv: c => p2p::imrecv on comm MPI_COMM_WORLD;
    MPI_Buffer_attach: c => p2p::bsend_buffers::buffer_attach on comm MPI_COMM_SELF;
    MPI_Buffer_detach: c => p2p::bsend_buffers::buffer_detach on comm MPI_COMM_SELF;
    MPI_Comm_attach_buffer: c => p2p::bsend_buffers::comm_attach_buffer on comm comm;
    MPI_Comm_detach_buffer: c => p2p::bsend_buffers::comm_detach_buffer on comm comm;
    MPI_Session_attach_buffer: c => p2p::bsend_buffers::session_attach_buffer on session session;
    MPI_Session_detach_buffer: c => p2p::bsend_buffers::session_detach_buffer on session session;
    MPI_Get_count: c => p2p::get_count on comm MPI_COMM_SELF;
    MPI_Get_elements: c => p2p::get_elements on comm MPI_COMM_SELF;

    MPI_Barrier: I init => coll::barrier on comm comm;
    MPI_Bcast: I init c => coll::bcast on comm comm;
    MPI_Reduce: I init c => coll::reduce on comm comm;
    MPI_Allreduce: I init c => coll::allreduce on comm comm;
    MPI_Op_create: c => coll::op::create on comm MPI_COMM_SELF;
    MPI_Reduce_local: c => coll::reduce_local on comm MPI_COMM_SELF;
    MPI_Gather: I init c => coll::gather::gather on comm comm;
    MPI_Gatherv: I init c => coll::gather::gatherv on comm comm;
    MPI_Scatter: I init c => coll::gather::scatter on comm comm;
    MPI_Scatterv: I init c => coll::gather::scatterv on comm comm;
    MPI_Allgather: I init c => coll::gather::allgather on comm comm;
    MPI_Allgatherv: I init c => coll::gather::allgatherv on comm comm;
    MPI_Alltoall: I init c => coll::alltoall::alltoall on comm comm;
    MPI_Alltoallv: I init c => coll::alltoall::alltoallv on comm comm;
    MPI_Alltoallw: I init c => coll::alltoall::alltoallw_raw on comm comm;
    MPI_Reduce_scatter: I init c => coll::reduce_scatter::varying on comm comm;
    MPI_Reduce_scatter_block: I init c => coll::reduce_scatter::block on comm comm;
    MPI_Scan: I init c => coll::scan::scan(false) on comm comm;
    MPI_Exscan: I init c => coll::scan::scan(true) on comm comm;
    MPI_Neighbor_allgather: I init c => coll::neighbor::uniform(false) on comm comm;
    MPI_Neighbor_allgatherv: I init c => coll::neighbor::allgatherv on comm comm;
    MPI_Neighbor_alltoall: I init c => coll::neighbor::uniform(true) on comm comm;
    MPI_Neighbor_alltoallv: I init c => coll::neighbor::alltoallv on comm comm;
    MPI_Neighbor_alltoallw: I init c => coll::neighbor::alltoallw on comm comm;

    MPI_Win_create: c => rma::create on comm comm;
    MPI_Win_allocate: c => rma::allocate(crate::osc::window::Flavor::Allocate) on comm comm;
    MPI_Win_allocate_shared: c => rma::allocate(crate::osc::window::Flavor::Shared) on comm comm;
    MPI_Win_shared_query: c => rma::shared_query on win win;
    MPI_Put: R c => rma::ops::put on win win;
    MPI_Get: R c => rma::ops::get on win win;
    MPI_Accumulate: R c => rma::ops::accumulate on win win;
    MPI_Get_accumulate: R c => rma::ops::get_accumulate on win win;

    MPI_Type_contiguous: c => datatype::contiguous(c_form) on comm MPI_COMM_SELF;
    MPI_Type_vector: c => datatype::vector(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_hvector: c => datatype::hvector(c_form) on comm MPI_COMM_SELF;
    MPI_Type_indexed: c => datatype::indexed(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_hindexed: c => datatype::hindexed(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_indexed_block: c => datatype::indexed_block(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_hindexed_block: c => datatype::hindexed_block(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_struct: c => datatype::create_struct(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_subarray: c => datatype::subarray(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_darray: c => datatype::darray(c_form) on comm MPI_COMM_SELF;
    MPI_Type_create_resized: c => datatype::resized(c_form) on comm MPI_COMM_SELF;
    MPI_Type_size: c => datatype::size on comm MPI_COMM_SELF;
    MPI_Type_get_extent: c => datatype::get_extent on comm MPI_COMM_SELF;
    MPI_Type_get_true_extent: c => datatype::get_true_extent on comm MPI_COMM_SELF;

    MPI_Pack: c => datatype::pack::pack_family on comm comm;
    MPI_Unpack: c => datatype::pack::unpack_family on comm comm;
    MPI_Pack_external: c => datatype::pack::pack_external_family on comm MPI_COMM_SELF;
    MPI_Unpack_external: c => datatype::pack::unpack_external_family on comm MPI_COMM_SELF;
    MPI_Pack_size: c => datatype::pack::pack_size on comm comm;
    MPI_Pack_external_size: c => datatype::pack::pack_external_size on comm MPI_COMM_SELF;

    MPI_File_read_at: c => io::access::at(false, false) on file fh;
    MPI_File_write_at: c => io::access::at(true, false) on file fh;
    MPI_File_read_at_all: c => io::access::at(false, true) on file fh;
    MPI_File_write_at_all: c => io::access::at(true, true) on file fh;
    MPI_File_iread_at: c => io::access::iat(false, false) on file fh;
    MPI_File_iwrite_at: c => io::access::iat(true, false) on file fh;
    MPI_File_iread_at_all: c => io::access::iat(false, true) on file fh;
    MPI_File_iwrite_at_all: c => io::access::iat(true, true) on file fh;
    MPI_File_read_at_all_begin: c => io::access::at_begin(crate::io::file::SplitKind::ReadAtAll) on file fh;
    MPI_File_write_at_all_begin: c => io::access::at_begin(crate::io::file::SplitKind::WriteAtAll) on file fh;
    MPI_File_read: c => io::access::ptr(crate::io::access::At::Individual, false, false) on file fh;
    MPI_File_write: c => io::access::ptr(crate::io::access::At::Individual, true, false) on file fh;
    MPI_File_read_all: c => io::access::ptr(crate::io::access::At::Individual, false, true) on file fh;
    MPI_File_write_all: c => io::access::ptr(crate::io::access::At::Individual, true, true) on file fh;
    MPI_File_read_shared: c => io::access::ptr(crate::io::access::At::Shared, false, false) on file fh;
    MPI_File_write_shared: c => io::access::ptr(crate::io::access::At::Shared, true, false) on file fh;
    MPI_File_read_ordered: c => io::access::ptr(crate::io::access::At::Shared, false, true) on file fh;
    MPI_File_write_ordered: c => io::access::ptr(crate::io::access::At::Shared, true, true) on file fh;
    MPI_File_iread: c => io::access::iptr(crate::io::access::At::Individual, false, false) on file fh;
    MPI_File_iwrite: c => io::access::iptr(crate::io::access::At::Individual, true, false) on file fh;
    MPI_File_iread_all: c => io::access::iptr(crate::io::access::At::Individual, false, true) on file fh;
    MPI_File_iwrite_all: c => io::access::iptr(crate::io::access::At::Individual, true, true) on file fh;
    MPI_File_iread_shared: c => io::access::iptr(crate::io::access::At::Shared, false, false) on file fh;
    MPI_File_iwrite_shared: c => io::access::iptr(crate::io::access::At::Shared, true, false) on file fh;
    MPI_File_read_all_begin: c => io::access::ptr_begin(crate::io::file::SplitKind::ReadAll) on file fh;
    MPI_File_write_all_begin: c => io::access::ptr_begin(crate::io::file::SplitKind::WriteAll) on file fh;
    MPI_File_read_ordered_begin: c => io::access::ptr_begin(crate::io::file::SplitKind::ReadOrdered) on file fh;
    MPI_File_write_ordered_begin: c => io::access::ptr_begin(crate::io::file::SplitKind::WriteOrdered) on file fh;
}

/// A count as the C functions pass it: `int` in the classic forms, `MPI_Count` (or, for
/// displacements, `MPI_Aint`) in the `_c` forms. A core takes `impl CountArg` for a scalar and
/// `*const C` with `C: CountArg` for an array, and converts through [`CountArg::get`] (then
/// `check::count`, which refuses a negative count with MPI_ERR_COUNT) or [`CountArg::array`].
pub trait CountArg: Copy + Into<i64> {
    /// The value, widened.
    fn get(self) -> i64 {
        self.into()
    }

    /// An array of such counts or displacements.
    fn array(p: *const Self) -> CountArray;

    /// `n` as this type, for an output count: MPI_ERR_VALUE_TOO_LARGE if it does not fit
    /// (MPI 4.1 section 2.5.8), never truncated.
    fn put(n: i64, what: &str) -> MpiResult<Self>;

    /// `n` as this type, or MPI_UNDEFINED if it does not fit: for the outputs whose int form the
    /// standard defines so (MPI_Type_size, MPI_Get_count, MPI_Get_elements: MPI 4.1 sections
    /// 3.2.5, 5.1.5, 5.1.11).
    fn put_or_undefined(n: i64) -> Self;
}

impl CountArg for c_int {
    fn array(p: *const c_int) -> CountArray {
        CountArray::Int(p)
    }

    fn put(n: i64, what: &str) -> MpiResult<c_int> {
        c_int::try_from(n).map_err(|_| err(MPI_ERR_VALUE_TOO_LARGE, format!("{what} {n} does not fit an int: use the large-count (_c) form")))
    }

    fn put_or_undefined(n: i64) -> c_int {
        c_int::try_from(n).unwrap_or(MPI_UNDEFINED)
    }
}

impl CountArg for i64 {
    fn array(p: *const i64) -> CountArray {
        CountArray::Big(p)
    }

    fn put(n: i64, _what: &str) -> MpiResult<i64> {
        Ok(n)
    }

    fn put_or_undefined(n: i64) -> i64 {
        n
    }
}

/// A count or displacement array as the int and the large-count forms pass it.
#[derive(Clone, Copy)]
pub enum CountArray {
    Int(*const c_int),
    Big(*const i64),
}

impl CountArray {
    /// The first `n` entries; MPI_ERR_ARG if the array is NULL.
    ///
    /// # Safety
    /// A non-NULL array must hold `n` entries.
    pub unsafe fn read(self, n: usize, what: &str) -> MpiResult<Vec<i64>> {
        let null = match self {
            CountArray::Int(p) => p.is_null(),
            CountArray::Big(p) => p.is_null(),
        };
        if null && n > 0 {
            return Err(err(MPI_ERR_ARG, format!("{what} is NULL")));
        }
        // SAFETY: the array holds `n` entries (caller contract; checked non-NULL above).
        Ok((0..n)
            .map(|i| unsafe {
                match self {
                    CountArray::Int(p) => *p.add(i) as i64,
                    CountArray::Big(p) => *p.add(i),
                }
            })
            .collect())
    }
}

/// Which form of a call the user made.
#[derive(Clone, Copy)]
pub enum Launch {
    Blocking,
    /// `MPI_I*` and `MPI_R*`: the request handle to write.
    Nonblocking(*mut MPI_Request),
    /// `MPI_*_init`: the request handle to write.
    Persistent(*mut MPI_Request),
}

impl Launch {
    /// The blocking form: no request, nothing runs later (so no schedule is built for it).
    pub fn is_blocking(self) -> bool {
        matches!(self, Launch::Blocking)
    }

    /// Checks the request argument before anything else is done.
    pub fn check(self) -> MpiResult<Launch> {
        match self {
            Launch::Nonblocking(r) | Launch::Persistent(r) if r.is_null() => Err(err(MPI_ERR_REQUEST, "request is NULL")),
            l => Ok(l),
        }
    }
}

// One `export!` definition per variant of the families above that include/mpi.h declares.
include!(concat!(env!("OUT_DIR"), "/variants.rs"));
