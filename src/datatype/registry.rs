//! The table of user-visible derived types: index -> `Arc<TypeRepr>`. Freeing removes the entry (the
//! index becomes invalid and is reused later), while types built from it and operations in flight
//! keep the representation alive through their own `Arc`s.
use super::TypeRepr;
use std::sync::{Arc, RwLock};

/// Indices below this are never handed out, so handles built from them cannot collide with the
/// DIRECT-kind pair types (`MPI_FLOAT_INT`... use indices 0..5).
pub const FIRST_INDEX: u32 = 16;

struct Table {
    slots: Vec<Option<Arc<TypeRepr>>>,
    free: Vec<u32>,
}

static TABLE: RwLock<Table> = RwLock::new(Table { slots: Vec::new(), free: Vec::new() });

/// Registers `t` and returns its index (>= FIRST_INDEX).
pub fn insert(t: Arc<TypeRepr>) -> u32 {
    let mut tab = TABLE.write().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = tab.free.pop() {
        tab.slots[(i - FIRST_INDEX) as usize] = Some(t);
        return i;
    }
    tab.slots.push(Some(t));
    FIRST_INDEX + tab.slots.len() as u32 - 1
}

/// The type at index `i`, if it is registered.
pub fn get(i: u32) -> Option<Arc<TypeRepr>> {
    let tab = TABLE.read().unwrap_or_else(|e| e.into_inner());
    i.checked_sub(FIRST_INDEX).and_then(|k| tab.slots.get(k as usize)).and_then(|s| s.clone())
}

/// Unregisters index `i`; returns whether it was registered.
pub fn remove(i: u32) -> bool {
    let mut tab = TABLE.write().unwrap_or_else(|e| e.into_inner());
    let Some(k) = i.checked_sub(FIRST_INDEX) else { return false };
    match tab.slots.get_mut(k as usize) {
        Some(s @ Some(_)) => {
            *s = None;
            tab.free.push(i);
            true
        }
        _ => false,
    }
}
