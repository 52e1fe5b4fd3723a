//! Control variables: every value is one `int` (MPI_INT), not bound to an object.
//!
//! | name | scope | meaning |
//! |---|---|---|
//! | `OXMPI_EAGER_LIMIT` | constant | largest message sent through the lock-free rings; larger ones are single-copy |
//! | `OXMPI_WAIT` | readonly | wait policy (enum WAIT_POLICY), from the environment at start |
//! | `OXMPI_<COLL>_ALGORITHM` | all-equal | algorithm of a collective (enum `<COLL>_ALGORITHM`, 0 = auto); writing it calls `coll::select::force` |
//! | `OXMPI_CLV_SEGMENTS` | all-equal | Clairvoyant MPI_Reduce segment count, 0 = automatic (about 64 KiB a segment, at most 2 per rank); starts as the environment variable |
//! | `OXMPI_CLV_ROUND_NS` | all-equal | Clairvoyant round length in ns, 0 = automatic (a zero-byte round trip + the copy-and-combine cost per segment byte, calibrated at the communicator's first Clairvoyant reduce); starts as the environment variable |
//! | `pml_monitoring_enable` | local | 1: record communication (monitoring), 0: not (Open MPI's name) |
//!
//! The algorithm choice and the Clairvoyant knobs are process-wide: in threads mode a write applies to every rank of the
//! process, which the all-equal scope (every rank must set the same value) makes harmless.
use super::enums::{self, WAIT_POLICIES};
use super::*;
use crate::coll::clairvoyant_pap;
use crate::coll::select::{self, Collective};
use crate::datatype::basic::Basic;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

#[derive(Clone, Copy)]
pub enum Source {
    EagerLimit,
    Wait,
    Algorithm(Collective),
    MonitoringEnable,
    /// `coll::clairvoyant_pap::knobs()[i]`: 0 segments, 1 round length.
    Clairvoyant(usize),
}

/// Every control variable's value is one `int` (`read` and `write` take an i32).
pub const DATATYPE: Basic = Basic::Int;

/// Control variables are not bound to an object (MPI_T_cvar_handle_alloc ignores its object).
pub const BIND: Bind = Bind::NoObject;

pub struct Cvar {
    pub name: String,
    pub desc: String,
    pub verbosity: Verbosity,
    pub enumtype: Option<usize>,
    pub scope: Scope,
    pub source: Source,
}

pub fn all() -> &'static [Cvar] {
    static V: OnceLock<Vec<Cvar>> = OnceLock::new();
    V.get_or_init(|| {
        let mut v = vec![
            Cvar { name: "OXMPI_EAGER_LIMIT".into(), desc: "Largest message (bytes) copied through the shared-memory rings; larger messages are copied once, straight from the sender's buffer".into(), verbosity: Verbosity::TunerBasic, enumtype: None, scope: Scope::Constant, source: Source::EagerLimit },
            Cvar { name: "OXMPI_WAIT".into(), desc: "How a waiting rank waits: auto, spin, yield or block (environment variable OXMPI_WAIT, read at MPI_Init)".into(), verbosity: Verbosity::TunerBasic, enumtype: Some(enums::wait_policy()), scope: Scope::Readonly, source: Source::Wait },
        ];
        for &c in Collective::ALL.iter() {
            if let Some(names) = enums::algorithms(c) {
                v.push(Cvar {
                    name: c.env_var(),
                    desc: format!("Algorithm of {}: 0 = auto (chosen by size and ranks), or one of {}", c.name(), names.join(", ")),
                    verbosity: Verbosity::TunerDetail,
                    enumtype: enums::of_collective(c),
                    scope: Scope::AllEq,
                    source: Source::Algorithm(c),
                });
            }
        }
        v.push(Cvar { name: "OXMPI_CLV_SEGMENTS".into(), desc: "Segments of a Clairvoyant MPI_Reduce: 0 = automatic (about 64 KiB each, at most 2 per rank), n = n segments (at most the element count); applies from the next MPI_Reduce; every rank must use the same value (in threads mode the value is shared by the ranks of the process: change it between reduces separated by a barrier)".into(), verbosity: Verbosity::TunerDetail, enumtype: None, scope: Scope::AllEq, source: Source::Clairvoyant(0) });
        v.push(Cvar { name: "OXMPI_CLV_ROUND_NS".into(), desc: "Round length (ns) of Clairvoyant schedules: 0 = automatic (a zero-byte round trip + the copy-and-combine cost per segment byte, calibrated at the communicator's first Clairvoyant reduce); applies from the next MPI_Reduce".into(), verbosity: Verbosity::TunerDetail, enumtype: None, scope: Scope::AllEq, source: Source::Clairvoyant(1) });
        v.push(Cvar { name: "pml_monitoring_enable".into(), desc: "1: record per-peer communication counters (monitoring performance variables), 0: off; starts as OXMPI_MONITORING".into(), verbosity: Verbosity::UserBasic, enumtype: None, scope: Scope::Local, source: Source::MonitoringEnable });
        v
    })
}

