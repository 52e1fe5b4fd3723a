//! A file view (MPI 4.1 section 14.3): displacement, etype, filetype and data representation.
//! The filetype is flattened once per view into its data blocks; `runs` tiles them to turn a
//! range of the view's data stream (the bytes the view makes visible, in order) into the file
//! byte runs that hold it.
use super::datarep::Datarep;
use crate::datatype::TypeRepr;
use crate::error::{err, ErrorClass, MpiResult};
use std::sync::Arc;

pub struct View {
    /// Absolute byte offset where the view starts.
    pub disp: u64,
    pub etype: Arc<TypeRepr>,
    pub filetype: Arc<TypeRepr>,
    pub datarep: Datarep,
    /// The filetype's data blocks (offset from the tile's start, length), in typemap order.
    blocks: Vec<(u64, u64)>,
    /// Data bytes before each block within one tile.
    prefix: Vec<u64>,
    /// Data bytes of one filetype (one tile) in the file.
    tile: u64,
    /// Bytes of one etype in the file.
    esize: u64,
    /// The filetype's extent: tiles are this far apart.
    extent: u64,
}

impl View {
    /// The view of a newly opened file: displacement 0, etype and filetype MPI_BYTE, native.
    pub fn bytes(byte: Arc<TypeRepr>) -> View {
        View::new(0, byte.clone(), byte, Datarep::Native).expect("MPI_BYTE is a valid view")
    }

    /// Checks and flattens a view (MPI_File_set_view's rules): committed types, an etype with
    /// data, a filetype made of whole etypes, non-negative and non-decreasing displacements.
    /// The filetype is flattened as the representation lays it out in the file (`file_type`).
    pub fn new(disp: u64, etype: Arc<TypeRepr>, filetype: Arc<TypeRepr>, datarep: Datarep) -> MpiResult<View> {
        if !etype.is_committed() || !filetype.is_committed() {
            return Err(err(ErrorClass::Type, "the etype and the filetype must be committed (MPI_Type_commit)"));
        }
        datarep.check_view(&etype, &filetype)?;
        let in_file = datarep.file_type(&filetype)?;
        let esize = datarep.file_size(&etype, 1)?;
        let (el, fl) = (&etype.layout, &in_file.layout);
        if el.size == 0 {
            return Err(err(ErrorClass::Type, "the etype has no data (size 0)"));
        }
        if fl.size == 0 || fl.extent() <= 0 {
            return Err(err(ErrorClass::Type, "the filetype has no data or a non-positive extent, so the view would show nothing"));
        }
        if fl.size as u64 % esize != 0 {
            return Err(err(ErrorClass::Type, format!("the filetype ({} bytes of data in the file) is not made of whole etypes ({} bytes)", fl.size, esize)));
        }
        let mut blocks: Vec<(u64, u64)> = Vec::new();
        let mut prefix = Vec::new();
        let mut at = 0u64;
        for (off, len) in fl.blocks.iter() {
            if len == 0 {
                continue;
            }
            if off < 0 {
                return Err(err(ErrorClass::Type, format!("the filetype has a negative displacement ({off}): a view's displacements must be non-negative")));
            }
            let off = off as u64;
            if let Some(&(po, pl)) = blocks.last() {
                if off < po {
                    return Err(err(ErrorClass::Type, "the filetype's displacements decrease: a view's filetype must have monotonically non-decreasing displacements"));
                }
                if po + pl == off {
                    blocks.last_mut().unwrap().1 += len as u64;
                    at += len as u64;
                    continue;
                }
            }
            prefix.push(at);
            blocks.push((off, len as u64));
            at += len as u64;
        }
        let extent = fl.extent() as u64;
        Ok(View { disp, tile: at, esize, extent, blocks, prefix, etype, filetype, datarep })
    }

    /// Bytes of one etype in the file.
    pub fn etype_size(&self) -> u64 {
        self.esize
    }

    /// Whether the view shows the file as it is (no holes from the displacement on).
    pub fn is_contiguous(&self) -> bool {
        self.blocks.len() == 1 && self.blocks[0] == (0, self.extent)
    }

    /// The file byte runs `(offset, len)` holding the data stream's bytes `[start, start + len)`,
    /// in stream order, adjacent runs merged.
    pub fn runs(&self, start: u64, len: u64) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        if len == 0 {
            return out;
        }
        // A view without holes (the default byte view, or etype = filetype) is one run.
        if self.is_contiguous() {
            out.push((self.disp + start, len));
            return out;
        }
        let mut k = start / self.tile;
        let r = start % self.tile;
        let mut i = self.prefix.partition_point(|&p| p <= r) - 1;
        let mut into = r - self.prefix[i];
        let mut left = len;
        while left > 0 {
            let (off, bl) = self.blocks[i];
            let n = (bl - into).min(left);
            let at = self.disp + k * self.extent + off + into;
            match out.last_mut() {
                Some(last) if last.0 + last.1 == at => last.1 += n,
                _ => out.push((at, n)),
            }
            left -= n;
            into = 0;
            i += 1;
            if i == self.blocks.len() {
                i = 0;
                k += 1;
            }
        }
        out
    }

    /// The absolute byte offset of the view's etype `pos` (MPI_File_get_byte_offset).
    pub fn byte_offset(&self, pos: u64) -> u64 {
        let b = pos * self.etype_size();
        let (k, r) = (b / self.tile, b % self.tile);
        let i = self.prefix.partition_point(|&p| p <= r) - 1;
        self.disp + k * self.extent + self.blocks[i].0 + (r - self.prefix[i])
    }

    /// The view position (in etypes) of the first etype at or after absolute byte `off` (the
    /// end of file in etypes, for MPI_SEEK_END): whole tiles and blocks before `off` counted.
    pub fn position_of(&self, off: u64) -> u64 {
        if off <= self.disp {
            return 0;
        }
        let rel = off - self.disp;
        let (k, r) = (rel / self.extent, rel % self.extent);
        let mut data = k * self.tile;
        for (&(o, l), &p) in self.blocks.iter().zip(&self.prefix) {
            if r >= o + l {
                data = k * self.tile + p + l;
            } else if r > o {
                data = k * self.tile + p + (r - o);
            }
        }
        data.div_ceil(self.etype_size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{vector, LeafKind};

    fn int() -> Arc<TypeRepr> {
        Arc::new(TypeRepr::leaf(1, LeafKind::Data, &[(0, 4)], 4, 4, "MPI_INT"))
    }

    #[test]
    fn strided_view_maps_to_runs() {
        let ft = Arc::new(vector(2, 1, 3, &int()).unwrap());
        ft.commit();
        // Tiles of extent 16 bytes (blocks at 0 and 12: the vector's extent is (1*3+1)*4 = 16).
        let v = View::new(100, int(), ft, Datarep::Native).unwrap();
        assert_eq!(v.runs(0, 8), vec![(100, 4), (112, 4)]);
        // The tiles of a vector whose last block ends its extent touch: runs merge.
        assert_eq!(v.runs(4, 8), vec![(112, 8)]);
        assert_eq!(v.runs(2, 3), vec![(102, 2), (112, 1)]);
        assert_eq!(v.byte_offset(3), 128);
        assert_eq!(v.position_of(113), 2);
        assert_eq!(v.position_of(100), 0);
        let bytes = View::new(7, int(), int(), Datarep::Native).unwrap();
        assert!(bytes.is_contiguous());
        assert_eq!(bytes.runs(5, 1 << 30), vec![(12, 1 << 30)]);
    }
}
