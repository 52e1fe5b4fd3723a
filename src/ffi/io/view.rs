//! File views and data representations (MPI 4.1 sections 14.3 and 14.5): MPI_File_set_view,
//! MPI_File_get_view, MPI_File_get_byte_offset, MPI_File_get_type_extent(_c),
//! MPI_Register_datarep(_c), whose conversion functions become an `io::datarep::Conversion`.
use crate::abi::*;
use crate::datatype::TypeRepr;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check;
use crate::ffi::io::{file_of, offset};
use crate::ffi::pointer_args::{c_str, out};
use crate::io::datarep::{Conversion, Datarep};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

/// The conversion functions of an application's data representation (both the int-count and
/// the MPI_Count forms, told apart by `large`).
struct UserConversion {
    read: Option<unsafe extern "C" fn()>,
    write: Option<unsafe extern "C" fn()>,
    extent: MPI_Datarep_extent_function,
    extra: usize,
    large: bool,
}

/// The one predefined type `t` is made of, if it is made of one.
fn single_leaf(t: &Arc<TypeRepr>) -> Option<Arc<TypeRepr>> {
    if t.leaf_id.is_some() {
        return Some(t.clone());
    }
    let mut leaf: Option<Arc<TypeRepr>> = None;
    for c in &t.env.types {
        let l = single_leaf(c)?;
        match &leaf {
            Some(x) if x.leaf_id != l.leaf_id => return None,
            _ => leaf = Some(l),
        }
    }
    leaf
}

/// An application callback's return code as a result.
fn callback(what: &str, rc: c_int) -> MpiResult {
    if rc == MPI_SUCCESS {
        return Ok(());
    }
    let class = crate::ffi::error_codes::class_of(rc).unwrap_or(MPI_ERR_OTHER);
    Err(err(class, format!("the data representation's {what} function returned error code {rc}")))
}

