#![allow(dead_code)]
//! Shared by the engine test files.
use oxmpi::p2p::{Buf, Engine, OpArgs, SendMode};

/// Safe wrappers for the tests: every buffer passed here outlives the wait on its request.
pub trait TestOps {
    fn isend_t(&self, buf: *const u8, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode) -> oxmpi::error::MpiResult<oxmpi::p2p::ReqId>;
    fn irecv_t(&self, buf: *mut u8, cap: usize, src: Option<usize>, tag: i32, ctx: u32) -> oxmpi::p2p::ReqId;
    fn imrecv_t(&self, m: oxmpi::p2p::MsgId, buf: *mut u8, cap: usize) -> oxmpi::error::MpiResult<oxmpi::p2p::ReqId>;
    fn send_blocking_t(&self, buf: *const u8, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode) -> oxmpi::error::MpiResult;
    fn persistent_t(&self, args: OpArgs) -> oxmpi::p2p::ReqId;
}

impl TestOps for Engine {
    fn isend_t(&self, buf: *const u8, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode) -> oxmpi::error::MpiResult<oxmpi::p2p::ReqId> {
        // SAFETY: the tests keep every send buffer alive until they waited for the request.
        unsafe { self.isend(Buf::flat(buf), bytes, dest, tag, ctx, mode) }
    }
    fn irecv_t(&self, buf: *mut u8, cap: usize, src: Option<usize>, tag: i32, ctx: u32) -> oxmpi::p2p::ReqId {
        // SAFETY: the tests keep every receive buffer alive until they waited for the request.
        unsafe { self.irecv(Buf::Flat(buf), cap, src, tag, ctx) }
    }
    fn imrecv_t(&self, m: oxmpi::p2p::MsgId, buf: *mut u8, cap: usize) -> oxmpi::error::MpiResult<oxmpi::p2p::ReqId> {
        // SAFETY: as for irecv_t.
        unsafe { self.imrecv(m, Buf::Flat(buf), cap) }
    }
    fn send_blocking_t(&self, buf: *const u8, bytes: usize, dest: usize, tag: i32, ctx: u32, mode: SendMode) -> oxmpi::error::MpiResult {
        // SAFETY: blocking: the buffer is borrowed for the duration of the call.
        unsafe { self.send_blocking(Buf::flat(buf), bytes, dest, tag, ctx, mode) }
    }
    fn persistent_t(&self, args: OpArgs) -> oxmpi::p2p::ReqId {
        // SAFETY: as for the others: the tests outlive the request with the buffer.
        unsafe { self.persistent(args) }
    }
}

/// Tiny deterministic PRNG (xorshift64*), so failures reproduce.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every `.rs` file below `dir`, recursively (for the tests that read the source tree).
pub fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
