//! Enumerations of control variable values: one per collective's algorithm table (`auto` = 0,
//! then the table in order) and one for the wait policy, named by their index in `all()`.
use crate::coll::select::Collective;
use crate::error::ErrorClass;
use std::sync::OnceLock;

pub struct EnumType {
    pub name: String,
    pub items: Vec<(i32, String)>,
}

/// The algorithm table of a collective whose algorithm can be forced.
pub fn algorithms(c: Collective) -> Option<&'static [&'static str]> {
    use crate::coll::*;
    Some(match c {
        Collective::Barrier => return None,
        Collective::Bcast => bcast::ALGORITHMS,
        Collective::Reduce => reduce::ALGORITHMS,
        Collective::Allreduce => allreduce::ALGORITHMS,
        Collective::Gather => gather::ALGORITHMS,
        Collective::Scatter => scatter::ALGORITHMS,
        Collective::Allgather => allgather::ALGORITHMS,
        Collective::Alltoall => alltoall::ALGORITHMS,
        Collective::ReduceScatter => reduce_scatter::ALGORITHMS,
        Collective::Scan => scan::ALGORITHMS,
    })
}

/// Values of the wait policy (`OXMPI_WAIT`).
pub const WAIT_POLICIES: &[&str] = &["auto", "spin", "yield", "block"];

/// Values of `oxmpi_monitoring_state`.
pub const MONITORING_STATES: &[&str] = &["off", "recording"];

/// Every enumeration; MONITORING_STATE and WAIT_POLICY are the last two.
pub fn all() -> &'static [EnumType] {
    static E: OnceLock<Vec<EnumType>> = OnceLock::new();
    E.get_or_init(|| {
        let mut v: Vec<EnumType> = Collective::ALL
            .iter()
            .filter_map(|&c| {
                let names = algorithms(c)?;
                let items = std::iter::once("auto").chain(names.iter().copied()).enumerate().map(|(i, n)| (i as i32, n.to_string())).collect();
                Some(EnumType { name: format!("{}_ALGORITHM", c.name()), items })
            })
            .collect();
        v.push(EnumType { name: "MONITORING_STATE".into(), items: MONITORING_STATES.iter().enumerate().map(|(i, n)| (i as i32, n.to_string())).collect() });
        v.push(EnumType { name: "WAIT_POLICY".into(), items: WAIT_POLICIES.iter().enumerate().map(|(i, n)| (i as i32, n.to_string())).collect() });
        v
    })
}

/// The enumeration of collective `c`'s algorithms.
pub fn of_collective(c: Collective) -> Option<usize> {
    let name = format!("{}_ALGORITHM", c.name());
    all().iter().position(|e| e.name == name)
}

pub fn monitoring_state() -> usize {
    all().len() - 2
}

pub fn wait_policy() -> usize {
    all().len() - 1
}

/// The enumeration of index `i`: tools pass it back, so a bad one is an invalid handle.
pub fn get(i: usize) -> super::TResult<&'static EnumType> {
    all().get(i).ok_or(ErrorClass::TInvalidHandle)
}
