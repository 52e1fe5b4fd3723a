//! M:N scheduling of threads-mode ranks: every rank's `main` runs as a fiber, and a few carrier
//! threads (one per CPU the job may use) run the fibers. A rank that must wait inside MPI parks
//! its fiber with the condition it waits for; its carrier runs another rank at the cost of a
//! user-level switch (nanoseconds) instead of a futex wake plus a kernel context switch
//! (microseconds). Used when ranks outnumber CPUs (`OXMPI_FIBERS`, see `enabled`).
//!
//! Structure (the G/M/P split of Go's runtime scheduler, without its work stealing):
//! - a *slot* (P) per CPU: a run queue of fibers, polled round robin;
//! - a *carrier* (M): the kernel thread currently serving a slot;
//! - *sysmon*: a thread that hands a slot to a fresh carrier when its carrier has been inside one
//!   fiber for two ticks (2-4 ms) while other fibers of the slot wait. A rank blocked in the
//!   kernel outside MPI (pthread_join, sleep, read, a lock held by another rank's thread) or
//!   computing for long then never stalls the ranks that share its slot: the old carrier goes on
//!   running that one fiber and, when it parks, gives it back to the slot and ends.
//!
//! Waiting: a parked fiber is resumed when its condition holds (checked by its carrier before each
//! dispatch, under the slot lock, so conditions must be lock-free reads) or after `FORCE` (the same
//! safety net as the kernel path's futex timeout). A carrier with nothing runnable spins a few
//! rounds, yields, then sleeps on its slot's futex word after registering itself on the doorbell of
//! every fiber it holds (`Doorbell::carrier`); `wait::ring` wakes it. The Dekker pairing is the one
//! of `WaitPolicy::wait`: the carrier reads its word, announces itself as a sleeper on each bell,
//! fences, re-checks every condition, then sleeps on the word it read first; a ringer bumps the
//! bell, then sees the sleeper and bumps the word.
//!
//! Fibers move between carriers only through a hand-off. Thread-local state is then the new
//! carrier's: oxmpi's own per-rank thread locals travel with the fiber (`job::Locals`), and
//! programs that define thread-local variables are not run as fibers (`host` checks).
use super::fiber::{self, Stack};
use crate::runtime::futex;
use crate::runtime::segment::Doorbell;
use crate::runtime::job;
use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// A parked fiber is resumed at the latest after this long, as a kernel-mode waiter's futex
/// times out: its caller re-checks and parks again if nothing changed.
const FORCE: Duration = Duration::from_millis(100);
/// `FORCE` in sysmon ticks (`Sched::epoch`): reading a clock per dispatch would cost more than
/// the dispatch.
const FORCE_TICKS: u64 = (FORCE.as_millis() / TICK.as_millis()) as u64;
/// How long a carrier with nothing to run sleeps when a parked fiber's condition is announced by
/// no doorbell (a sleeping rank's deadline, a window lock word): it polls them at this period.
const POLL_NAP: Duration = Duration::from_micros(250);
/// Idle rounds (nothing runnable) spent spinning, then yielding, before a carrier sleeps.
const SPIN_ROUNDS: u32 = 50;
const YIELD_ROUNDS: u32 = 10;
/// How often sysmon looks for stalled carriers.
const TICK: Duration = Duration::from_millis(2);
/// Stack of a carrier thread: it only runs this scheduler and signal handlers (on their own
/// alternate stack); ranks run on their fibers' stacks.
const CARRIER_STACK: usize = 256 * 1024;

/// What a fiber is doing, as seen by whoever owns it (see `Fiber`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    /// Runnable: new, or yielded without a condition.
    Ready,
    /// Waiting for `Fiber::wait`.
    Parked,
    /// Finished: its stack may go.
    Done,
}

