//! Applications' data representations (MPI 4.1 section 14.5.3): MPI_Register_datarep(_c), and
//! the same registration for the other C ABIs (Open MPI's, the MPI-5 standard's: their datatype
//! handles and error codes) and the Fortran bindings (`mpif.h`/`use mpi`, `mpi_f08`, Open MPI's
//! `libmpi_mpifh.so.40`). Each registration's conversion and extent functions become an
//! `io::datarep::Conversion` that calls them in their own calling convention: C (handles and
//! counts by value, the error returned) or Fortran (every argument by reference but the buffers,
//! which are addresses in both `mpif.h`'s `<TYPE> USERBUF(*)` and `mpi_f08`'s
//! `TYPE(C_PTR), VALUE`; the error in IERROR; the datatype as the binding's INTEGER handle).
use crate::abi::*;
use crate::datatype::TypeRepr;
use crate::error::{err, MpiResult};
use crate::export;
use crate::ffi::check;
use crate::ffi::pointer_args::c_str;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

/// The IERROR that the Fortran `MPI_CONVERSION_FN_NULL` (and `mpi_f08`'s `_C` one) sets: called
/// in place of a conversion function, it tells the trampoline to store the data unconverted.
/// Recognised by this code rather than by address, so that any of the procedure's names (and
/// Open MPI's, reached through a jump in `libmpi_mpifh.so.40`) works.
pub const CONVERSION_FN_NULL_CODE: c_int = 0x4e55_4c4c; // "NULL"

/// `SUBROUTINE CONV(USERBUF, DATATYPE, COUNT, FILEBUF, POSITION, EXTRA_STATE, IERROR)`, COUNT an
/// INTEGER (`large`: INTEGER(KIND=MPI_COUNT_KIND), `mpi_f08`'s `MPI_Datarep_conversion_function_c`).
type FortranConversion = unsafe extern "C" fn(*mut c_void, *const MPI_Fint, *const c_void, *mut c_void, *const MPI_Offset, *const MPI_Aint, *mut MPI_Fint);
/// `SUBROUTINE EXTENT(DATATYPE, EXTENT, EXTRA_STATE, IERROR)`.
type FortranExtent = unsafe extern "C" fn(*const MPI_Fint, *mut MPI_Aint, *const MPI_Aint, *mut MPI_Fint);

/// How a Fortran binding's callbacks see handles and report errors.
#[derive(Clone, Copy)]
pub struct FortranAbi {
    /// The binding's INTEGER handle of an MPICH-ABI datatype.
    pub dtype: fn(MPI_Datatype) -> MPI_Fint,
    /// A callback's IERROR as an MPICH-ABI error code.
    pub code_in: fn(c_int) -> c_int,
}

/// How another C ABI's callbacks see datatypes (pointers) and report errors.
#[derive(Clone, Copy)]
pub struct CAbi {
    /// The ABI's handle of an MPICH-ABI datatype.
    pub dtype: fn(MPI_Datatype) -> *mut c_void,
    /// A callback's return code as an MPICH-ABI error code.
    pub code_in: fn(c_int) -> c_int,
}
/// `MPI_Datarep_conversion_function(_c)` and `MPI_Datarep_extent_function` of a pointer-handle ABI.
type AbiConversion = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, *mut c_void, MPI_Offset, *mut c_void) -> c_int;
type AbiConversionC = unsafe extern "C" fn(*mut c_void, *mut c_void, MPI_Count, *mut c_void, MPI_Offset, *mut c_void) -> c_int;
type AbiExtent = unsafe extern "C" fn(*mut c_void, *mut MPI_Aint, *mut c_void) -> c_int;

/// The MPICH-ABI Fortran bindings: handles and codes are the C ones.
pub const MPICH_FORTRAN: FortranAbi = FortranAbi { dtype: |h| h, code_in: |c| c };

/// The calling convention of a registration's functions.
#[derive(Clone, Copy)]
enum Form {
    /// MPI_Register_datarep: `MPI_Datarep_conversion_function` (int count).
    C,
    /// MPI_Register_datarep_c: `MPI_Datarep_conversion_function_c` (MPI_Count count).
    CLarge,
    /// Another C ABI's; `large` for MPI_Count counts.
    CAbi { large: bool, abi: CAbi },
    /// A Fortran binding; `large` for INTEGER(KIND=MPI_COUNT_KIND) counts.
    Fortran { large: bool, abi: FortranAbi },
}

