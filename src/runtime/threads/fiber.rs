//! User-level execution contexts ("fibers"): a stack of their own and a saved stack pointer, and
//! the switch between two of them. The scheduler (`sched`) runs many rank fibers on a few kernel
//! threads, so switching ranks costs a few nanoseconds instead of a futex wake and a kernel
//! context switch (the TMPI result, seed 003 section 6.2, taken one step further: M:N threads).
//!
//! The switch saves what the System V x86-64 ABI makes callee-saved (rbx, rbp, r12-r15, the
//! MXCSR control bits and the x87 control word) on the old stack, stores the stack pointer, loads
//! the other one and restores the same set from it: everything else is caller-saved, so the
//! compiler already spilled it around the call. Same technique as Boost.Context's `jump_fcontext`
//! and most green-thread libraries.
use std::io;

/// A fiber stack: an anonymous mapping with a PROT_NONE guard page at its low end, so an overflow
/// faults (and the crash handler names the rank) instead of running into other memory.
pub struct Stack {
    base: *mut u8,
    len: usize,
}

// SAFETY: a Stack is plain memory owned by one fiber; moving the owner between threads is fine.
unsafe impl Send for Stack {}

const PAGE: usize = 4096;

impl Stack {
    /// Maps a stack of `size` bytes (rounded up to pages) plus a guard page. MAP_NORESERVE: only
    /// the pages a rank touches cost memory, as with a thread's stack.
    pub fn new(size: usize) -> io::Result<Stack> {
        let len = size.div_ceil(PAGE) * PAGE + PAGE;
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK, -1, 0)
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the first page of the mapping we just made becomes the guard.
        if unsafe { libc::mprotect(base, PAGE, libc::PROT_NONE) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: unmapping the mapping made above, which nobody uses.
            unsafe { libc::munmap(base, len) };
            return Err(e);
        }
        Ok(Stack { base: base as *mut u8, len })
    }

    /// One past the highest usable byte (stacks grow down).
    pub fn top(&self) -> *mut u8 {
        // SAFETY: base + len is the end of our own mapping.
        unsafe { self.base.add(self.len) }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: our own mapping; the owner drops the stack only when no fiber runs on it.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// The entry of a new fiber: called with `arg` on the fiber's own stack; must never return
/// (a fiber ends by switching away for good).
pub type Entry = extern "C" fn(arg: *mut u8) -> !;

/// Prepares `stack` so that the first `switch` to the returned stack pointer calls
/// `entry(arg)` on it.
///
/// # Safety
/// `stack` must outlive every switch to the fiber; the returned pointer may be switched to once.
#[cfg(target_arch = "x86_64")]
pub unsafe fn prepare(stack: &Stack, entry: Entry, arg: *mut u8) -> *mut u8 {
    // Frame `switch` pops: [mxcsr u32 | x87 cw u16 | pad] r15 r14 r13 r12 rbx rbp, then `ret`
    // into `trampoline`. After the ret the stack pointer must be 16-byte aligned so that the
    // trampoline's `call` leaves the entry with the alignment the ABI wants (rsp+8 aligned).
    let top = (stack.top() as usize) & !15;
    let sp = (top - 8 * 8) as *mut u64;
    // SAFETY: the eight words lie inside the mapping just below its (aligned) top.
    unsafe {
        let words: [u64; 8] = [
            0x1F80 | (0x037F << 32), // MXCSR default (all exceptions masked), x87 CW default
            0,                       // r15
            0,                       // r14
            entry as *const () as u64, // r13: what the trampoline calls
            arg as u64,              // r12: its argument
            0,                       // rbx
            0,                       // rbp: 0 ends frame-pointer walks (debuggers, profilers)
            trampoline as *const () as u64,
        ];
        std::ptr::copy_nonoverlapping(words.as_ptr(), sp, 8);
    }
    sp as *mut u8
}

/// First code a fiber runs: moves the argument into place and calls the entry, which never returns.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn trampoline() {
    std::arch::naked_asm!("mov rdi, r12", "call r13", "ud2");
}

/// Saves the current context's stack pointer into `*save` and resumes the context whose stack
/// pointer is `to` (saved by an earlier `switch`, or made by `prepare`). Returns when someone
/// switches back to the saved pointer.
///
/// # Safety
/// `to` must be a live context's saved stack pointer that nobody else resumes concurrently;
/// `save` must stay writable until the switch has happened.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
pub unsafe extern "C" fn switch(save: *mut *mut u8, to: *mut u8) {
    std::arch::naked_asm!(
        "push rbp",
        "push rbx",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "sub rsp, 8",
        "stmxcsr [rsp]",
        "fnstcw [rsp + 4]",
        "mov [rdi], rsp",
        "mov rsp, rsi",
        "ldmxcsr [rsp]",
        "fldcw [rsp + 4]",
        "add rsp, 8",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        "ret",
    );
}

/// Whether this build can run fibers (the switch is written for x86-64 only).
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// The saved contexts of the test thread and of its fiber.
        static MAIN_SP: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
        static FIB_SP: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
    }

    extern "C" fn counter(arg: *mut u8) -> ! {
        // SAFETY: the test passes a pointer to a live u64.
        let n = unsafe { &mut *(arg as *mut u64) };
        let x = std::hint::black_box(1.5f64);
        loop {
            *n += 1;
            // SAFETY: switching back to the test's saved context, saving ours for the next round.
            unsafe { switch(FIB_SP.with(|f| f.as_ptr()), MAIN_SP.with(|m| m.get())) };
            // Floating point values in callee-saved places survive the round trip.
            assert_eq!(x * 2.0, 3.0);
        }
    }

    #[test]
    fn switches_back_and_forth_keeping_state() {
        let stack = Stack::new(64 * 1024).unwrap();
        let mut n = 0u64;
        // SAFETY: the stack outlives the switches; only this thread resumes the fiber.
        unsafe {
            FIB_SP.with(|f| f.set(prepare(&stack, counter, &mut n as *mut u64 as *mut u8)));
            for i in 1..=1000u64 {
                switch(MAIN_SP.with(|m| m.as_ptr()), FIB_SP.with(|f| f.get()));
                assert_eq!(std::ptr::read_volatile(&n), i);
            }
        }
    }
}