/// What a parked fiber waits for. Both pointers refer to the fiber's own stack frame (its `park`
/// call), which stays put while the fiber is parked.
struct Wait {
    cond: *const (dyn Fn() -> bool + 'static),
    /// The rank's doorbell if a ring announces the condition (lets the carrier sleep).
    bell: *const Doorbell,
    /// `Sched::epoch` when it parked.
    since: u64,
}

/// One rank's fiber. Owned by exactly one party at a time: the slot queue that holds its index,
/// or the carrier that popped it (until it pushes it back); only the owner touches these fields.
struct Fiber {
    /// Saved stack pointer while not running.
    sp: *mut u8,
    state: State,
    wait: Option<Wait>,
    /// oxmpi's thread-local values of this rank while it is not running.
    locals: job::Locals,
    /// The rank's code; taken when the fiber first runs.
    body: Option<Box<dyn FnOnce() + Send>>,
    stack: Option<Stack>,
}

/// A run queue and the carrier serving it.
struct Slot {
    queue: Mutex<SlotQueue>,
    /// Futex word the idle carrier sleeps on; bumped by `wake`.
    word: AtomicU32,
}

struct SlotQueue {
    /// Indices of the fibers this slot holds, in round-robin order.
    fibers: VecDeque<usize>,
    /// Generation of the carrier serving the slot; bumped by a hand-off.
    gen: u64,
    /// The serving carrier is inside a fiber.
    running: bool,
    /// Dispatches so far (sysmon compares it across ticks).
    dispatches: u64,
    /// The serving carrier sleeps (or is about to) on the slot's word: whoever queues a fiber
    /// here must wake it.
    sleeping: bool,
}

/// The scheduler of a threads-mode job (one per process).
pub struct Sched {
    /// One per slot of the job: the initial ranks', then room for spawned ones.
    fibers: Vec<UnsafeCell<Fiber>>,
    /// Ranks the job started with (they spread over the slots; spawned ones go round robin).
    initial: usize,
    slots: Vec<Slot>,
    /// Fibers not yet finished; the host waits for 0 (futex on the low word).
    live: AtomicU32,
    /// Per fiber: it ended and its stack is freed (set by the carrier after dropping the stack,
    /// cleared by `add`): a spawned rank's slot may then be given to a new rank.
    retired: Vec<AtomicBool>,
    stopping: AtomicBool,
    handoffs: AtomicU64,
    /// Sysmon ticks so far: the coarse clock of `FORCE`.
    epoch: AtomicU64,
}

// SAFETY: every Fiber is touched only by its current owner (see `Fiber`); the ownership moves
// under a slot's mutex, which orders the accesses.
unsafe impl Sync for Sched {}
// SAFETY: as above; the raw pointers inside refer to fiber stacks owned by the scheduler.
unsafe impl Send for Sched {}

static SCHED: OnceLock<Sched> = OnceLock::new();

thread_local! {
    /// The fiber this carrier runs now (null outside fibers).
    static CURRENT: Cell<*mut Fiber> = const { Cell::new(std::ptr::null_mut()) };
    /// The carrier's own saved context while a fiber runs.
    static SCHED_SP: Cell<*mut u8> = const { Cell::new(std::ptr::null_mut()) };
}

// Thread-local accessors that are never inlined: a fiber may come back on another carrier, so
// the address of a thread local must be computed afresh after every switch, never reused.
#[inline(never)]
fn current() -> *mut Fiber {
    CURRENT.with(|c| c.get())
}
#[inline(never)]
fn sched_sp() -> *mut u8 {
    SCHED_SP.with(|s| s.get())
}

/// Whether the calling code runs on a rank fiber (then waits must `park`, not block).
pub fn in_fiber() -> bool {
    !current().is_null()
}

/// `OXMPI_FIBERS`: whether threads-mode ranks run as fibers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Setting {
    /// `0`/`off`/`no`.
    Never,
    /// `auto` or unset: when ranks outnumber the CPUs this process may use.
    Auto,
    /// `1`/`on`/`yes`.
    Always,
}

impl Setting {
    pub fn from_env() -> Setting {
        match std::env::var("OXMPI_FIBERS").unwrap_or_default().as_str() {
            "0" | "off" | "no" => Setting::Never,
            "1" | "on" | "yes" => Setting::Always,
            _ => Setting::Auto,
        }
    }

    /// Whether `n` ranks run as fibers (never where fibers are not supported).
    pub fn enabled(self, n: usize) -> bool {
        fiber::SUPPORTED
            && match self {
                Setting::Never => false,
                Setting::Always => true,
                Setting::Auto => n > crate::runtime::wait::available_cpus(),
            }
    }
}