/// Values written to algorithm cvars (index into the enum, 0 = auto); unset: the environment.
fn algo_slots() -> &'static [AtomicI32] {
    static S: OnceLock<Vec<AtomicI32>> = OnceLock::new();
    S.get_or_init(|| Collective::ALL.iter().map(|_| AtomicI32::new(-1)).collect())
}

/// The cvar's monitoring hold (see `monitoring::hold`).
static MONITORING_HELD: AtomicBool = AtomicBool::new(false);

fn env_choice(var: &str, names: &[&str]) -> i32 {
    let v = std::env::var(var).unwrap_or_default().trim().to_ascii_lowercase();
    names.iter().position(|n| *n == v).map_or(0, |i| i as i32)
}

impl Cvar {
    pub fn read(&self) -> i32 {
        match self.source {
            // The largest message one packet of the shared-memory transport carries.
            Source::EagerLimit => <crate::transport::shm::Shm as crate::transport::Transport>::MAX_PAYLOAD as i32,
            Source::Wait => env_choice("OXMPI_WAIT", WAIT_POLICIES),
            Source::Algorithm(c) => {
                let slot = &algo_slots()[c as usize];
                match slot.load(Ordering::Relaxed) {
                    -1 => {
                        let names: Vec<&str> = std::iter::once("auto").chain(enums::algorithms(c).unwrap_or(&[]).iter().copied()).collect();
                        env_choice(&c.env_var(), &names)
                    }
                    v => v,
                }
            }
            Source::Clairvoyant(i) => clairvoyant_pap::knobs()[i].load(Ordering::Relaxed).min(i32::MAX as usize) as i32,
            Source::MonitoringEnable => (MONITORING_HELD.load(Ordering::Relaxed) || crate::monitoring::from_env()) as i32,
        }
    }

    pub fn write(&self, v: i32) -> TResult {
        match self.source {
            Source::EagerLimit | Source::Wait => Err(ErrorClass::TCvarSetNever),
            Source::Algorithm(c) => {
                let names = enums::algorithms(c).unwrap_or(&[]);
                let i = usize::try_from(v).ok().filter(|&i| i <= names.len()).ok_or(ErrorClass::TInvalid)?;
                select::force(c, if i == 0 { "auto" } else { names[i - 1] });
                algo_slots()[c as usize].store(v, Ordering::Relaxed);
                Ok(())
            }
            Source::Clairvoyant(i) => {
                let v = usize::try_from(v).map_err(|_| ErrorClass::TInvalid)?;
                clairvoyant_pap::knobs()[i].store(v, Ordering::Relaxed);
                Ok(())
            }
            Source::MonitoringEnable => {
                let want = match v {
                    0 => false,
                    1 => true,
                    _ => return Err(ErrorClass::TInvalid),
                };
                if MONITORING_HELD.swap(want, Ordering::Relaxed) != want {
                    crate::monitoring::hold(want);
                }
                Ok(())
            }
        }
    }
}

pub fn get_index(name: &str) -> TResult<usize> {
    all().iter().position(|c| c.name == name).ok_or(ErrorClass::TInvalidName)
}
