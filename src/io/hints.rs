//! The hints of an open file (MPI 4.1 section 14.2.8), kept and reported as ROMIO does: the
//! collective-buffering and data-sieving hints are parsed into [`Hints`], which hands the
//! collective transfer its [`CbHints`]; keys oxmpi does not interpret are ignored, as the
//! standard allows, and not reported back.
use crate::info::Info;

pub use super::cb_hints::{CbHints, CbMode};

/// The hints of one open file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hints {
    /// Collective buffering (`cb_buffer_size`, `cb_nodes`, `romio_cb_read/write`); its `nodes` is
    /// 0 (automatic) until the application sets `cb_nodes`.
    pub cb: CbHints,
    /// `romio_ds_read`, `romio_ds_write`: whether independent accesses use data sieving.
    pub ds_read: CbMode,
    pub ds_write: CbMode,
    /// Data-sieving buffer sizes (ROMIO's `ind_rd_buffer_size`, `ind_wr_buffer_size`).
    pub ind_rd_buffer_size: usize,
    pub ind_wr_buffer_size: usize,
    /// Striping asked for at creation (kept and reported; POSIX files are not striped).
    pub striping_factor: Option<usize>,
    pub striping_unit: Option<usize>,
}

/// ROMIO's defaults (ind_rd 4 MiB, ind_wr 512 KiB; cb_buffer_size is `CbHints`').
const IND_RD_BUFFER_SIZE: usize = 4 << 20;
const IND_WR_BUFFER_SIZE: usize = 512 << 10;

/// The keys `CbHints::set` takes.
const CB_KEYS: [&str; 4] = ["cb_buffer_size", "cb_nodes", "romio_cb_read", "romio_cb_write"];

impl Default for Hints {
    fn default() -> Hints {
        Hints {
            cb: CbHints::default(),
            ds_read: CbMode::Automatic,
            ds_write: CbMode::Automatic,
            ind_rd_buffer_size: IND_RD_BUFFER_SIZE,
            ind_wr_buffer_size: IND_WR_BUFFER_SIZE,
            striping_factor: None,
            striping_unit: None,
        }
    }
}

impl Hints {
    /// Applies the hints of `info` that oxmpi knows; values it cannot parse are ignored (an
    /// implementation may ignore any hint). `nprocs` bounds cb_nodes, as ROMIO's.
    pub fn apply(&mut self, info: &Info, nprocs: usize) {
        let get = |k: &str| info.get(k.as_bytes()).map(|v| String::from_utf8_lossy(v).into_owned());
        for k in CB_KEYS {
            if let Some(v) = get(k) {
                self.cb.set(k, &v);
            }
        }
        self.cb.nodes = self.cb.nodes.min(nprocs.max(1));
        let size = |k: &str| get(k).and_then(|v| v.trim().parse::<usize>().ok()).filter(|&v| v > 0);
        if let Some(v) = size("ind_rd_buffer_size") {
            self.ind_rd_buffer_size = v;
        }
        if let Some(v) = size("ind_wr_buffer_size") {
            self.ind_wr_buffer_size = v;
        }
        let mode = |k: &str| get(k).and_then(|v| CbMode::parse(&v));
        if let Some(m) = mode("romio_ds_read") {
            self.ds_read = m;
        }
        if let Some(m) = mode("romio_ds_write") {
            self.ds_write = m;
        }
        if let Some(v) = size("striping_factor") {
            self.striping_factor = Some(v);
        }
        if let Some(v) = size("striping_unit") {
            self.striping_unit = Some(v);
        }
    }

    /// The hints in use, as MPI_File_get_info reports them for a file of `nprocs` ranks (an
    /// automatic cb_nodes shows as one aggregator per rank, its upper bound).
    pub fn to_info(&self, nprocs: usize) -> Info {
        let mut i = Info::new();
        let mut put = |k: &str, v: String| i.set(k.as_bytes(), v.as_bytes());
        for (k, v) in self.cb.pairs(nprocs.max(1)) {
            put(k, v);
        }
        put("romio_ds_read", self.ds_read.name().into());
        put("romio_ds_write", self.ds_write.name().into());
        put("ind_rd_buffer_size", self.ind_rd_buffer_size.to_string());
        put("ind_wr_buffer_size", self.ind_wr_buffer_size.to_string());
        if let Some(v) = self.striping_factor {
            put("striping_factor", v.to_string());
        }
        if let Some(v) = self.striping_unit {
            put("striping_unit", v.to_string());
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_parse_and_report() {
        let mut info = Info::new();
        info.set(b"cb_buffer_size", b"1048576");
        info.set(b"cb_nodes", b"64");
        info.set(b"romio_cb_write", b"disable");
        info.set(b"romio_ds_read", b"enable");
        info.set(b"striping_factor", b"4");
        info.set(b"cb_buffer_size_bogus", b"x");
        let mut h = Hints::default();
        h.apply(&info, 4);
        assert_eq!(h.cb, CbHints { buffer_size: 1 << 20, nodes: 4, read: CbMode::Automatic, write: CbMode::Disable });
        let out = h.to_info(4);
        assert_eq!(out.get(b"cb_nodes"), Some(&b"4"[..]));
        assert_eq!(Hints::default().to_info(3).get(b"cb_nodes"), Some(&b"3"[..]));
        assert_eq!(out.get(b"romio_ds_read"), Some(&b"enable"[..]));
        assert_eq!(out.get(b"striping_factor"), Some(&b"4"[..]));
        assert_eq!(out.get(b"striping_unit"), None);
        assert_eq!(out.get(b"cb_buffer_size_bogus"), None);
    }
}
