//! The MPI_T event functions of the MPI-5 standard ABI that take the program's callbacks, by
//! hand: the engine calls a trampoline here, which gives the program's function the ABI's
//! MPI_T_cb_safety value (registrations and instances are the engine's own numbers, passed
//! unchanged). The program's functions and data live in a table keyed by registration until the
//! engine reports the registration freed (through the free callback this layer always passes).
use super::conv::{code_out, h_in, Handle, ERR_INTERN};
use super::mpit::{t_cb_safety_in, t_cb_safety_out};
use crate::abi::MPI_Count;
use crate::ffi::boundary::run_value;
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

type EventCb = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, *mut c_void);
type FreeCb = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void);
type DroppedCb = unsafe extern "C" fn(MPI_Count, *mut c_void, c_int, c_int, *mut c_void);

/// A program's event callback and its user data (boxed: the engine holds its address).
struct Event {
    f: EventCb,
    user: *mut c_void,
}
/// The program's free callback (if any) and its user data.
struct Free {
    f: Option<FreeCb>,
    user: *mut c_void,
}

#[derive(Default)]
struct Table {
    /// (registration, MPICH cb_safety) -> the program's callback.
    events: HashMap<(usize, c_int), Box<Event>>,
    dropped: HashMap<usize, DroppedCb>,
}
// SAFETY: the raw pointers are the program's user data, only handed back to its own callbacks.
unsafe impl Send for Table {}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut g = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Table::default))
}

unsafe extern "C" fn event_tramp(instance: *mut c_void, reg: *mut c_void, safety: c_int, data: *mut c_void) {
    // SAFETY: `data` is the `Event` box registered with this trampoline, alive until the
    // registration is freed (after which the engine calls no callback of it).
    let e = unsafe { &*(data as *const Event) };
    // SAFETY: the program's callback, with the arguments its ABI prototype takes.
    unsafe { (e.f)(instance, reg, t_cb_safety_out(safety), e.user) }
}

unsafe extern "C" fn free_tramp(reg: *mut c_void, safety: c_int, data: *mut c_void) {
    // SAFETY: `data` is the `Free` box given with this trampoline; the engine calls it once.
    let fr = unsafe { Box::from_raw(data as *mut Free) };
    if let Some(f) = fr.f {
        // SAFETY: the program's callback, with the arguments its ABI prototype takes.
        unsafe { f(reg, t_cb_safety_out(safety), fr.user) };
    }
    let (events, _) = with(|t| {
        let keys: Vec<_> = t.events.keys().filter(|k| k.0 == reg as usize).copied().collect();
        (keys.into_iter().filter_map(|k| t.events.remove(&k)).collect::<Vec<_>>(), t.dropped.remove(&(reg as usize)))
    });
    drop(events);
}

unsafe extern "C" fn dropped_tramp(count: MPI_Count, reg: *mut c_void, source: c_int, safety: c_int, user: *mut c_void) {
    if let Some(f) = with(|t| t.dropped.get(&(reg as usize)).copied()) {
        // SAFETY: the program's callback, with the arguments its ABI prototype takes.
        unsafe { f(count, reg, source, t_cb_safety_out(safety), user) };
    }
}

/// # Safety
/// The arguments follow the ABI prototype of MPI_T_event_register_callback.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_T_event_register_callback(reg: *mut c_void, cb_safety: c_int, info: Handle, user_data: *mut c_void, cb: Option<EventCb>) -> c_int {
    run_value(ERR_INTERN, || {
        let safety = t_cb_safety_in(cb_safety);
        let boxed = cb.map(|f| Box::new(Event { f, user: user_data }));
        let data = boxed.as_ref().map_or(std::ptr::null_mut(), |b| &**b as *const Event as *mut c_void);
        let tramp: Option<crate::abi::MPI_T_event_cb_function> = cb.map(|_| event_tramp as crate::abi::MPI_T_event_cb_function);
        // SAFETY: `data` outlives the registration (kept in TABLE below on success).
        let rc = unsafe { crate::ffi::PMPI_T_event_register_callback(reg, safety, h_in(info), data, tramp) };
        if rc == 0 {
            with(|t| match boxed {
                Some(b) => t.events.insert((reg as usize, safety), b),
                None => t.events.remove(&(reg as usize, safety)),
            });
        }
        code_out(rc)
    })
}

/// # Safety
/// The arguments follow the ABI prototype of MPI_T_event_handle_free.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_T_event_handle_free(reg: *mut c_void, user_data: *mut c_void, free_cb: Option<FreeCb>) -> c_int {
    run_value(ERR_INTERN, || {
        let data = Box::into_raw(Box::new(Free { f: free_cb, user: user_data }));
        // SAFETY: the engine calls free_tramp once, with `data`, when the registration is gone.
        let rc = unsafe { crate::ffi::PMPI_T_event_handle_free(reg, data as *mut c_void, Some(free_tramp)) };
        if rc != 0 {
            // SAFETY: not handed to the engine (the call failed): still ours.
            drop(unsafe { Box::from_raw(data) });
        }
        code_out(rc)
    })
}

/// # Safety
/// The arguments follow the ABI prototype of MPI_T_event_set_dropped_handler.
#[no_mangle]
pub unsafe extern "C" fn oxabi_MPI_T_event_set_dropped_handler(reg: *mut c_void, cb: Option<DroppedCb>) -> c_int {
    run_value(ERR_INTERN, || {
        let tramp: Option<crate::abi::MPI_T_event_dropped_cb_function> = cb.map(|_| dropped_tramp as crate::abi::MPI_T_event_dropped_cb_function);
        // SAFETY: the trampoline finds the program's function in TABLE by registration.
        let rc = unsafe { crate::ffi::PMPI_T_event_set_dropped_handler(reg, tramp) };
        if rc == 0 {
            with(|t| match cb {
                Some(f) => t.dropped.insert(reg as usize, f),
                None => t.dropped.remove(&(reg as usize)),
            });
        }
        code_out(rc)
    })
}