/// Parks the calling fiber until `cond()` holds (or `FORCE` passed); with `bell`, a ring of that
/// doorbell announces the change, so an idle carrier may sleep. Returns at once outside fibers.
/// `cond` must only read memory (no locks, no parking): carriers evaluate it.
pub fn park(cond: &dyn Fn() -> bool, bell: Option<&Doorbell>) {
    let f = current();
    if f.is_null() {
        return;
    }
    // SAFETY: the running fiber owns itself; `cond` and `bell` outlive the park (they live in
    // this frame or longer, and the frame stays until the fiber is resumed). The lifetime is
    // erased only to store the pointer.
    unsafe {
        let cond: *const (dyn Fn() -> bool + '_) = cond;
        (*f).wait = Some(Wait { cond: std::mem::transmute::<*const (dyn Fn() -> bool + '_), *const (dyn Fn() -> bool + 'static)>(cond), bell: bell.map_or(std::ptr::null(), |b| b as *const Doorbell), since: SCHED.get().map_or(0, |s| s.epoch.load(Relaxed)) });
        (*f).state = State::Parked;
        to_carrier(f);
    }
}

/// Lets the other ranks of this carrier run once (fiber), or yields the CPU (kernel thread).
pub fn yield_now() {
    let f = current();
    if f.is_null() {
        std::thread::yield_now();
        return;
    }
    // SAFETY: the running fiber owns itself.
    unsafe {
        (*f).state = State::Ready;
        to_carrier(f);
    }
}

/// `futex::wait` that parks a fiber instead of blocking its carrier (the word is polled).
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    if in_fiber() {
        park(&|| word.load(Acquire) != expected, None);
    } else {
        futex::wait(word, expected, timeout);
    }
}

/// Sleeps `d` without blocking the carrier: a rank fiber parks until the deadline (the preload
/// library's `nanosleep`, `usleep`, `sleep` and `clock_nanosleep` call this). Returns false
/// outside fibers (the caller sleeps in the kernel).
pub fn sleep(d: Duration) -> bool {
    if !in_fiber() {
        return false;
    }
    let deadline = std::time::Instant::now() + d;
    while std::time::Instant::now() < deadline {
        park(&|| std::time::Instant::now() >= deadline, None);
    }
    true
}

/// Ends the calling fiber for good (the rank called `exit`). Returns false outside fibers.
pub fn exit_current() -> bool {
    let f = current();
    if f.is_null() {
        return false;
    }
    // SAFETY: the running fiber owns itself; after the switch nobody resumes it (Done), and its
    // frames are abandoned like those of a thread ended with pthread_exit.
    unsafe {
        (*f).state = State::Done;
        to_carrier(f);
    }
    unreachable!("a finished fiber was resumed")
}

/// Switches from fiber `f` back to its carrier; returns when a carrier resumes `f`.
///
/// # Safety
/// `f` is the running fiber of this carrier.
#[inline(never)]
unsafe fn to_carrier(f: *mut Fiber) {
    // SAFETY: per the caller; the carrier's context was saved when it dispatched `f`.
    unsafe { fiber::switch(&mut (*f).sp, sched_sp()) };
}

/// First code of every fiber: runs the rank's body, then finishes.
extern "C" fn fiber_entry(arg: *mut u8) -> ! {
    let f = arg as *mut Fiber;
    // SAFETY: `arg` is this fiber, which the running fiber owns.
    let body = unsafe { (*f).body.take() };
    if let Some(body) = body {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).is_err() {
            super::host::end_job(70, "oxmpi: internal error (panic) in a rank fiber; ending the job");
        }
    }
    exit_current();
    unreachable!()
}

