//! The command that starts one processes-mode rank: its program and arguments, and the
//! launcher/rank contract in its environment (`oxmpi::runtime::env`, the spawn variables of
//! `oxmpi::runtime::spawned`, and what MPICH's hydra sets, which some programs read). The ranks
//! `mpiexec` starts, those it spawns (`spawn`) and those of a joined job (`join`) differ only in
//! the world they belong to.
use crate::libpath::LibEnv;
use crate::supervise::tie_to_launcher;
use oxmpi::runtime::env;
use oxmpi::runtime::spawn_desk::{ENV_APPNUM, ENV_PARENT_ROOT, ENV_WORLD_SLOTS};
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// The world a rank belongs to.
pub struct World<'a> {
    /// Its ranks.
    pub size: usize,
    /// The job segment's inherited descriptor.
    pub shm_fd: i32,
    /// Its slots in rank order, comma-separated; None: the initial world (slots 0..size).
    pub slots: Option<&'a str>,
    /// A spawned world's spawning root (slot) and command index (MPI_APPNUM).
    pub spawned_by: Option<(usize, usize)>,
    /// Its rank 0 reads the launcher's input (the worlds `mpiexec` starts, as with MPICH and
    /// Open MPI; not spawned ones).
    pub input: bool,
}

/// What runs: the program file, argv[0] as the user named it, the arguments, and the library
/// environment `libpath` planned for it.
pub struct Program<'a, S: AsRef<OsStr>> {
    pub path: &'a Path,
    pub arg0: &'a OsStr,
    pub args: &'a [S],
    pub libenv: &'a LibEnv,
    pub preload: Option<&'a OsStr>,
}

/// The command of rank `rank` of `world`, in slot `slot`, tied to the launcher `launcher_pid`.
pub fn rank_command<S: AsRef<OsStr>>(p: &Program<'_, S>, world: &World<'_>, rank: usize, slot: usize, launcher_pid: i32) -> Command {
    let r = rank.to_string();
    let size = world.size.to_string();
    let mut cmd = Command::new(p.path);
    cmd.arg0(p.arg0)
        .args(p.args)
        .env(env::RANK, slot.to_string())
        .env(env::SIZE, &size)
        .env(env::SHM_FD, world.shm_fd.to_string())
        .env(env::MODE, "processes")
        .env("PMI_RANK", &r)
        .env("PMI_SIZE", &size)
        .env("MPI_LOCALRANKID", &r)
        .env("MPI_LOCALNRANKS", &size)
        .stdin(if rank == 0 && world.input { Stdio::inherit() } else { Stdio::null() });
    if let Some(list) = world.slots {
        cmd.env(ENV_WORLD_SLOTS, list);
    }
    if let Some((root, appnum)) = world.spawned_by {
        cmd.env(ENV_PARENT_ROOT, root.to_string()).env(ENV_APPNUM, appnum.to_string());
    }
    if let Some(v) = &p.libenv.ld_library_path {
        cmd.env("LD_LIBRARY_PATH", v);
    }
    if let Some(v) = p.preload {
        cmd.env("LD_PRELOAD", v);
    }
    tie_to_launcher(&mut cmd, launcher_pid);
    cmd
}

/// An MPMD segment's part of its ranks' commands: MPI_APPNUM (`appnum`, the segment's index),
/// the segment's own `-env` variables and `-wdir`.
pub fn segment(cmd: &mut Command, app: &crate::args::App, appnum: usize) {
    cmd.env(ENV_APPNUM, appnum.to_string());
    for (k, v) in &app.env {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    if let Some(d) = &app.wdir {
        cmd.current_dir(d);
    }
}

/// Comma-separated slot numbers (`World::slots`).
pub fn slot_list(slots: &[usize]) -> String {
    slots.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envs(cmd: &Command) -> Vec<(String, String)> {
        let mut v: Vec<_> = cmd.get_envs().filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string()))).collect();
        v.sort();
        v
    }

    #[test]
    fn contract_of_each_world() {
        let libenv = LibEnv { ld_library_path: Some("/l".into()), ld_preload: None };
        let args = ["a", "b"];
        let p = Program { path: Path::new("/bin/prog"), arg0: "prog".as_ref(), args: &args, libenv: &libenv, preload: Some("/p.so".as_ref()) };
        let first = World { size: 2, shm_fd: 5, slots: None, spawned_by: None, input: true };
        let cmd = rank_command(&p, &first, 1, 1, 1);
        assert_eq!(cmd.get_args().collect::<Vec<_>>(), ["a", "b"]);
        let e = envs(&cmd);
        for (k, v) in [("OXMPI_RANK", "1"), ("OXMPI_SIZE", "2"), ("OXMPI_SHM_FD", "5"), ("OXMPI_MODE", "processes"), ("PMI_RANK", "1"), ("LD_LIBRARY_PATH", "/l"), ("LD_PRELOAD", "/p.so")] {
            assert!(e.contains(&(k.into(), v.into())), "{k}={v} in {e:?}");
        }
        assert!(!e.iter().any(|(k, _)| k == ENV_WORLD_SLOTS || k == ENV_PARENT_ROOT));
        let list = slot_list(&[7, 3]);
        let spawned = World { size: 2, shm_fd: 5, slots: Some(&list), spawned_by: Some((0, 1)), input: false };
        let e = envs(&rank_command(&p, &spawned, 1, 3, 1));
        for (k, v) in [("OXMPI_RANK", "3"), ("PMI_RANK", "1"), (ENV_WORLD_SLOTS, "7,3"), (ENV_PARENT_ROOT, "0"), (ENV_APPNUM, "1")] {
            assert!(e.contains(&(k.into(), v.into())), "{k}={v} in {e:?}");
        }
    }
}
