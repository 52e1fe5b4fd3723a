//! Categories: groups of variables for tools to browse.
use super::{cvars, pvars};

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
        vec![
            Category { name: "TRANSPORT", desc: "Shared-memory transport and waiting", cvars: by(&|c| matches!(c.source, cvars::Source::EagerLimit | cvars::Source::Wait)), pvars: vec![] },
            Category { name: "COLLECTIVE", desc: "Choice of collective algorithms and Clairvoyant MPI_Reduce knobs", cvars: by(&|c| matches!(c.source, cvars::Source::Algorithm(_) | cvars::Source::Clairvoyant(_))), pvars: vec![] },
            Category {
                name: "MONITORING",
                desc: "Per-peer communication monitoring (Open MPI's monitoring variables)",
                cvars: by(&|c| matches!(c.source, cvars::Source::MonitoringEnable)),
                pvars: (0..pvars::PVARS.len()).collect(),
            },
        ]
    })
}

pub fn get_index(name: &str) -> super::TResult<usize> {
    all().iter().position(|c| c.name == name).ok_or(super::MPI_T_ERR_INVALID_NAME)
}