impl Sched {
    /// Installs the scheduler of `n` rank fibers on `slots` carriers and starts the carriers and
    /// sysmon. Fibers are added with `add`; `capacity` (at least `n`) fibers in all, the others
    /// spawned later (`add_spawned`).
    pub fn install(n: usize, capacity: usize, slots: usize) -> std::io::Result<&'static Sched> {
        let slots = slots.clamp(1, n.max(1));
        let s = Sched {
            initial: n,
            fibers: (0..capacity.max(n)).map(|_| UnsafeCell::new(Fiber { sp: std::ptr::null_mut(), state: State::Done, wait: None, locals: job::Locals::none(), body: None, stack: None })).collect(),
            slots: (0..slots).map(|_| Slot { queue: Mutex::new(SlotQueue { fibers: VecDeque::new(), gen: 0, running: false, dispatches: 0, sleeping: false }), word: AtomicU32::new(0) }).collect(),
            live: AtomicU32::new(n as u32),
            retired: (0..capacity.max(n)).map(|_| AtomicBool::new(false)).collect(),
            stopping: AtomicBool::new(false),
            handoffs: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
        };
        if SCHED.set(s).is_err() {
            return Err(std::io::Error::other("a fiber scheduler already runs in this process"));
        }
        let s = SCHED.get().expect("set above");
        for slot in 0..slots {
            s.spawn_carrier(slot, 0)?;
        }
        std::thread::Builder::new().name("oxmpi-sysmon".into()).stack_size(CARRIER_STACK).spawn(move || s.sysmon())?;
        Ok(s)
    }

    /// Starts rank `rank`'s fiber running `body` on a stack of `stack` bytes.
    pub fn add(&self, rank: usize, stack: usize, body: Box<dyn FnOnce() + Send>) -> std::io::Result<()> {
        let st = Stack::new(stack)?;
        let cell = self.fibers[rank].get();
        self.retired[rank].store(false, Release);
        // SAFETY: the fiber is not in any queue yet, so the host owns it; the stack is kept in
        // the fiber until it is done.
        unsafe {
            (*cell).sp = fiber::prepare(&st, fiber_entry, cell as *mut u8);
            (*cell).stack = Some(st);
            (*cell).body = Some(body);
            (*cell).state = State::Ready;
            (*cell).locals = job::Locals::for_rank(rank);
        }
        // Neighbouring ranks share a slot: rings, halving and doubling exchange mostly between
        // near ranks, which then hand over within one carrier without crossing cores.
        let slot = if rank < self.initial { rank * self.slots.len() / self.initial } else { rank % self.slots.len() };
        self.lock(slot).fibers.push_back(rank);
        self.wake(slot);
        Ok(())
    }

    /// Starts the fiber of spawned rank `rank` (not one of the `n` of `install`), while some
    /// fiber still runs (the spawning one), so `join` cannot have returned.
    pub fn add_spawned(&self, rank: usize, stack: usize, body: Box<dyn FnOnce() + Send>) -> std::io::Result<()> {
        if rank < self.initial || rank >= self.fibers.len() {
            return Err(std::io::Error::other(format!("slot {rank} is no spawned rank's")));
        }
        self.live.fetch_add(1, AcqRel);
        let r = self.add(rank, stack, body);
        if r.is_err() {
            self.live.fetch_sub(1, AcqRel);
        }
        r
    }

    /// Whether rank `rank`'s fiber ended and its stack is freed (false before it ever ran).
    pub fn retired(&self, rank: usize) -> bool {
        self.retired.get(rank).is_some_and(|r| r.load(Acquire))
    }

    /// Blocks the calling (host) thread until every fiber finished.
    pub fn join(&self) {
        loop {
            let live = self.live.load(Acquire);
            if live == 0 {
                break;
            }
            futex::wait(&self.live, live, Some(Duration::from_millis(100)));
        }
        self.stopping.store(true, Release);
        for slot in 0..self.slots.len() {
            self.wake(slot);
        }
    }

    /// How many times sysmon handed a slot to a new carrier.
    pub fn handoffs(&self) -> u64 {
        self.handoffs.load(Relaxed)
    }

    fn lock(&self, slot: usize) -> MutexGuard<'_, SlotQueue> {
        self.slots[slot].queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wake(&self, slot: usize) {
        let w = &self.slots[slot].word;
        w.fetch_add(1, SeqCst);
        futex::wake_all(w);
    }

    fn spawn_carrier(&'static self, slot: usize, gen: u64) -> std::io::Result<()> {
        std::thread::Builder::new().name(format!("oxmpi-carrier-{slot}")).stack_size(CARRIER_STACK).spawn(move || self.carrier(slot, gen))?;
        Ok(())
    }

    /// Whether fiber `i` (owned by the caller) may run now (`now`: the current `epoch`).
    fn runnable(&self, i: usize, now: u64) -> bool {
        // SAFETY: the caller owns fiber `i` (holds its slot's lock with `i` in the queue).
        let f = unsafe { &*self.fibers[i].get() };
        match (&f.state, &f.wait) {
            (State::Parked, Some(w)) => {
                // SAFETY: the condition lives in the parked fiber's frame (see `Wait`).
                now.wrapping_sub(w.since) >= FORCE_TICKS || unsafe { (*w.cond)() }
            }
            _ => true,
        }
    }

    /// Pops the first runnable fiber of queue `q` (rotating the others to the back).
    fn pop_runnable(&self, q: &mut SlotQueue, now: u64) -> Option<usize> {
        for _ in 0..q.fibers.len() {
            let i = q.fibers.pop_front().expect("counted");
            if self.runnable(i, now) {
                return Some(i);
            }
            q.fibers.push_back(i);
        }
        None
    }

    /// A runnable fiber of another slot, for a carrier with nothing to run: that slot's carrier
    /// may be descheduled (other processes load the machine) or busy with other ranks. Returns
    /// (its slot, the fiber). `try_lock`: never wait for a busy queue.
    fn help(&self, slot: usize) -> Option<(usize, usize)> {
        let k = self.slots.len();
        let now = self.epoch.load(Relaxed);
        for d in 1..k {
            let other = (slot + d) % k;
            let Ok(mut q) = self.slots[other].queue.try_lock() else { continue };
            if let Some(i) = self.pop_runnable(&mut q, now) {
                return Some((other, i));
            }
        }
        None
    }

    /// A carrier: serves `slot` while its generation is `gen`, and helps the other slots when it
    /// has nothing to run.
    fn carrier(&'static self, slot: usize, gen: u64) {
        super::host::install_alt_stack();
        let mut idle = 0u32;
        loop {
            if self.stopping.load(Acquire) {
                return;
            }
            let picked = {
                let mut q = self.lock(slot);
                if q.gen != gen {
                    return;
                }
                let mut found = self.pop_runnable(&mut q, self.epoch.load(Relaxed)).map(|i| (slot, i));
                if found.is_none() {
                    drop(q);
                    found = self.help(slot);
                    q = self.lock(slot);
                    if q.gen != gen {
                        // Replaced meanwhile: give a helped fiber back untouched.
                        drop(q);
                        if let Some((home, i)) = found {
                            self.give_back(home, i);
                        }
                        return;
                    }
                }
                if found.is_some() {
                    q.running = true;
                    q.dispatches += 1;
                }
                found
            };
            match picked {
                Some((home, i)) => {
                    idle = 0;
                    if !self.dispatch(slot, gen, home, i) {
                        return;
                    }
                }
                None => {
                    idle += 1;
                    if idle <= SPIN_ROUNDS {
                        for _ in 0..64 {
                            std::hint::spin_loop();
                        }
                    } else if idle <= SPIN_ROUNDS + YIELD_ROUNDS {
                        std::thread::yield_now();
                    } else {
                        self.sleep(slot, gen);
                        idle = 0;
                    }
                }
            }
        }
    }

    /// Puts fiber `i` back into the queue of slot `home`, waking that slot's carrier if it sleeps
    /// (it did not register on the fiber's doorbell: the fiber was away).
    fn give_back(&self, home: usize, i: usize) {
        let mut q = self.lock(home);
        q.fibers.push_back(i);
        let sleeping = q.sleeping;
        drop(q);
        if sleeping {
            self.wake(home);
        }
    }

    /// Runs fiber `i` (of slot `home`) until it parks, yields or ends. Returns false if this
    /// carrier was replaced meanwhile (it then gave the fiber back and must end).
    fn dispatch(&self, slot: usize, gen: u64, home: usize, i: usize) -> bool {
        let f = self.fibers[i].get();
        // SAFETY: we popped `i` from a queue, so we own the fiber until we push it back.
        unsafe {
            (*f).wait = None;
            job::Locals::restore(&(*f).locals);
            CURRENT.with(|c| c.set(f));
            fiber::switch(SCHED_SP.with(|s| s.as_ptr()), (*f).sp);
            CURRENT.with(|c| c.set(std::ptr::null_mut()));
            (*f).locals = job::Locals::take();
        }
        // SAFETY: still ours (the fiber switched back to us and is not queued).
        let done = unsafe { (*f).state == State::Done };
        if done {
            // SAFETY: the fiber will never run again; we are on the carrier's stack.
            unsafe { (*f).stack = None };
            // Release: whoever sees it retired sees the fiber's last writes and its stack gone.
            self.retired[i].store(true, Release);
        }
        let mut q = self.lock(slot);
        let replaced = q.gen != gen;
        if !replaced {
            q.running = false;
        }
        if !done && home == slot {
            q.fibers.push_back(i);
        }
        drop(q);
        if !done && home != slot {
            self.give_back(home, i);
        }
        if done && self.live.fetch_sub(1, AcqRel) == 1 {
            futex::wake_all(&self.live);
        }
        if replaced {
            self.wake(slot);
        }
        !replaced
    }

    /// Sleeps until a fiber of `slot` may be runnable: announced on the doorbells of its fibers.
    fn sleep(&self, slot: usize, gen: u64) {
        let word = &self.slots[slot].word;
        let seen = word.load(SeqCst);
        let mut bells: Vec<*const Doorbell> = Vec::new();
        let mut polled = false;
        {
            let mut q = self.lock(slot);
            if q.gen != gen {
                return;
            }
            for &i in &q.fibers {
                // SAFETY: the fibers in our queue are ours while we hold the lock.
                let f = unsafe { &*self.fibers[i].get() };
                match &f.wait {
                    Some(w) if !w.bell.is_null() => bells.push(w.bell),
                    _ => polled = true,
                }
            }
            for &b in &bells {
                // SAFETY: the bells live in the job's segment, which outlives the job.
                let b = unsafe { &*b };
                b.carrier.store(slot as u32 + 1, SeqCst);
                b.sleepers.fetch_add(1, SeqCst);
            }
            fence(SeqCst);
            let now = self.epoch.load(Relaxed);
            let ready = q.fibers.iter().any(|&i| self.runnable(i, now));
            if !ready && !self.stopping.load(Acquire) {
                q.sleeping = true;
                drop(q);
                futex::wait(word, seen, Some(if polled { POLL_NAP } else { FORCE }));
                self.lock(slot).sleeping = false;
            }
        }
        for &b in &bells {
            // SAFETY: as above.
            let b = unsafe { &*b };
            b.sleepers.fetch_sub(1, SeqCst);
        }
    }

    /// Every tick: hands a slot whose carrier has been inside one fiber since the last tick to a
    /// new carrier, if other fibers of the slot wait.
    fn sysmon(&'static self) {
        let mut last = vec![u64::MAX; self.slots.len()];
        while !self.stopping.load(Acquire) {
            std::thread::sleep(TICK);
            self.epoch.fetch_add(1, Relaxed);
            for (slot, seen) in last.iter_mut().enumerate() {
                let mut q = self.lock(slot);
                if q.running && q.dispatches == *seen && !q.fibers.is_empty() {
                    q.gen += 1;
                    q.running = false;
                    q.dispatches += 1;
                    let gen = q.gen;
                    drop(q);
                    self.handoffs.fetch_add(1, Relaxed);
                    if let Err(e) = self.spawn_carrier(slot, gen) {
                        super::host::end_job(2, &format!("oxmpi: cannot start a carrier thread: {e}"));
                    }
                    *seen = u64::MAX;
                } else {
                    *seen = q.dispatches;
                }
            }
        }
    }
}

/// The job's scheduler, if ranks run as fibers.
pub fn get() -> Option<&'static Sched> {
    SCHED.get()
}

/// Wakes the carrier that sleeps on slot `slot` (called by `wait::ring` for a doorbell a
/// sleeping carrier registered on).
pub fn wake_carrier(slot: usize) {
    if let Some(s) = SCHED.get() {
        if slot < s.slots.len() {
            s.wake(slot);
        }
    }
}
