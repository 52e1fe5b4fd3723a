//! Categories: groups of variables for tools to browse.
use super::{cvars, pvars};
use crate::error::ErrorClass;

pub struct Category {
    pub name: &'static str,
    pub desc: &'static str,
    pub cvars: Vec<usize>,
    pub pvars: Vec<usize>,
}

pub fn all() -> &'static [Category] {
    static C: std::sync::OnceLock<Vec<Category>> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        let cv = cvars::all();
        let by = |pred: &dyn Fn(&cvars::Cvar) -> bool| cv.iter().enumerate().filter(|(_, c)| pred(c)).map(|(i, _)| i).collect::<Vec<_>>();
        let pv = |pred: &dyn Fn(pvars::Source) -> bool| pvars::PVARS.iter().enumerate().filter(|(_, p)| pred(p.source)).map(|(i, _)| i).collect::<Vec<_>>();
        use pvars::Source as P;
        vec![
            Category { name: "TRANSPORT", desc: "Shared-memory transport and waiting", cvars: by(&|c| matches!(c.source, cvars::Source::EagerLimit | cvars::Source::Wait)), pvars: pv(&|s| matches!(s, P::Unexpected | P::UnexpectedHigh | P::UnexpectedLow | P::EagerFraction | P::WaitBlocked)) },
            Category { name: "COLLECTIVE", desc: "Choice of collective algorithms", cvars: by(&|c| matches!(c.source, cvars::Source::Algorithm(_))), pvars: vec![] },
            Category { name: "CLAIRVOYANT", desc: "Clairvoyant MPI_Reduce: schedule knobs and statistics", cvars: by(&|c| matches!(c.source, cvars::Source::Clairvoyant(_))), pvars: pv(&|s| matches!(s, P::Clv(_))) },
            Category {
                name: "MONITORING",
                desc: "Per-peer communication monitoring (Open MPI's monitoring variables)",
                cvars: by(&|c| matches!(c.source, cvars::Source::MonitoringEnable)),
                pvars: pv(&|s| s.is_monitoring() || s == P::MonitoringState),
            },
        ]
    })
}

pub fn get_index(name: &str) -> super::TResult<usize> {
    all().iter().position(|c| c.name == name).ok_or(ErrorClass::TInvalidName)
}