/// The conversion and extent functions of an application's data representation, kept opaque
/// until called in their `form`.
struct UserConversion {
    read: Option<unsafe extern "C" fn()>,
    write: Option<unsafe extern "C" fn()>,
    extent: unsafe extern "C" fn(),
    /// The C `void *` or the Fortran INTEGER(KIND=MPI_ADDRESS_KIND).
    extra: usize,
    form: Form,
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

/// An application callback's return code (MPICH ABI) as a result.
fn callback(what: &str, rc: c_int) -> MpiResult {
    if rc == MPI_SUCCESS {
        return Ok(());
    }
    let class = crate::ffi::error_codes::class_of(rc).unwrap_or(MPI_ERR_OTHER);
    Err(err(class, format!("the data representation's {what} function returned error code {rc}")))
}

impl UserConversion {
    /// Calls a conversion function: (userbuf, datatype, count, filebuf, position, extra_state).
    /// False if it was the Fortran MPI_CONVERSION_FN_NULL (nothing converted).
    ///
    /// # Safety
    /// `f` is the application's conversion function of this registration's form; the buffers
    /// hold `count` elements of `dt` (memory) and their file bytes.
    unsafe fn call(&self, f: unsafe extern "C" fn(), user: *mut u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<bool> {
        let h = check::handle_for(dt);
        let int_count = || c_int::try_from(count).map_err(|_| err(MPI_ERR_COUNT, "the count does not fit the int (INTEGER) count of the conversion function (register it with the _c form)"));
        let (user, filep, pos) = (user as *mut c_void, file.as_mut_ptr() as *mut c_void, position as MPI_Offset);
        let rc = match self.form {
            Form::CLarge => {
                // SAFETY: registered through MPI_Register_datarep_c with this type.
                let f: MPI_Datarep_conversion_function_c = unsafe { std::mem::transmute(f) };
                // SAFETY: the application's function, with the arguments the standard specifies.
                unsafe { f(user, h, count as MPI_Count, filep, pos, self.extra as *mut c_void) }
            }
            Form::C => {
                let n = int_count()?;
                // SAFETY: registered through MPI_Register_datarep with this type.
                let f: MPI_Datarep_conversion_function = unsafe { std::mem::transmute(f) };
                // SAFETY: as above.
                unsafe { f(user, h, n, filep, pos, self.extra as *mut c_void) }
            }
            Form::CAbi { large: true, abi } => {
                // SAFETY: registered through the ABI's MPI_Register_datarep_c with this type.
                let f: AbiConversionC = unsafe { std::mem::transmute(f) };
                // SAFETY: the application's function, with the arguments the standard specifies.
                (abi.code_in)(unsafe { f(user, (abi.dtype)(h), count as MPI_Count, filep, pos, self.extra as *mut c_void) })
            }
            Form::CAbi { large: false, abi } => {
                let n = int_count()?;
                // SAFETY: registered through the ABI's MPI_Register_datarep with this type.
                let f: AbiConversion = unsafe { std::mem::transmute(f) };
                // SAFETY: as above.
                (abi.code_in)(unsafe { f(user, (abi.dtype)(h), n, filep, pos, self.extra as *mut c_void) })
            }
            Form::Fortran { large, abi } => {
                // SAFETY: registered through a Fortran binding with this subroutine interface.
                let f: FortranConversion = unsafe { std::mem::transmute(f) };
                let (fh, extra) = ((abi.dtype)(h), self.extra as MPI_Aint);
                let (big, small) = (count as MPI_Count, if large { 0 } else { int_count()? });
                let n = if large { &big as *const MPI_Count as *const c_void } else { &small as *const c_int as *const c_void };
                let mut ierr: MPI_Fint = MPI_SUCCESS;
                // SAFETY: by-reference arguments to locals that outlive the call; the buffers as
                // for C.
                unsafe { f(user, &fh, n, filep, &pos, &extra, &mut ierr) };
                if ierr == CONVERSION_FN_NULL_CODE {
                    return Ok(false);
                }
                (abi.code_in)(ierr)
            }
        };
        callback("conversion", rc)?;
        Ok(true)
    }
}

impl crate::io::datarep::Conversion for UserConversion {
    fn file_size(&self, dt: &Arc<TypeRepr>, count: usize) -> MpiResult<u64> {
        let l = &dt.layout;
        if l.size == 0 {
            return Ok(0);
        }
        let leaf = single_leaf(dt).ok_or_else(|| err(MPI_ERR_UNSUPPORTED_DATAREP, "oxmpi's user data representations convert types made of one predefined type only"))?;
        let mut ext: MPI_Aint = 0;
        let h = check::handle_for(&leaf);
        let rc = match self.form {
            Form::C | Form::CLarge => {
                // SAFETY: registered as an MPI_Datarep_extent_function (both C forms).
                let f: MPI_Datarep_extent_function = unsafe { std::mem::transmute(self.extent) };
                // SAFETY: the application's extent function, called with a predefined type.
                unsafe { f(h, &mut ext, self.extra as *mut c_void) }
            }
            Form::CAbi { abi, .. } => {
                // SAFETY: registered as the ABI's MPI_Datarep_extent_function.
                let f: AbiExtent = unsafe { std::mem::transmute(self.extent) };
                // SAFETY: the application's extent function, called with a predefined type.
                (abi.code_in)(unsafe { f((abi.dtype)(h), &mut ext, self.extra as *mut c_void) })
            }
            Form::Fortran { abi, .. } => {
                // SAFETY: registered through a Fortran binding with this subroutine interface.
                let f: FortranExtent = unsafe { std::mem::transmute(self.extent) };
                let (fh, extra, mut ierr) = ((abi.dtype)(h), self.extra as MPI_Aint, MPI_SUCCESS);
                // SAFETY: by-reference arguments to locals that outlive the call.
                unsafe { f(&fh, &mut ext, &extra, &mut ierr) };
                (abi.code_in)(ierr)
            }
        };
        callback("extent", rc)?;
        Ok((l.size / leaf.layout.size) as u64 * ext.max(0) as u64 * count as u64)
    }
    unsafe fn write(&self, user: *const u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<bool> {
        let Some(f) = self.write else { return Ok(false) };
        // SAFETY: per the trait's contract.
        unsafe { self.call(f, user as *mut u8, dt, count, file, position) }
    }
    unsafe fn read(&self, user: *mut u8, dt: &Arc<TypeRepr>, count: usize, file: &mut [u8], position: u64) -> MpiResult<bool> {
        let Some(f) = self.read else { return Ok(false) };
        // SAFETY: per the trait's contract.
        unsafe { self.call(f, user, dt, count, file, position) }
    }
}

/// Registers `name` with the functions of `conv` for the calling rank.
fn register(name: &str, conv: UserConversion) -> MpiResult {
    let u = check::universe()?;
    if name.is_empty() || name.len() >= MPI_MAX_DATAREP_STRING {
        return Err(err(MPI_ERR_ARG, format!("invalid data representation name {name:?} (empty, or {MPI_MAX_DATAREP_STRING} characters or more)")));
    }
    crate::io::datarep::register(u.rank, name, Arc::new(conv))
}

/// The C forms: NULL conversion functions mean none (MPI_CONVERSION_FN_NULL is NULL in C).
///
/// # Safety
/// `datarep` must be NULL or a NUL-terminated string; the functions of the form `form`.
unsafe fn register_c(datarep: *const c_char, read: Option<unsafe extern "C" fn()>, write: Option<unsafe extern "C" fn()>, extent: Option<MPI_Datarep_extent_function>, extra: *mut c_void, form: Form) -> MpiResult {
    // SAFETY: per this function's contract; NULL is checked.
    let name = unsafe { c_str(datarep, "datarep")? }.to_string_lossy().into_owned();
    let extent = extent.ok_or_else(|| err(MPI_ERR_ARG, "dtype_file_extent_fn is NULL"))?;
    // SAFETY: kept opaque until called as an MPI_Datarep_extent_function (`file_size`).
    let extent = unsafe { std::mem::transmute::<MPI_Datarep_extent_function, unsafe extern "C" fn()>(extent) };
    register(&name, UserConversion { read, write, extent, extra: extra as usize, form })
}

/// MPI_Register_datarep(_c) of another C ABI (`large`: the `_c` form): the functions are that
/// ABI's (NULL conversion functions are MPI_CONVERSION_FN_NULL). Errors go to MPI_FILE_NULL's
/// handler; returns the MPICH-ABI code.
///
/// # Safety
/// `datarep` must be NULL or a NUL-terminated string; the functions of the ABI's types.
pub unsafe fn register_c_abi(datarep: *const c_char, read: *const c_void, write: *const c_void, extent: *const c_void, extra: *mut c_void, large: bool, abi: CAbi) -> c_int {
    let f = move || -> MpiResult {
        // SAFETY: code addresses (caller contract), kept opaque until called in their form.
        let fun = |p: *const c_void| (!p.is_null()).then(|| unsafe { std::mem::transmute::<*const c_void, unsafe extern "C" fn()>(p) });
        // SAFETY: per this function's contract; NULL is checked.
        let name = unsafe { c_str(datarep, "datarep")? }.to_string_lossy().into_owned();
        let extent = fun(extent).ok_or_else(|| err(MPI_ERR_ARG, "dtype_file_extent_fn is NULL"))?;
        register(&name, UserConversion { read: fun(read), write: fun(write), extent, extra: extra as usize, form: Form::CAbi { large, abi } })
    };
    crate::ffi::boundary::run(f, |e| crate::ffi::io::raise_file("MPI_Register_datarep", std::ptr::null_mut(), e))
}

/// MPI_REGISTER_DATAREP (and `mpi_f08`'s `MPI_Register_datarep(_c)`) of a Fortran binding: the
/// subroutines are the caller's EXTERNALs (the Fortran MPI_CONVERSION_FN_NULL among them, which
/// a call recognises), `extra` its INTEGER(KIND=MPI_ADDRESS_KIND). Errors go to MPI_FILE_NULL's
/// handler, as the C function's; returns the MPICH-ABI code.
///
/// # Safety
/// The three pointers are subroutines with the interfaces above (`large`: the `_c` conversion
/// interface) of the calling rank's program.
pub unsafe fn register_fortran(name: &str, read: *const c_void, write: *const c_void, extent: *const c_void, extra: MPI_Aint, large: bool, abi: FortranAbi) -> c_int {
    let f = move || -> MpiResult {
        // SAFETY: code addresses (caller contract), kept opaque until called in their form.
        let fun = |p: *const c_void| (!p.is_null()).then(|| unsafe { std::mem::transmute::<*const c_void, unsafe extern "C" fn()>(p) });
        let extent = fun(extent).ok_or_else(|| err(MPI_ERR_ARG, "DTYPE_FILE_EXTENT_FN is no procedure"))?;
        register(name, UserConversion { read: fun(read), write: fun(write), extent, extra: extra as usize, form: Form::Fortran { large, abi } })
    };
    crate::ffi::boundary::run(f, |e| crate::ffi::io::raise_file("MPI_Register_datarep", std::ptr::null_mut(), e))
}

export! {
    fn MPI_Register_datarep / PMPI_Register_datarep (datarep: *const c_char, read_conversion_fn: Option<MPI_Datarep_conversion_function>, write_conversion_fn: Option<MPI_Datarep_conversion_function>, dtype_file_extent_fn: Option<MPI_Datarep_extent_function>, extra_state: *mut c_void) on file std::ptr::null_mut() => {
        // SAFETY: function pointers kept opaque until called in their own type (Form::C).
        let (r, w) = unsafe { (read_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function, unsafe extern "C" fn()>(f)), write_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function, unsafe extern "C" fn()>(f))) };
        // SAFETY: per the caller's contract.
        unsafe { register_c(datarep, r, w, dtype_file_extent_fn, extra_state, Form::C) }
    }
    fn MPI_Register_datarep_c / PMPI_Register_datarep_c (datarep: *const c_char, read_conversion_fn: Option<MPI_Datarep_conversion_function_c>, write_conversion_fn: Option<MPI_Datarep_conversion_function_c>, dtype_file_extent_fn: Option<MPI_Datarep_extent_function>, extra_state: *mut c_void) on file std::ptr::null_mut() => {
        // SAFETY: function pointers kept opaque until called in their own type (Form::CLarge).
        let (r, w) = unsafe { (read_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function_c, unsafe extern "C" fn()>(f)), write_conversion_fn.map(|f| std::mem::transmute::<MPI_Datarep_conversion_function_c, unsafe extern "C" fn()>(f))) };
        // SAFETY: per the caller's contract.
        unsafe { register_c(datarep, r, w, dtype_file_extent_fn, extra_state, Form::CLarge) }
    }
}
