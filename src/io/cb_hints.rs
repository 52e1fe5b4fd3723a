//! The collective-buffering hints (ROMIO's names, MPI 4.1 section 14.2.8): how large the
//! aggregators' buffers are, how many aggregators there are, and whether collective reads and
//! writes go through two-phase I/O (`two_phase`).
//!
//! Defaults, and why:
//! * `cb_buffer_size` 16 MiB, as ROMIO's.
//! * `cb_nodes` 0 = automatic. ROMIO's default is one aggregator per node; every oxmpi job is on
//!   one node, where one aggregator would serialise all file traffic through one core. Automatic
//!   picks one aggregator per `cb_buffer_size` bytes of the collective's file extent, at least
//!   one and at most every rank (as OMPIO's dynamic aggregator count: each aggregator gets about
//!   a buffer's worth, so a call finishes in about one round). Every rank computes it from the
//!   same allgathered extents, so they agree.
//! * `romio_cb_read`/`romio_cb_write` automatic, as ROMIO's: two-phase when the ranks' accesses
//!   interleave, independent access otherwise.

/// Whether a collective access uses two-phase I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbMode {
    Enable,
    Disable,
    /// Two-phase only when the accesses of different ranks interleave (ROMIO's rule).
    Automatic,
}

/// The collective-buffering hints of an open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbHints {
    /// Bytes of each aggregator's buffer: the largest file access of one round (`cb_buffer_size`).
    pub buffer_size: usize,
    /// Number of aggregators (`cb_nodes`); 0: automatic (see the module's notes).
    pub nodes: usize,
    /// `romio_cb_read`.
    pub read: CbMode,
    /// `romio_cb_write`.
    pub write: CbMode,
}

/// ROMIO's default `cb_buffer_size`.
pub const DEFAULT_BUFFER_SIZE: usize = 16 << 20;

impl Default for CbHints {
    fn default() -> Self {
        CbHints { buffer_size: DEFAULT_BUFFER_SIZE, nodes: 0, read: CbMode::Automatic, write: CbMode::Automatic }
    }
}

impl CbMode {
    /// ROMIO's spellings `enable`, `disable`, `automatic`, in any case; `true`/`false` as
    /// enable/disable.
    pub fn parse(s: &str) -> Option<CbMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "enable" | "true" => Some(CbMode::Enable),
            "disable" | "false" => Some(CbMode::Disable),
            "automatic" => Some(CbMode::Automatic),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CbMode::Enable => "enable",
            CbMode::Disable => "disable",
            CbMode::Automatic => "automatic",
        }
    }
}

impl CbHints {
    /// Takes hint `key` = `value` if it is one of these hints with a valid value; returns whether
    /// it was taken (invalid values are ignored, as ROMIO ignores them).
    pub fn set(&mut self, key: &str, value: &str) -> bool {
        match key {
            "cb_buffer_size" => match value.trim().parse::<usize>() {
                Ok(v) if v > 0 => self.buffer_size = v,
                _ => return false,
            },
            "cb_nodes" => match value.trim().parse::<usize>() {
                Ok(v) if v > 0 => self.nodes = v,
                _ => return false,
            },
            "romio_cb_read" => match CbMode::parse(value) {
                Some(m) => self.read = m,
                None => return false,
            },
            "romio_cb_write" => match CbMode::parse(value) {
                Some(m) => self.write = m,
                None => return false,
            },
            _ => return false,
        }
        true
    }

    /// The hints as (key, value) pairs, as MPI_File_get_info reports them; `ranks` resolves an
    /// automatic `cb_nodes` for display (the communicator's size).
    pub fn pairs(&self, ranks: usize) -> Vec<(&'static str, String)> {
        let nodes = if self.nodes == 0 { ranks } else { self.nodes.min(ranks) };
        vec![
            ("cb_buffer_size", self.buffer_size.to_string()),
            ("cb_nodes", nodes.to_string()),
            ("romio_cb_read", self.read.name().to_string()),
            ("romio_cb_write", self.write.name().to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_parsing() {
        let mut h = CbHints::default();
        assert_eq!(h.buffer_size, 16 << 20);
        assert_eq!((h.nodes, h.read, h.write), (0, CbMode::Automatic, CbMode::Automatic));
        assert!(h.set("cb_buffer_size", "4096"));
        assert!(h.set("cb_nodes", " 3"));
        assert!(h.set("romio_cb_write", "disable"));
        assert!(h.set("romio_cb_read", "enable"));
        assert!(!h.set("cb_buffer_size", "0"));
        assert!(!h.set("cb_nodes", "-1"));
        assert!(!h.set("romio_cb_read", "sometimes"));
        assert_eq!(CbMode::parse(" ENABLE "), Some(CbMode::Enable));
        assert_eq!(CbMode::parse("false"), Some(CbMode::Disable));
        assert!(!h.set("striping_unit", "65536"));
        assert_eq!(h, CbHints { buffer_size: 4096, nodes: 3, read: CbMode::Enable, write: CbMode::Disable });
        assert_eq!(h.pairs(2)[1], ("cb_nodes", "2".to_string()));
    }
}
