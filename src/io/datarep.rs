//! Data representations (MPI 4.1 section 14.5): `native` and `internal` (the bytes of memory),
//! `external32` (converted with `crate::datatype::external32`), and representations the
//! application registers with MPI_Register_datarep, whose conversion functions the C boundary
//! wraps as [`Conversion`]. Registrations are per rank (as per process in MPI).
use crate::datatype::{external32, Layout, TypeRepr};
use crate::error::{err, ErrorClass, MpiResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// An application's data representation (its conversion and extent functions).
pub trait Conversion: Send + Sync {
    /// Bytes `count` elements of `dt` take in the file.
    fn file_size(&self, dt: &Arc<TypeRepr>, count: usize) -> MpiResult<u64>;
    /// Converts `count` elements of `dt` at `user` into `file` (the write conversion), for the
    /// data at view position `position` (etypes); false if the representation has no write
    /// function (the data is then stored as in memory).
    ///
    /// # Safety
    /// `user` must hold `count` elements of `dt`.
    unsafe fn write(&self, user: *const u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<bool>;
    /// The read conversion from `file` into `count` elements of `dt` at `user`; false if there is
    /// no read function.
    ///
    /// # Safety
    /// `user` must have room for `count` elements of `dt`.
    unsafe fn read(&self, user: *mut u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<bool>;
}

#[derive(Clone)]
pub enum Datarep {
    Native,
    Internal,
    External32,
    User(String, Arc<dyn Conversion>),
}

/// The registered representations, by (job rank, name).
static REGISTERED: Mutex<Option<HashMap<(usize, String), Arc<dyn Conversion>>>> = Mutex::new(None);

/// MPI_Register_datarep of rank `rank`.
pub fn register(rank: usize, name: &str, conv: Arc<dyn Conversion>) -> MpiResult {
    if matches!(name, "native" | "internal" | "external32") {
        return Err(err(ErrorClass::DupDatarep, format!("data representation {name:?} is predefined")));
    }
    let mut r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    let m = r.get_or_insert_with(HashMap::new);
    if m.contains_key(&(rank, name.to_string())) {
        return Err(err(ErrorClass::DupDatarep, format!("data representation {name:?} is already registered")));
    }
    m.insert((rank, name.to_string()), conv);
    Ok(())
}

impl Datarep {
    /// The representation called `name` for rank `rank`.
    pub fn lookup(rank: usize, name: &str) -> MpiResult<Datarep> {
        match name {
            "native" => Ok(Datarep::Native),
            "internal" => Ok(Datarep::Internal),
            "external32" => Ok(Datarep::External32),
            _ => {
                let r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
                match r.as_ref().and_then(|m| m.get(&(rank, name.to_string()))) {
                    Some(c) => Ok(Datarep::User(name.to_string(), c.clone())),
                    None => Err(err(ErrorClass::UnsupportedDatarep, format!("unknown data representation {name:?}: use native, internal, external32 or one registered with MPI_Register_datarep"))),
                }
            }
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Datarep::Native => "native",
            Datarep::Internal => "internal",
            Datarep::External32 => "external32",
            Datarep::User(n, _) => n,
        }
    }

    /// Whether file bytes are memory bytes.
    pub fn is_native(&self) -> bool {
        matches!(self, Datarep::Native | Datarep::Internal)
    }

    /// Views in a user's representation keep the filetype's memory layout in the file, so its
    /// elements must be as large in the file as in memory there (external32 views lay the
    /// filetype out in the file's sizes: `file_type`).
    pub fn check_view(&self, etype: &Arc<TypeRepr>, filetype: &Arc<TypeRepr>) -> MpiResult {
        let Datarep::User(_, c) = self else { return Ok(()) };
        for t in [etype, filetype] {
            if c.file_size(t, 1)? != t.layout.size as u64 {
                return Err(err(ErrorClass::UnsupportedDatarep, format!("oxmpi supports {} views only of types that have the same size in the file as in memory", self.name())));
            }
        }
        Ok(())
    }

    /// `t` as this representation lays it out in the file (see `file_type`).
    pub fn file_type(&self, t: &Arc<TypeRepr>) -> MpiResult<Arc<TypeRepr>> {
        match self {
            Datarep::External32 => super::file_type::rebuild(t, &|leaf| ext_size(&leaf.layout)),
            _ => Ok(t.clone()),
        }
    }

    /// Bytes `count` elements of `dt` take in the file.
    pub fn file_size(&self, dt: &Arc<TypeRepr>, count: usize) -> MpiResult<u64> {
        Ok(match self {
            Datarep::Native | Datarep::Internal => (dt.layout.size * count) as u64,
            Datarep::External32 => ext_size(&dt.layout) * count as u64,
            Datarep::User(_, c) => c.file_size(dt, count)?,
        })
    }

    /// The extent of `dt` in the file (MPI_File_get_type_extent).
    pub fn type_extent(&self, dt: &Arc<TypeRepr>) -> MpiResult<i64> {
        let l = &dt.layout;
        Ok(match self {
            Datarep::Native | Datarep::Internal => l.extent(),
            Datarep::External32 => self.file_type(dt)?.layout.extent(),
            _ if l.size == 0 => l.extent(),
            _ => {
                let f = self.file_size(dt, 1)? as i64;
                l.extent() + f - l.size as i64
            }
        })
    }

    /// The file bytes of `count` elements of `dt` at `buf` (view position `position`).
    ///
    /// # Safety
    /// `buf` must hold `count` elements of `dt`.
    pub unsafe fn to_file(&self, buf: *const u8, dt: &Arc<TypeRepr>, count: usize, position: u64) -> MpiResult<Vec<u8>> {
        let l = &dt.layout;
        let mut native = vec![0u8; l.size * count];
        let pack = |native: &mut Vec<u8>| {
            // SAFETY: `buf` holds `count` elements of `dt` (this function's contract) and
            // `native` is a separate buffer of their packed size.
            unsafe { crate::datatype::copy(l, buf as *mut u8, count, native.as_mut_ptr(), native.len(), 0, true) };
        };
        match self {
            Datarep::Native | Datarep::Internal => {
                pack(&mut native);
                Ok(native)
            }
            Datarep::External32 => {
                pack(&mut native);
                let mut ext = vec![0u8; (ext_size(l) * count as u64) as usize];
                external32::convert(l.conv.runs(), count * l.conv.reps() as usize, &mut native, &mut ext, true);
                Ok(ext)
            }
            Datarep::User(_, c) => {
                let mut file = vec![0u8; c.file_size(dt, count)? as usize];
                // SAFETY: per this function's contract.
                if unsafe { c.write(buf, dt, count, &mut file, position)? } {
                    return Ok(file);
                }
                pack(&mut native);
                Ok(native)
            }
        }
    }

    /// Stores `file`, the file bytes of `count` elements of `dt`, at `buf`. Only the whole
    /// elements in `file` are stored (a read short at the end of the file); returns the memory
    /// bytes stored.
    ///
    /// # Safety
    /// `buf` must have room for `count` elements of `dt`.
    pub unsafe fn from_file(&self, buf: *mut u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<usize> {
        let l = &dt.layout;
        let unpack = |native: &mut [u8]| {
            // SAFETY: `buf` has room for `count` elements (this function's contract), `native`
            // holds at most their packed bytes, and is a separate buffer.
            unsafe { crate::datatype::copy(l, buf, count, native.as_mut_ptr(), native.len(), 0, false) }
        };
        match self {
            Datarep::Native | Datarep::Internal => Ok(unpack(file)),
            Datarep::External32 => {
                let es = ext_size(l) as usize;
                if es == 0 {
                    return Ok(0);
                }
                let whole = file.len() / es;
                let mut native = vec![0u8; whole * l.size];
                external32::convert(l.conv.runs(), whole * l.conv.reps() as usize, &mut native, &mut file[..whole * es], false);
                Ok(unpack(&mut native))
            }
            Datarep::User(_, c) => {
                let per = c.file_size(dt, 1)? as usize;
                let whole = file.len().checked_div(per).unwrap_or(0);
                // SAFETY: per this function's contract; `whole <= count`.
                if unsafe { c.read(buf, dt, whole, &mut file[..whole * per], position)? } {
                    return Ok(whole * l.size);
                }
                Ok(unpack(file))
            }
        }
    }
}

/// External32 bytes of one element of `l`.
fn ext_size(l: &Layout) -> u64 {
    external32::size_of(l.conv.runs()) * l.conv.reps()
}
