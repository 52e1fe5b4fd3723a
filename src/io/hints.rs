//! The hints of an open file (MPI 4.1 section 14.2.8), kept and reported as ROMIO does: the
//! collective-buffering and data-sieving hints are parsed into [`Hints`], which hands the
//! collective transfer its [`CbHints`]; keys oxmpi does not interpret are ignored, as the
//! standard allows, and not reported back.
use crate::info::Info;

pub use super::cb_hints::{CbHints, CbMode};

/// The hints of one open file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hints {
    pub cb_buffer_size: usize,
    pub cb_nodes: usize,
    pub cb_read: CbMode,
    pub cb_write: CbMode,
    pub ds_read: CbMode,
    pub ds_write: CbMode,
    /// Data-sieving buffer sizes (ROMIO's `ind_rd_buffer_size`, `ind_wr_buffer_size`).
    pub ind_rd_buffer_size: usize,
    pub ind_wr_buffer_size: usize,
    /// Striping asked for at creation (kept and reported; POSIX files are not striped).
    pub striping_factor: Option<usize>,
    pub striping_unit: Option<usize>,
    /// The application chose `cb_nodes` (else collective buffering picks the aggregators).
    pub cb_nodes_given: bool,
}

/// ROMIO's defaults (cb_buffer_size 16 MiB, ind_rd 4 MiB, ind_wr 512 KiB).
const CB_BUFFER_SIZE: usize = 16 << 20;
const IND_RD_BUFFER_SIZE: usize = 4 << 20;
const IND_WR_BUFFER_SIZE: usize = 512 << 10;

impl Hints {
    /// The defaults of a file opened by `nprocs` ranks (one aggregator per rank, as ROMIO on one
    /// node with `cb_config_list *:*`).
    pub fn new(nprocs: usize) -> Hints {
        Hints {
            cb_buffer_size: CB_BUFFER_SIZE,
            cb_nodes: nprocs.max(1),
            cb_read: CbMode::Automatic,
            cb_write: CbMode::Automatic,
            ds_read: CbMode::Automatic,
            ds_write: CbMode::Automatic,
            ind_rd_buffer_size: IND_RD_BUFFER_SIZE,
            ind_wr_buffer_size: IND_WR_BUFFER_SIZE,
            striping_factor: None,
            striping_unit: None,
            cb_nodes_given: false,
        }
    }

    /// Applies the hints of `info` that oxmpi knows; values it cannot parse are ignored (an
    /// implementation may ignore any hint). `nprocs` bounds cb_nodes, as ROMIO's.
    pub fn apply(&mut self, info: &Info, nprocs: usize) {
        let get = |k: &str| info.get(k.as_bytes()).map(|v| String::from_utf8_lossy(v).into_owned());
        let size = |k: &str| get(k).and_then(|v| v.trim().parse::<usize>().ok()).filter(|&v| v > 0);
        if let Some(v) = size("cb_buffer_size") {
            self.cb_buffer_size = v;
        }
        if let Some(v) = size("cb_nodes") {
            self.cb_nodes = v.min(nprocs.max(1));
            self.cb_nodes_given = true;
        }
        if let Some(v) = size("ind_rd_buffer_size") {
            self.ind_rd_buffer_size = v;
        }
        if let Some(v) = size("ind_wr_buffer_size") {
            self.ind_wr_buffer_size = v;
        }
        let mode = |k: &str| get(k).and_then(|v| CbMode::parse(&v));
        if let Some(m) = mode("romio_cb_read") {
            self.cb_read = m;
        }
        if let Some(m) = mode("romio_cb_write") {
            self.cb_write = m;
        }
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

    /// The hints in use, as MPI_File_get_info reports them.
    pub fn to_info(&self) -> Info {
        let mut i = Info::new();
        let mut put = |k: &str, v: String| i.set(k.as_bytes(), v.as_bytes());
        put("cb_buffer_size", self.cb_buffer_size.to_string());
        put("romio_cb_read", self.cb_read.name().into());
        put("romio_cb_write", self.cb_write.name().into());
        put("cb_nodes", self.cb_nodes.to_string());
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

    /// What the collective transfer needs.
    pub fn cb(&self) -> CbHints {
        // 0 aggregators: automatic (`cb_hints`), unless the application set cb_nodes.
        let nodes = if self.cb_nodes_given { self.cb_nodes } else { 0 };
        CbHints { buffer_size: self.cb_buffer_size, nodes, read: self.cb_read, write: self.cb_write }
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
        let mut h = Hints::new(4);
        h.apply(&info, 4);
        assert_eq!(h.cb(), CbHints { buffer_size: 1 << 20, nodes: 4, read: CbMode::Automatic, write: CbMode::Disable });
        let out = h.to_info();
        assert_eq!(out.get(b"romio_ds_read"), Some(&b"enable"[..]));
        assert_eq!(out.get(b"striping_factor"), Some(&b"4"[..]));
        assert_eq!(out.get(b"striping_unit"), None);
        assert_eq!(out.get(b"cb_buffer_size_bogus"), None);
    }
}
