//! MPMD jobs (`mpiexec -n 1 prog1 : -n 3 prog2`), the launcher/rank contract: the segments
//! (apps) of the command line, rank blocks in order, and each rank's MPI_APPNUM (its segment's
//! index, as hydra gives it).
//!
//! Processes mode hands a rank its segment in `OXMPI_APPNUM`; a job over nodes asks the PMI
//! server (`get_appnum`). A threads-mode host gets the whole list in `OXMPI_APPS` (`encode`,
//! `decode`): one environment variable keeps `oxmpi_threads_main`'s C signature, and the host
//! removes it before any rank starts.
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// The threads-mode host's segments (see `encode`).
pub const ENV_APPS: &str = "OXMPI_APPS";

/// One segment as a threads-mode host runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct App {
    /// Its ranks (consecutive, after the previous segment's).
    pub count: usize,
    /// The ELF file loaded (absolute).
    pub program: OsString,
    /// argv, argv[0] first (the program as the user named it).
    pub argv: Vec<OsString>,
    /// Its ranks' working directory (None: the host's).
    pub wdir: Option<OsString>,
}

/// Threads mode: the segment of each of the first world's ranks, by slot (the ranks share one
/// environment).
static THREAD_APPNUMS: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// Threads mode: records that rank `slot` of the first world runs segment `appnum`.
pub fn record(slot: usize, appnum: usize) {
    let mut v = THREAD_APPNUMS.lock().unwrap_or_else(|p| p.into_inner());
    if v.len() <= slot {
        v.resize(slot + 1, 0);
    }
    v[slot] = appnum;
}

/// MPI_APPNUM of rank `slot` (of a job of `nslots` slots) when no PMI server answers it: a
/// spawned rank's command in MPI_Comm_spawn_multiple, else its segment of mpiexec's command
/// line (0 without MPMD).
pub fn appnum(slot: usize, nslots: usize) -> usize {
    if let Ok(Some(s)) = super::spawned::of(slot, nslots) {
        return s.appnum;
    }
    if super::job::threads_job().is_some() {
        return THREAD_APPNUMS.lock().unwrap_or_else(|p| p.into_inner()).get(slot).copied().unwrap_or(0);
    }
    std::env::var(super::spawn_desk::ENV_APPNUM).ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The segment of each of `counts`' ranks, in rank order.
pub fn app_of(counts: &[usize]) -> Vec<usize> {
    counts.iter().enumerate().flat_map(|(i, &k)| std::iter::repeat_n(i, k)).collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// `OXMPI_APPS`' value: apps separated by ';', each 'COUNT,PROGRAM,WDIR,ARGV0,ARG...' with every
/// field but the count hex-encoded (arguments may hold any byte but NUL), WDIR empty for none.
pub fn encode(apps: &[App]) -> String {
    let one = |a: &App| {
        let mut f = vec![a.count.to_string(), hex(a.program.as_bytes()), a.wdir.as_ref().map(|d| hex(d.as_bytes())).unwrap_or_default()];
        f.extend(a.argv.iter().map(|w| hex(w.as_bytes())));
        f.join(",")
    };
    apps.iter().map(one).collect::<Vec<_>>().join(";")
}

/// Reads `encode`'s value; Err: one line naming what is wrong.
pub fn decode(v: &str) -> Result<Vec<App>, String> {
    let bad = || format!("{ENV_APPS} is not a list of programs written by this oxmpi's mpiexec");
    let field = |s: &str| unhex(s).map(OsString::from_vec).ok_or_else(bad);
    let mut apps = Vec::new();
    for a in v.split(';') {
        let f: Vec<&str> = a.split(',').collect();
        if f.len() < 4 {
            return Err(bad());
        }
        let count = f[0].parse::<usize>().ok().filter(|&k| k >= 1).ok_or_else(bad)?;
        let wdir = if f[2].is_empty() { None } else { Some(field(f[2])?) };
        let argv = f[3..].iter().map(|s| field(s)).collect::<Result<Vec<_>, _>>()?;
        apps.push(App { count, program: field(f[1])?, argv, wdir });
    }
    Ok(apps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let apps = vec![
            App { count: 1, program: "/a/p1".into(), argv: vec!["p1".into()], wdir: None },
            App { count: 3, program: "/b/p 2".into(), argv: vec!["./p 2".into(), "".into(), "x,y;z".into()], wdir: Some("/tmp".into()) },
        ];
        assert_eq!(decode(&encode(&apps)).unwrap(), apps);
        assert!(decode("").is_err());
        assert!(decode("0,00,,00").is_err());
        assert!(decode("1,zz,,00").is_err());
        assert!(decode("1,2f,,").unwrap()[0].argv == vec![OsString::new()]);
        assert_eq!(app_of(&[1, 3, 2]), vec![0, 1, 1, 1, 2, 2]);
    }
}