impl UserConversion {
    /// Calls a conversion function: (userbuf, datatype, count, filebuf, position, extra_state).
    ///
    /// # Safety
    /// `f` is the application's conversion function of this representation's form; the buffers
    /// hold `count` elements of `dt` (memory) and their file bytes.
    unsafe fn call(&self, f: unsafe extern "C" fn(), user: *mut u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult {
        let h = check::handle_for(dt);
        let rc = if self.large {
            // SAFETY: registered through MPI_Register_datarep_c with this type.
            let f: MPI_Datarep_conversion_function_c = unsafe { std::mem::transmute(f) };
            // SAFETY: the application's function, with the arguments the standard specifies.
            unsafe { f(user as *mut c_void, h, count as MPI_Count, file.as_mut_ptr() as *mut c_void, position as MPI_Offset, self.extra as *mut c_void) }
        } else {
            let n = c_int::try_from(count).map_err(|_| err(MPI_ERR_COUNT, "the count does not fit the int of the conversion function (use MPI_Register_datarep_c)"))?;
            // SAFETY: registered through MPI_Register_datarep with this type.
            let f: MPI_Datarep_conversion_function = unsafe { std::mem::transmute(f) };
            // SAFETY: as above.
            unsafe { f(user as *mut c_void, h, n, file.as_mut_ptr() as *mut c_void, position as MPI_Offset, self.extra as *mut c_void) }
        };
        callback("conversion", rc)
    }
}

impl Conversion for UserConversion {
    fn file_size(&self, dt: &Arc<TypeRepr>, count: usize) -> MpiResult<u64> {
        let l = &dt.layout;
        if l.size == 0 {
            return Ok(0);
        }
        let leaf = single_leaf(dt).ok_or_else(|| err(MPI_ERR_UNSUPPORTED_DATAREP, "oxmpi's user data representations convert types made of one predefined type only"))?;
        let mut ext: MPI_Aint = 0;
        // SAFETY: the application's extent function, called with a predefined type.
        let rc = unsafe { (self.extent)(check::handle_for(&leaf), &mut ext, self.extra as *mut c_void) };
        callback("extent", rc)?;
        Ok((l.size / leaf.layout.size) as u64 * ext.max(0) as u64 * count as u64)
    }
    unsafe fn write(&self, user: *const u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<bool> {
        let Some(f) = self.write else { return Ok(false) };
        // SAFETY: per the trait's contract.
        unsafe { self.call(f, user as *mut u8, dt, count, file, position)? };
        Ok(true)
    }
    unsafe fn read(&self, user: *mut u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<bool> {
        let Some(f) = self.read else { return Ok(false) };
        // SAFETY: per the trait's contract.
        unsafe { self.call(f, user, dt, count, file, position)? };
        Ok(true)
    }
}

/// MPI_Register_datarep(_c).
///
/// # Safety
/// `datarep` must be NULL or a NUL-terminated string; the functions as the standard says.
unsafe fn register(datarep: *const c_char, read: Option<unsafe extern "C" fn()>, write: Option<unsafe extern "C" fn()>, extent: Option<MPI_Datarep_extent_function>, extra: *mut c_void, large: bool) -> MpiResult {
    let u = check::universe()?;
    // SAFETY: per this function's contract; NULL is checked.
    let name = unsafe { c_str(datarep, "datarep")? }.to_string_lossy().into_owned();
    if name.is_empty() || name.len() >= MPI_MAX_DATAREP_STRING {
        return Err(err(MPI_ERR_ARG, format!("invalid data representation name {name:?} (empty, or {MPI_MAX_DATAREP_STRING} characters or more)")));
    }
    let extent = extent.ok_or_else(|| err(MPI_ERR_ARG, "dtype_file_extent_fn is NULL"))?;
    crate::io::datarep::register(u.rank, &name, Arc::new(UserConversion { read, write, extent, extra: extra as usize, large }))
}

export! {
    fn MPI_Register_datarep / PMPI_Register_datarep (datarep: *const c_char, read_conversion_fn: Option<MPI_Datarep_conversion_function>, write_conversion_fn: Option<MPI_Datarep_conversion_function>, dtype_file_extent_fn: Option<MPI_Datarep_extent_function>, extra_state: *mut c_void) on file std::ptr::null_mut() => {
        // SAFETY: function pointers kept opaque until called in their own type (`large` false).
        let (r, w) = unsafe { (read_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function, unsafe extern "C" fn()>(f)), write_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function, unsafe extern "C" fn()>(f))) };
        // SAFETY: per the caller's contract.
        unsafe { register(datarep, r, w, dtype_file_extent_fn, extra_state, false) }
    }
    fn MPI_Register_datarep_c / PMPI_Register_datarep_c (datarep: *const c_char, read_conversion_fn: Option<MPI_Datarep_conversion_function_c>, write_conversion_fn: Option<MPI_Datarep_conversion_function_c>, dtype_file_extent_fn: Option<MPI_Datarep_extent_function>, extra_state: *mut c_void) on file std::ptr::null_mut() => {
        // SAFETY: function pointers kept opaque until called in their own type (`large` true).
        let (r, w) = unsafe { (read_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function_c, unsafe extern "C" fn()>(f)), write_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function_c, unsafe extern "C" fn()>(f))) };
        // SAFETY: per the caller's contract.
        unsafe { register(datarep, r, w, dtype_file_extent_fn, extra_state, true) }
    }

    fn MPI_File_set_view / PMPI_File_set_view (fh: MPI_File, disp: MPI_Offset, etype: MPI_Datatype, filetype: MPI_Datatype, datarep: *const c_char, info: MPI_Info) on file fh => {
        let (u, f) = file_of(fh)?;
        let disp = if disp == MPI_DISPLACEMENT_CURRENT { None } else { Some(offset(disp, "displacement")?) };
        let (e, t) = (check::dtype(etype)?, check::dtype(filetype)?);
        // SAFETY: a NUL-terminated string (caller contract); NULL is checked.
        let name = unsafe { c_str(datarep, "datarep")? }.to_string_lossy().into_owned();
        let rep = Datarep::lookup(u.rank, &name)?;
        let hints = crate::ffi::info::hints_of(info)?;
        f.hints().apply(&hints, f.comm.size());
        f.set_view(u, disp, e, t, rep)
    }

    fn MPI_File_get_view / PMPI_File_get_view (fh: MPI_File, disp: *mut MPI_Offset, etype: *mut MPI_Datatype, filetype: *mut MPI_Datatype, datarep: *mut c_char) on file fh => {
        let (_, f) = file_of(fh)?;
        let (disp, etype, filetype, datarep) = (out(disp, "disp")?, out(etype, "etype")?, out(filetype, "filetype")?, out(datarep, "datarep")?);
        let v = f.view();
        // SAFETY: all non-NULL (`out`); the caller passes the addresses of an MPI_Offset and two
        // datatype handles, and room for MPI_MAX_DATAREP_STRING characters.
        unsafe {
            *disp = v.disp as MPI_Offset;
            *etype = check::handle_for(&v.etype);
            *filetype = check::handle_for(&v.filetype);
            crate::ffi::env::init::write_cstr(datarep, MPI_MAX_DATAREP_STRING, v.datarep.name());
        }
        Ok(())
    }

    fn MPI_File_get_byte_offset / PMPI_File_get_byte_offset (fh: MPI_File, offset_: MPI_Offset, disp: *mut MPI_Offset) on file fh => {
        let (_, f) = file_of(fh)?;
        let disp = out(disp, "disp")?;
        let o = offset(offset_, "offset")?;
        let b = f.view().byte_offset(o);
        // SAFETY: non-NULL (`out`); the caller passes the address of an MPI_Offset.
        unsafe { *disp = b as MPI_Offset };
        Ok(())
    }

    fn MPI_File_get_type_extent / PMPI_File_get_type_extent (fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Aint) on file fh => {
        // SAFETY: the caller passes the address of an MPI_Aint (or NULL).
        unsafe { type_extent(fh, datatype, extent) }
    }
    fn MPI_File_get_type_extent_c / PMPI_File_get_type_extent_c (fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Count) on file fh => {
        // SAFETY: the caller passes the address of an MPI_Count (or NULL).
        unsafe { type_extent(fh, datatype, extent) }
    }
}

/// MPI_File_get_type_extent(_c): the extent of `datatype` in the file's data representation.
///
/// # Safety
/// `extent` must be NULL or writable.
unsafe fn type_extent(fh: MPI_File, datatype: MPI_Datatype, extent: *mut i64) -> MpiResult {
    let (_, f) = file_of(fh)?;
    let extent = out(extent, "extent")?;
    let t = check::dtype(datatype)?;
    let e = f.view().datarep.type_extent(&t)?;
    // SAFETY: non-NULL (`out`); writable (this function's contract).
    unsafe { *extent = e };
    Ok(())
}
