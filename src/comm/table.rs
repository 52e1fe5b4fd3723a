//! The user communicators of one rank: handle -> communicator, and context id -> communicator (to
//! turn the world rank of a message's sender into its rank in the communicator, for statuses).
use super::context::ContextIds;
use super::Comm;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

#[derive(Default)]
pub struct CommTable {
    /// User communicators by handle index (freed entries are None and reused).
    entries: RwLock<Vec<Option<Arc<Comm>>>>,
    /// The same communicators by point-to-point context id.
    by_context: RwLock<HashMap<u32, Arc<Comm>>>,
    pub contexts: ContextIds,
}

impl CommTable {
    /// Registers `c`; returns its handle index.
    pub fn insert(&self, c: Comm) -> u32 {
        let c = Arc::new(c);
        self.by_context.write().unwrap_or_else(|p| p.into_inner()).insert(c.context, c.clone());
        let mut e = self.entries.write().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = e.iter().position(|x| x.is_none()) {
            e[i] = Some(c);
            i as u32
        } else {
            e.push(Some(c));
            (e.len() - 1) as u32
        }
    }

    pub fn get(&self, index: u32) -> Option<Arc<Comm>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner()).get(index as usize).and_then(|x| x.clone())
    }

    pub fn by_context(&self, context: u32) -> Option<Arc<Comm>> {
        let base = context & !1;
        self.by_context.read().unwrap_or_else(|p| p.into_inner()).get(&base).cloned()
    }

    /// The handle index of the communicator owning context id `context` (either of its pair).
    /// A scan: only error paths ask.
    pub fn index_of_context(&self, context: u32) -> Option<u32> {
        let base = context & !1;
        let e = self.entries.read().unwrap_or_else(|p| p.into_inner());
        e.iter().position(|c| c.as_ref().is_some_and(|c| c.context == base)).map(|i| i as u32)
    }

    /// Removes communicator `index` and gives its context ids back.
    pub(super) fn remove(&self, index: u32) -> Option<Arc<Comm>> {
        let c = self.entries.write().unwrap_or_else(|p| p.into_inner()).get_mut(index as usize)?.take()?;
        self.by_context.write().unwrap_or_else(|p| p.into_inner()).remove(&c.context);
        self.contexts.release(c.context);
        Some(c)
    }
}
