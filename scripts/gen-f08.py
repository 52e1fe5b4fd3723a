#!/usr/bin/env python3
"""Writes fortran-f08/mpi_f08.f90: the `mpi_f08` module (MPI 4.1 section 19.2) and its procedures;
fortran-f08/mpi_f08_names.ld, the linker names of those procedures; and include/mpi_sizeofs.f90,
the MPI_SIZEOF module of `use mpi`.

Sources: the MPI Forum's API description (the `pympistandard` package on PyPI: every procedure's
and callback's Fortran 2008 declaration), include/mpif.h (the constants' values, MPICH ABI) and
src/fortran/{generated,hand,dynproc,datarep}.rs (which `use mpi` bindings liboxmpi.so exports).

Design:
* Handles are BIND(C) types holding one INTEGER, MPI_VAL, equal to the `use mpi` and C handle
  (MPICH ABI); TYPE(MPI_Status) is the C status (count_lo, count_hi_and_cancelled, MPI_SOURCE,
  MPI_TAG, MPI_ERROR), as in MPICH.
* Each procedure is an external procedure with MPICH's name: `mpi_<name>_f08ts_` when it has a
  choice buffer (TYPE(*), DIMENSION(..)), else `mpi_<name>_f08_`, so MPICH-built programs find
  them. Its body calls oxmpi's `use mpi` binding (`pmpi_<name>_`, exported by liboxmpi.so) with
  the same arguments (same memory layout: a handle type is its INTEGER, a status its 5 INTEGERs,
  LOGICAL and CHARACTER as in `use mpi`, callbacks with the `use mpi` calling convention) and a
  choice buffer's address. The sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, ...)
  are variables with MPICH's names that liboxmpi.so defines and recognises
  (src/fortran/sentinels.rs), so they pass through unchanged.
* Profiling (MPI 4.1 sections 15.2.1 and 19.1.5): each procedure is written once, under its
  PMPI_ specific name (`pmpi_send_f08ts_`); the linker script mpi_f08_names.ld gives the same
  code its MPI_ name (`mpi_send_f08ts_`) and MPICH's name of the PMPI_ one (`pmpir_send_f08ts_`,
  which MPICH's own pmpi_f08 module binds, so MPICH-built programs calling PMPI_ find it). Module
  `pmpi_f08` (used by `mpi_f08`, as in MPICH) has the generic PMPI_ names. A tool that defines
  `MPI_Send_f08ts` and calls `PMPI_Send` therefore intercepts `call MPI_Send` of `use mpi_f08`
  code; the PMPI_ procedure calls the `use mpi` binding's PMPI_ name, never an MPI_ one.
* MPI_SUBARRAYS_SUPPORTED is .FALSE.: a choice buffer must be contiguous; a non-contiguous one is
  an MPI_ERR_BUFFER error raised on the call's communicator or window (else MPI_COMM_SELF).
* Not generated (a compile error for a program that uses them, never a silent wrong call): the
  large-count `_c` forms, procedures that liboxmpi.so has no `use mpi` binding for (MPI_T_*,
  the unsupported ones), and those listed in SKIP.

usage: scripts/gen-f08.py [--check] [--list-missing]
"""
import os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fortran-f08", "mpi_f08.f90")
NAMES_OUT = os.path.join(ROOT, "fortran-f08", "mpi_f08_names.ld")
SIZEOFS_OUT = os.path.join(ROOT, "include", "mpi_sizeofs.f90")

HANDLES = ["Comm", "Datatype", "Errhandler", "File", "Group", "Info", "Message", "Op", "Request",
           "Session", "Win"]
# MPICH handle kinds (bits 26..29 of a handle value) -> f08 type; 9 (keyval) stays INTEGER.
KIND_TYPES = {1: "Comm", 2: "Group", 3: "Datatype", 5: "Errhandler", 6: "Op", 7: "Info", 8: "Win",
              11: "Request", 14: "Session"}
# Hand-written below (not the mechanical pass-through), or without a meaning in f08.
SKIP = {
    "MPI_Pcontrol",          # C varargs; f08 has MPI_Pcontrol(level) only: hand-written
    "MPI_Status_f082c", "MPI_Status_c2f08",  # C functions (liboxmpi.so, src/ffi/handles.rs)
    "MPI_Sizeof", "MPI_Status_f2f08", "MPI_Status_f082f",  # in mpi_f08_types (MPICH puts them there)
}

# MPI_Sizeof's specifics (MPICH's names, in mpi_f08_types): suffix -> declaration of x, and the
# size (a constant: x may come from a caller that passes no descriptor, so it is never read).
SIZEOF_F08 = [
    ("character", "character(len=*)", "1"),
    ("logical", "logical", "storage_size(.true.) / 8"),
] + [(f"xint{b}", f"integer(kind=int{b})", f"{b // 8}") for b in (8, 16, 32, 64)] + \
    [(f"xreal{b}", f"real(kind=real{b})", f"{b // 8}") for b in (32, 64, 128)] + \
    [(f"xcomplex{b}", f"complex(kind=real{b})", f"{b // 4}") for b in (32, 64, 128)]

# `use mpi`'s MPI_SIZEOF (module mpi_sizeofs, include/mpi_sizeofs.f90): MPICH's names for the
# kinds MPICH has (a scalar and a `v` vector form each, which MPICH-built programs call), plus
# double complex and real(16). The generic takes the scalar names, declared assumed-rank so that
# arrays of any rank match; the `v` forms are there for MPICH-built programs only.
SIZEOF_MPI = [
    ("ch", "character(len=*)", "1"), ("l", "logical", "storage_size(.true.) / 8"),
    ("i1", "integer(kind=int8)", "1"), ("i2", "integer(kind=int16)", "2"), ("i", "integer", "storage_size(0) / 8"),
    ("i8", "integer(kind=int64)", "8"), ("r", "real", "storage_size(0.0) / 8"), ("d", "double precision", "storage_size(0.0d0) / 8"),
    ("r16", "real(kind=real128)", "16"), ("cx", "complex", "2 * storage_size(0.0) / 8"),
    ("dcx", "complex(kind=kind(0.0d0))", "2 * storage_size(0.0d0) / 8"), ("cx16", "complex(kind=real128)", "32"),
]
SIZEOF_MPICH_ONLY = {"r16", "dcx", "cx16"}  # no `v` form: MPICH has neither


# The IERROR of MPI_CONVERSION_FN_NULL: src/ffi/io/datarep.rs's CONVERSION_FN_NULL_CODE.
with open(os.path.join(ROOT, "src", "ffi", "io", "datarep.rs")) as _f:
    CONVERSION_FN_NULL_CODE = int(re.search(r"CONVERSION_FN_NULL_CODE: c_int = (0x[0-9a-f_]+);", _f.read()).group(1).replace("_", ""), 16)

# Procedures whose body is empty by definition: MPI_F_sync_reg only needs to be an external call
# the compiler cannot see through (MPI 4.1 section 19.1.17).
EMPTY = {"MPI_F_sync_reg"}
# oxmpi's own MPIX_ procedures (not in pympistandard), in its f08 notation.
EXTRA = [
    """MPIX_Pap_progress(comm, fraction_done, ierror)
    TYPE(MPI_Comm), INTENT(IN) :: comm
    DOUBLE PRECISION, INTENT(IN) :: fraction_done
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror""",
    """MPIX_Pap_expect(comm, seconds_until_arrival, ierror)
    TYPE(MPI_Comm), INTENT(IN) :: comm
    DOUBLE PRECISION, INTENT(IN) :: seconds_until_arrival
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror""",
]


def binding_name(name):
    """The `use mpi` binding (exported by liboxmpi.so) an f08 procedure calls."""
    return "pmpix_" + name[5:].lower() if name.startswith("MPIX_") else "pmpi_" + name[4:].lower()


def pympistandard():
    try:
        import pympistandard as std
    except ImportError:
        sys.exit("gen-f08.py needs the MPI Forum's pympistandard package: pip install pympistandard==0.2.0")
    std.use_api_version(1)
    return std


def bound_names():
    """The `use mpi` bindings liboxmpi.so exports (lower-case names without the mpi_ prefix)."""
    names = set()
    for f in ("generated.rs", "hand.rs", "dynproc.rs", "datarep.rs"):
        with open(os.path.join(ROOT, "src", "fortran", f)) as fh:
            names |= set(re.findall(r"fortran_binding!\(([a-z0-9_]+),", fh.read()))
    return names


def split_top(s):
    """Splits on commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Arg:
    def __init__(self, name, spec, attrs, dims):
        self.name, self.spec, self.attrs, self.dims = name, spec, attrs, dims

    @property
    def is_buffer(self):
        return self.spec == "TYPE(*)"

    def decl(self, impl=False):
        attrs = list(self.attrs)
        if impl and self.is_buffer:
            attrs.append("TARGET")
        return ", ".join([self.spec] + attrs) + " :: " + self.name + (self.dims or "")

    def binding_decl(self):
        """The declaration in the interface of the `use mpi` binding this argument goes to."""
        if self.is_buffer:
            return "TYPE(C_PTR), VALUE :: " + self.name
        keep = [a for a in self.attrs if not a.startswith(("INTENT", "OPTIONAL", "ASYNCHRONOUS"))]
        spec = self.spec
        if spec.startswith("CHARACTER"):
            spec = "CHARACTER(LEN=*)"
        return ", ".join([spec] + keep) + " :: " + self.name + (self.dims or "")


class Proc:
    def __init__(self, text):
        lines = [l.strip() for l in text.strip().split("\n")]
        head = lines[0]
        m = re.match(r"^(?:(.*?)\s+)?(MPIX?_\w+)\((.*)\)$", head)
        if not m:
            raise ValueError("cannot parse: " + head)
        self.result, self.name = m.group(1), m.group(2)
        order = [a.strip() for a in m.group(3).split(",") if a.strip()]
        self.uses_c = []
        args = {}
        for l in lines[1:]:
            if l.startswith("USE"):
                self.uses_c.append(l)
                continue
            decl, names = l.split("::")
            parts = split_top(decl.strip())
            spec, attrs = parts[0], parts[1:]
            for n in split_top(names):
                mm = re.match(r"^(\w+)(\(.*\))?$", n.strip())
                # A string of LEN=MPI_MAX_...: the caller's length is used (passed hidden, also by
                # MPICH-built callers), so a longer or shorter actual is filled exactly.
                sp = re.sub(r"^CHARACTER\(LEN=MPI_MAX_\w+\)", "CHARACTER(LEN=*)", spec)
                args[mm.group(1)] = Arg(mm.group(1), sp, attrs, mm.group(2))
        missing = [a for a in order if a not in args]
        if missing:
            raise ValueError(f"{self.name}: no declaration for {missing}")
        self.args = [args[a] for a in order]

    large = False
    # The `use mpi`-convention binding a large-count form calls instead of the C function.
    binding = None

    def bind_c(self, cprotos):
        """Maps the arguments to the C function's parameters (large-count forms call it directly:
        liboxmpi.so has no `use mpi` binding of them). Returns why not, or None."""
        cname = self.name if self.name.endswith("_c") else self.name + "_c"
        params = cprotos.get(cname)
        if params is None:
            return f"{cname} not implemented"
        args = [a for a in self.args if a.name != "ierror"]
        if len(args) != len(params):
            return "argument count differs from the C prototype"
        self.cname, self.cmap = cname, []
        scalar = {"int": "INTEGER(C_INT)", "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)",
                  "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)", "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)"}
        for a, (ctype, cn) in zip(args, params):
            if a.is_buffer:
                if ctype != "void*":
                    return f"{a.name}: buffer is {ctype} in C"
                self.cmap.append((a, "TYPE(C_PTR), VALUE :: " + a.name, f"oxmpi_f08_cbuf(c_loc({a.name}))"))
            elif ctype in scalar:
                if a.dims:
                    return f"{a.name}: array for a C scalar"
                if a.spec == "LOGICAL":
                    self.cmap.append((a, f"INTEGER(C_INT), VALUE :: {a.name}", f"merge(1_c_int, 0_c_int, {a.name})"))
                elif a.spec.upper().replace(" ", "") == scalar[ctype].upper() or (ctype == "int" and a.spec == "INTEGER"):
                    self.cmap.append((a, f"{scalar[ctype]}, VALUE :: {a.name}", a.name))
                else:
                    return f"{a.name}: {a.spec} for C {ctype}"
            elif ctype.startswith("MPI_") and ctype[4:] in HANDLES and not ctype.endswith(("*", "[]")):
                if a.spec != f"TYPE({ctype})" or a.dims:
                    return f"{a.name}: {a.spec} for C {ctype}"
                self.cmap.append((a, f"INTEGER(C_INT), VALUE :: {a.name}", f"{a.name}%MPI_VAL"))
            elif ctype.endswith("*") and a.spec.startswith("PROCEDURE("):
                # Same calling convention as the C callback (pointers, then the count, datatype).
                self.cmap.append((a, f"TYPE(C_FUNPTR), VALUE :: {a.name}", f"c_funloc({a.name})"))
            elif ctype.endswith(("*", "[]")) and a.spec != "LOGICAL" and not a.spec.startswith("CHARACTER"):
                base = ctype.rstrip("*[]")
                ok = {"int": ("INTEGER",), "MPI_Count": ("INTEGER(KIND=MPI_COUNT_KIND)",),
                      "MPI_Aint": ("INTEGER(KIND=MPI_ADDRESS_KIND)",), "MPI_Status": ("TYPE(MPI_Status)",),
                      "void": ("TYPE(C_PTR)",)}.get(base) or ((f"TYPE({base})",) if base[4:] in HANDLES else ())
                if a.spec not in ok:
                    return f"{a.name}: {a.spec} for C {ctype}"
                keep = [x for x in a.attrs if not x.startswith(("INTENT", "OPTIONAL", "ASYNCHRONOUS"))]
                self.cmap.append((a, ", ".join([a.spec] + keep) + " :: " + a.name + (a.dims or ""), a.name))
            else:
                return f"{a.name}: {a.spec} for C {ctype}"
        return None

    @property
    def has_buffer(self):
        return any(a.is_buffer for a in self.args)

    def specific(self, profiling=False):
        """The specific procedure name (MPICH's, `_large` for a large-count form): the PMPI_ one
        for `profiling`."""
        base = self.name[:-2] if self.name.endswith("_c") else self.name
        return ("P" if profiling else "") + base + ("_f08ts" if self.has_buffer else "_f08") + ("_large" if self.large else "")

    def supported(self):
        # A CHARACTER(LEN=*) array (MPI_Comm_spawn's argv(*), MPI_Comm_spawn_multiple's
        # array_of_commands(*) and array_of_argv(count, *)) passes through like a scalar one: the
        # element length goes as the hidden length argument, which the `use mpi` binding takes
        # (src/fortran/dynproc.rs: rows end at a blank element; MPI_ARGV(S)_NULL are sentinels).
        for a in self.args:
            if a.spec.startswith("CHARACTER") and a.dims and a.spec != "CHARACTER(LEN=*)":
                return "CHARACTER array argument of a fixed length"
        return None


def c_prototypes():
    """C functions oxmpi implements: name -> list of (type, name, is_array)."""
    with open(os.path.join(ROOT, "docs", "UNSUPPORTED.md")) as f:
        unsupported = set(re.findall(r"`(MPI_[A-Za-z0-9_]+)`", f.read()))
    with open(os.path.join(ROOT, "include", "mpi.h")) as f:
        text = f.read()
    out = {}
    for m in re.finditer(r"^int (MPI_[A-Za-z0-9_]+)\((.*)\);$", text, re.M):
        if m.group(1) in unsupported:
            continue
        params = []
        for prm in m.group(2).split(","):
            prm = prm.strip().replace("const ", "")
            mm = re.match(r"^(\w+)\s*(\**)\s*(\w+)(\[\])?$", prm)
            if not mm:
                params = None
                break
            params.append((mm.group(1) + mm.group(2) + ("[]" if mm.group(4) else ""), mm.group(3)))
        if params is not None:
            out[m.group(1)] = params
    return out


def load_procedures(std):
    bound = bound_names()
    cprotos = c_prototypes()
    procs, missing = [], []
    for key in sorted(std.PROCEDURES):
        p = std.PROCEDURES[key]
        try:
            text = str(p.express.f08)
        except Exception:
            continue
        m = re.match(r"^(?:.*?\s)?(MPI_\w+)\(", text)
        if not m:
            continue
        name = m.group(1)
        if not name.startswith("MPI_") or name.startswith("MPI_T_") or name in SKIP:
            continue
        short = name[4:].lower()
        if short not in bound and name not in EMPTY:
            missing.append((name, "no `use mpi` binding in liboxmpi.so"))
            continue
        pr = Proc(text)
        why = pr.supported()
        if why:
            missing.append((name, why))
            continue
        procs.append(pr)
        if p.has_embiggenment():
            try:
                big = Proc(str(p.express.embiggen.f08))
            except Exception as e:
                missing.append((name + " (large count)", f"cannot parse: {e}"))
                continue
            big.large = True
            same = lambda q: [(a.spec.replace("MPI_COUNT_KIND", "MPI_ADDRESS_KIND"), a.dims) for a in q.args]
            # With MPI_COUNT_KIND = MPI_ADDRESS_KIND (8 both), a form that differs only there is the
            # same interface (MPI 4.1 section 19.2: it exists only when the kinds differ).
            if short + "_c" in bound:
                # liboxmpi.so has a `use mpi`-convention binding of the large form (callbacks
                # with Fortran interfaces: MPI_Register_datarep_c), which the procedure calls.
                big.binding = "pmpi_" + short + "_c"
            why = ("same interface (MPI_COUNT_KIND = MPI_ADDRESS_KIND)" if same(big) == same(pr) and big.name == pr.name
                   else big.supported() or (None if big.binding else big.bind_c(cprotos)))
            if why:
                missing.append((big.name + " (large count)", why))
            else:
                procs.append(big)
    for text in EXTRA:
        procs.append(Proc(text))
    return procs, missing


def constants():
    with open(os.path.join(ROOT, "include", "mpif.h")) as f:
        text = f.read()
    out = []
    for m in re.finditer(r"PARAMETER \((MPI_\w+)=(-?\d+)\)", text):
        name, v = m.group(1), int(m.group(2))
        typ = None
        if v >= 0x04000000 and (v >> 30) in (0, 1, 2, 3):
            typ = KIND_TYPES.get((v >> 26) & 0xF)
            if typ == "Request" and name.startswith("MPI_MESSAGE"):
                typ = "Message"
        if name in ("MPI_ERR_LASTCODE",):
            typ = None
        if name == "MPI_FILE_NULL":
            typ = "File"
        if name == "MPI_DISPLACEMENT_CURRENT":
            continue
        # MPICH's mpi_f08 has the C values of the string lengths (mpif.h has one less).
        if name.startswith("MPI_MAX_"):
            v += 1
        out.append((name, typ, v))
    disp = re.search(r"PARAMETER \(MPI_DISPLACEMENT_CURRENT=(-?\d+)", text)
    return out, disp.group(1) if disp else None


def emit(std):
    procs, missing = load_procedures(std)
    consts, disp = constants()
    o = []
    w = o.append
    w("! @generated by scripts/gen-f08.py from pympistandard (MPI 4.1 API), include/mpif.h and")
    w("! src/fortran/{generated,hand}.rs. Do not edit; run the script.")
    w("! The mpi_f08 module (MPI 4.1 section 19.2) for oxmpi; MPICH's module, type and procedure names.")
    w("")
    # --- handle and status types, operators ---
    w("module mpi_f08_types")
    w("  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64, real128")
    w("  implicit none")
    w("  private")
    for h in HANDLES:
        w(f"  public :: MPI_{h}")
    w("  public :: MPI_Status, operator(==), operator(/=)")
    w("  public :: MPI_Sizeof, MPI_Status_f2f08, MPI_Status_f082f")
    w("  public :: " + ", ".join(f"mpi_sizeof_{x}" for x, _, _ in SIZEOF_F08))
    for h in HANDLES:
        w(f"  type, bind(C) :: MPI_{h}")
        w("    integer :: MPI_VAL")
        w("  end type")
    w("  ! MPICH's layout, the C MPI_Status: the hidden count fields first.")
    w("  type, bind(C) :: MPI_Status")
    w("    integer :: count_lo")
    w("    integer :: count_hi_and_cancelled")
    w("    integer :: MPI_SOURCE")
    w("    integer :: MPI_TAG")
    w("    integer :: MPI_ERROR")
    w("  end type")
    for op, suf in (("==", "eq"), ("/=", "neq")):
        w(f"  interface operator({op})")
        for h in HANDLES:
            l = h.lower()
            w(f"    module procedure mpi_{l}_{suf}, mpi_{l}_f08_{suf}_f, mpi_{l}_f_{suf}_f08")
        w("  end interface")
    w("  interface MPI_Sizeof")
    w("    module procedure " + ", ".join(f"mpi_sizeof_{x}" for x, _, _ in SIZEOF_F08))
    w("  end interface")
    w("contains")
    for x, decl, size in SIZEOF_F08:
        sizeof_proc(w, f"mpi_sizeof_{x}", f"{decl}, dimension(..)", size)
    for name, src, dst, sdecl, ddecl, assign in (
            ("MPI_Status_f2f08", "f_status", "f08_status", "integer, intent(in) :: f_status(5)",
             "type(MPI_Status), intent(out) :: f08_status",
             "f08_status = MPI_Status(f_status(1), f_status(2), f_status(3), f_status(4), f_status(5))"),
            ("MPI_Status_f082f", "f08_status", "f_status", "type(MPI_Status), intent(in) :: f08_status",
             "integer, intent(out) :: f_status(5)",
             "f_status = [f08_status%count_lo, f08_status%count_hi_and_cancelled, f08_status%MPI_SOURCE, "
             "f08_status%MPI_TAG, f08_status%MPI_ERROR]")):
        w(f"  ! MPI 4.1 section 19.3.5; INTEGER status(MPI_STATUS_SIZE = 5) has the fields in this order.")
        w(f"  subroutine {name}({src}, {dst}, ierror)")
        w(f"    {sdecl}")
        w(f"    {ddecl}")
        w("    integer, optional, intent(out) :: ierror")
        w(f"    {assign}")
        w("    if (present(ierror)) ierror = 0")
        w("  end subroutine")
    for h in HANDLES:
        l = h.lower()
        for suf, op in (("eq", "=="), ("neq", "/=")):
            w(f"  elemental logical function mpi_{l}_{suf}(x, y)")
            w(f"    type(MPI_{h}), intent(in) :: x, y")
            w(f"    mpi_{l}_{suf} = x%MPI_VAL {op} y%MPI_VAL")
            w("  end function")
            w(f"  elemental logical function mpi_{l}_f08_{suf}_f(x, y)")
            w(f"    type(MPI_{h}), intent(in) :: x")
            w("    integer, intent(in) :: y")
            w(f"    mpi_{l}_f08_{suf}_f = x%MPI_VAL {op} y")
            w("  end function")
            w(f"  elemental logical function mpi_{l}_f_{suf}_f08(x, y)")
            w("    integer, intent(in) :: x")
            w(f"    type(MPI_{h}), intent(in) :: y")
            w(f"    mpi_{l}_f_{suf}_f08 = x {op} y%MPI_VAL")
            w("  end function")
    w("end module mpi_f08_types")
    w("")
    # --- constants ---
    w("module mpi_f08_compile_constants")
    w("  use mpi_f08_types")
    w("  implicit none")
    w("  public")
    for name, typ, v in consts:
        if typ:
            w(f"  type(MPI_{typ}), parameter :: {name} = MPI_{typ}({v})")
        else:
            w(f"  integer, parameter :: {name} = {v}")
    if disp:
        w(f"  integer(kind=MPI_OFFSET_KIND), parameter :: MPI_DISPLACEMENT_CURRENT = {disp}_MPI_OFFSET_KIND")
    w("  ! Choice buffers must be contiguous (a non-contiguous one is an MPI_ERR_BUFFER error).")
    w("  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.")
    w("  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.")
    w("end module mpi_f08_compile_constants")
    w("")
    # --- sentinels: MPICH's names; liboxmpi.so defines the same symbols and recognises them ---
    w("module mpi_f08_link_constants")
    w("  use, intrinsic :: iso_c_binding, only: c_int")
    w("  use mpi_f08_types")
    w("  implicit none")
    w("  private :: c_int")
    w("  integer(c_int), bind(C, name=\"MPIR_F08_MPI_BOTTOM\"), target :: MPI_BOTTOM")
    w("  integer(c_int), bind(C, name=\"MPIR_F08_MPI_IN_PLACE\"), target :: MPI_IN_PLACE")
    w("  type(MPI_Status), bind(C, name=\"MPIR_F08_MPI_STATUS_IGNORE_OBJ\"), target :: MPI_STATUS_IGNORE")
    w("  type(MPI_Status), bind(C, name=\"MPIR_F08_MPI_STATUSES_IGNORE_OBJ\"), target :: MPI_STATUSES_IGNORE(1)")
    w("  integer, target :: MPI_ERRCODES_IGNORE(1), MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)")
    w("  character(len=1), target :: MPI_ARGV_NULL(1), MPI_ARGVS_NULL(1, 1)")
    w("end module mpi_f08_link_constants")
    w("")
    # --- callbacks ---
    w("module mpi_f08_callbacks")
    w("  use mpi_f08_types")
    w("  use mpi_f08_compile_constants")
    w("  implicit none")
    for key in sorted(std.CALLBACKS):
        if key.startswith("mpi_t_"):
            continue
        c = std.CALLBACKS[key]
        for text in [str(c.express.f08)] + ([str(c.express.embiggen.f08)] if c.has_embiggenment() else []):
            if not text.startswith("ABSTRACT INTERFACE"):
                continue
            body = text.strip().split("\n")[1:]
            pr = Proc("\n".join(body))
            w("  abstract interface")
            w(f"    subroutine {pr.name}({', '.join(a.name for a in pr.args)})")
            for u in pr.uses_c:
                w("      " + u.replace("USE, INTRINSIC", "use, intrinsic"))
            w("      import")
            w("      implicit none")
            for a in pr.args:
                w("      " + a.decl())
            w("    end subroutine")
            w("  end interface")
    w("contains")
    for obj in ("comm", "type", "win"):
        t = {"comm": "MPI_Comm", "type": "MPI_Datatype", "win": "MPI_Win"}[obj]
        for fn, body in (("null_copy_fn", ["flag = .false."]),
                         ("dup_fn", ["attribute_val_out = attribute_val_in", "flag = .true."])):
            w(f"  subroutine MPI_{obj.upper()}_{fn.upper()}(old, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)")
            w(f"    type({t}) :: old")
            w("    integer :: keyval, ierror")
            w("    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out")
            w("    logical :: flag")
            for b in body:
                w("    " + b)
            w("    ierror = MPI_SUCCESS")
            w("  end subroutine")
        w(f"  subroutine MPI_{obj.upper()}_NULL_DELETE_FN(obj, keyval, attribute_val, extra_state, ierror)")
        w(f"    type({t}) :: obj")
        w("    integer :: keyval, ierror")
        w("    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state")
        w("    ierror = MPI_SUCCESS")
        w("  end subroutine")
    # Called in place of a conversion function, it sets the IERROR liboxmpi.so takes for "store
    # the data unconverted" (src/ffi/io/datarep.rs, CONVERSION_FN_NULL_CODE).
    for suffix, count in (("", "integer"), ("_C", "integer(kind=MPI_COUNT_KIND)")):
        w(f"  subroutine MPI_CONVERSION_FN_NULL{suffix}(userbuf, datatype, count, filebuf, position, extra_state, ierror)")
        w("    use, intrinsic :: iso_c_binding, only: c_ptr")
        w("    type(c_ptr), value :: userbuf, filebuf")
        w("    type(MPI_Datatype) :: datatype")
        w(f"    {count} :: count")
        w("    integer(kind=MPI_OFFSET_KIND) :: position")
        w("    integer(kind=MPI_ADDRESS_KIND) :: extra_state")
        w("    integer :: ierror")
        w(f"    ierror = {CONVERSION_FN_NULL_CODE}")
        w("  end subroutine")
    w("end module mpi_f08_callbacks")
    w("")
    # --- the module proper: generic interfaces to the specific procedures; the PMPI_ ones in
    # module pmpi_f08 (as MPICH), which mpi_f08 uses ---
    for module, profiling in (("pmpi_f08", True), ("mpi_f08", False)):
        w(f"module {module}")
        w("  use mpi_f08_types")
        w("  use mpi_f08_compile_constants")
        w("  use mpi_f08_link_constants")
        w("  use mpi_f08_callbacks")
        if not profiling:
            w("  use pmpi_f08")
        w("  implicit none")
        p = "P" if profiling else ""
        for pr in procs:
            w(f"  interface {p}{pr.name}")
            sig(w, pr, "    ", impl=False, profiling=profiling)
            w("  end interface")
        w(f"  interface {p}MPI_Pcontrol")
        w(f"    subroutine {p}MPI_Pcontrol_f08(level)")
        w("      implicit none")
        w("      integer, intent(in) :: level")
        w("    end subroutine")
        w("  end interface")
        w(f"end module {module}")
        w("")
    # --- support: errors raised by this layer itself ---
    w("module oxmpi_f08_support")
    w("  use mpi_f08_types")
    w("  use mpi_f08_compile_constants")
    w("  implicit none")
    w("contains")
    w("  ! A non-contiguous choice buffer (MPI_SUBARRAYS_SUPPORTED is .FALSE.): MPI_ERR_BUFFER, raised")
    w("  ! on the call's communicator, window, or MPI_COMM_SELF.")
    w("  subroutine oxmpi_f08_noncontig_comm(comm, ierr)")
    w("    type(MPI_Comm), intent(in) :: comm")
    w("    integer, intent(out) :: ierr")
    w("    integer :: e")
    w("    external :: pmpi_comm_call_errhandler")
    w("    call pmpi_comm_call_errhandler(comm%MPI_VAL, MPI_ERR_BUFFER, e)")
    w("    ierr = MPI_ERR_BUFFER")
    w("  end subroutine")
    w("  subroutine oxmpi_f08_noncontig_win(win, ierr)")
    w("    type(MPI_Win), intent(in) :: win")
    w("    integer, intent(out) :: ierr")
    w("    integer :: e")
    w("    external :: pmpi_win_call_errhandler")
    w("    call pmpi_win_call_errhandler(win%MPI_VAL, MPI_ERR_BUFFER, e)")
    w("    ierr = MPI_ERR_BUFFER")
    w("  end subroutine")
    w("  ! The C pointer for a choice buffer's address: MPI_BOTTOM -> NULL, MPI_IN_PLACE -> the C one.")
    w("  ! liboxmpi.so's `use mpi` MPI_Get_address maps the sentinels (also a threads-mode rank's own")
    w("  ! copies of them), then returns the address it was given.")
    w("  function oxmpi_f08_cbuf(p) result(q)")
    w("    use, intrinsic :: iso_c_binding, only: c_ptr")
    w("    type(c_ptr), value :: p")
    w("    type(c_ptr) :: q")
    w("    integer(kind=MPI_ADDRESS_KIND) :: a")
    w("    integer :: e")
    w("    interface")
    w("      subroutine pmpi_get_address(location, address, ierr)")
    w("        use, intrinsic :: iso_c_binding, only: c_ptr")
    w("        import :: MPI_ADDRESS_KIND")
    w("        type(c_ptr), value :: location")
    w("        integer(kind=MPI_ADDRESS_KIND) :: address")
    w("        integer :: ierr")
    w("      end subroutine")
    w("    end interface")
    w("    call pmpi_get_address(p, a, e)")
    w("    q = transfer(a, q)")
    w("  end function")
    w("end module oxmpi_f08_support")
    w("")
    # --- the specific procedures ---
    for pr in procs:
        impl(w, pr)
    w("subroutine PMPI_Pcontrol_f08(level)")
    w("  implicit none")
    w("  integer, intent(in) :: level")
    w("  external :: pmpi_pcontrol")
    w("  call pmpi_pcontrol(level)")
    w("end subroutine")
    w("")
    return "\n".join(o) + "\n", procs, missing


def linker_name(name):
    """gfortran's (and MPICH's) linker name of an external procedure."""
    return name.lower() + "_"


def emit_names(procs):
    """fortran-f08/mpi_f08_names.ld: the MPI_ names, and MPICH's PMPIR_ names, of the PMPI_
    procedures (symbol assignments, an implicit linker script given to the link of libmpifort)."""
    o = ["/* @generated by scripts/gen-f08.py. Do not edit; run the script.",
         "   Each mpi_f08 procedure is written once under its PMPI_ name; these assignments give",
         "   the same code its MPI_ name and MPICH's name of the PMPI_ one (MPI 4.1 section 19.1.5). */"]
    pairs = [(pr.specific(False), pr.specific(True)) for pr in procs] + [("MPI_Pcontrol_f08", "PMPI_Pcontrol_f08")]
    for mpi, pmpi in pairs:
        o.append(f"{linker_name(mpi)} = {linker_name(pmpi)};")
        if mpi.startswith("MPI_"):
            o.append(f"{linker_name('PMPIR_' + mpi[4:])} = {linker_name(pmpi)};")
    return "\n".join(o) + "\n"


def sizeof_proc(w, name, decl, size):
    """An MPI_Sizeof specific: `size` is a constant expression, `x` is never read."""
    w(f"  subroutine {name}(x, size, ierror)")
    w(f"    {decl} :: x")
    w("    integer, intent(out) :: size")
    w("    integer, optional, intent(out) :: ierror")
    w(f"    size = {size}")
    w("    if (present(ierror)) ierror = 0")
    w("  end subroutine")


def emit_sizeofs():
    """include/mpi_sizeofs.f90: the module behind `use mpi`'s MPI_SIZEOF."""
    o = []
    w = o.append
    w("! @generated by scripts/gen-f08.py. Do not edit; run the script.")
    w("! MPI_SIZEOF for `use mpi` (MPI 4.1 section 19.1.9), used by the mpi module (include/mpi.f90).")
    w("! MPICH's module and procedure names, so MPICH-built `use mpi` programs find them in")
    w("! libmpifort.so.12; the procedures are built into it with the mpi_f08 ones.")
    w("module mpi_sizeofs")
    w("  use, intrinsic :: iso_fortran_env, only: int8, int16, int64, real128")
    w("  implicit none")
    w("  private")
    w("  public :: MPI_SIZEOF")
    names = [x for x, _, _ in SIZEOF_MPI]
    vnames = [x + "v" for x in names if x not in SIZEOF_MPICH_ONLY]
    # One name per statement: this file is also built without -ffree-line-length-none.
    for x in names + vnames:
        w(f"  public :: mpi_sizeof_{x}")
    w("  interface MPI_SIZEOF")
    for x in names:
        w(f"    module procedure mpi_sizeof_{x}")
    w("  end interface")
    w("contains")
    for x, decl, size in SIZEOF_MPI:
        sizeof_proc(w, f"mpi_sizeof_{x}", f"{decl}, dimension(..)", size)
        if x not in SIZEOF_MPICH_ONLY:
            sizeof_proc(w, f"mpi_sizeof_{x}v", f"{decl}, dimension(*)", size)
    w("end module mpi_sizeofs")
    return "\n".join(o) + "\n"


def sig(w, pr, ind, impl, profiling=False):
    """The specific procedure's heading and declarations (an implementation is the PMPI_ one)."""
    args = ", ".join(a.name for a in pr.args)
    name = pr.specific(profiling or impl)
    if pr.result:
        w(f"{ind}function {name}({args}) result(res)")
    else:
        w(f"{ind}subroutine {name}({args})")
    w(f"{ind}  use, intrinsic :: iso_c_binding")
    w(f"{ind}  use mpi_f08_types")
    w(f"{ind}  use mpi_f08_compile_constants")
    w(f"{ind}  use mpi_f08_callbacks")
    if impl:
        w(f"{ind}  use oxmpi_f08_support")
    w(f"{ind}  implicit none")
    if pr.result:
        w(f"{ind}  {pr.result} :: res")
    for a in pr.args:
        w(f"{ind}  {a.decl(impl)}")
    if not impl:
        w(f"{ind}end {'function' if pr.result else 'subroutine'}")


def impl_c(w, pr):
    """A large-count form: calls the C function (which raises errors on the object itself)."""
    sig(w, pr, "", impl=True)
    w("  interface")
    w(f"    integer(c_int) function c_{pr.cname}({', '.join(a.name for a, _, _ in pr.cmap)}) bind(C, name=\"P{pr.cname}\")")
    w("      use, intrinsic :: iso_c_binding")
    w("      use mpi_f08_types")
    w("      use mpi_f08_compile_constants")
    w("      use mpi_f08_callbacks")
    w("      implicit none")
    for _, d, _ in pr.cmap:
        w("      " + d)
    w("    end function")
    w("  end interface")
    w("  integer :: ierr")
    call = f"c_{pr.cname}({', '.join(x for _, _, x in pr.cmap)})"
    noncontig(w, pr, f"    ierr = {call}")
    w("  if (present(ierror)) ierror = ierr")
    w("end subroutine")
    w("")


def noncontig(w, pr, body):
    bufs = [a for a in pr.args if a.is_buffer]
    if not bufs:
        w(body.strip().join(["  ", ""]))
        return
    cond = " .or. ".join(f".not. is_contiguous({a.name})" for a in bufs)
    w(f"  if ({cond}) then")
    comm = next((a for a in pr.args if a.spec == "TYPE(MPI_Comm)" and not a.dims), None)
    win = next((a for a in pr.args if a.spec == "TYPE(MPI_Win)" and not a.dims), None)
    if comm:
        w(f"    call oxmpi_f08_noncontig_comm({comm.name}, ierr)")
    elif win:
        w(f"    call oxmpi_f08_noncontig_win({win.name}, ierr)")
    else:
        w("    call oxmpi_f08_noncontig_comm(MPI_COMM_SELF, ierr)")
    w("  else")
    w(body)
    w("  end if")


def impl(w, pr):
    if pr.large and not pr.binding:
        return impl_c(w, pr)
    sig(w, pr, "", impl=True)
    if pr.name in EMPTY:
        w("end subroutine")
        w("")
        return
    bname = pr.binding or binding_name(pr.name)
    bargs = [a for a in pr.args if a.name != "ierror"]
    has_ierr = any(a.name == "ierror" for a in pr.args)
    w("  interface")
    names = [a.name for a in bargs] + (["ierr"] if has_ierr else [])
    if pr.result:
        w(f"    function {bname}({', '.join(names)}) result(res)")
    else:
        w(f"    subroutine {bname}({', '.join(names)})")
    w("      use, intrinsic :: iso_c_binding")
    w("      use mpi_f08_types")
    w("      use mpi_f08_compile_constants")
    w("      use mpi_f08_callbacks")
    w("      implicit none")
    if pr.result:
        w(f"      {pr.result} :: res")
    for a in bargs:
        w("      " + a.binding_decl())
    if has_ierr:
        w("      integer :: ierr")
    w(f"    end {'function' if pr.result else 'subroutine'}")
    w("  end interface")
    call = ", ".join((f"c_loc({a.name})" if a.is_buffer else a.name) for a in bargs)
    if pr.result:
        w(f"  res = {bname}({call})")
        w(f"end function")
        w("")
        return
    w("  integer :: ierr")
    bufs = [a for a in pr.args if a.is_buffer]
    if bufs:
        cond = " .or. ".join(f".not. is_contiguous({a.name})" for a in bufs)
        w(f"  if ({cond}) then")
        comm = next((a for a in pr.args if a.spec == "TYPE(MPI_Comm)" and not a.dims), None)
        win = next((a for a in pr.args if a.spec == "TYPE(MPI_Win)" and not a.dims), None)
        if comm:
            w(f"    call oxmpi_f08_noncontig_comm({comm.name}, ierr)")
        elif win:
            w(f"    call oxmpi_f08_noncontig_win({win.name}, ierr)")
        else:
            w("    call oxmpi_f08_noncontig_comm(MPI_COMM_SELF, ierr)")
        w("  else")
        w(f"    call {bname}({call}{', ' if call else ''}ierr)")
        w("  end if")
    else:
        w(f"  call {bname}({call}{', ' if call else ''}ierr)")
    if has_ierr:
        w("  if (present(ierror)) ierror = ierr")
    w("end subroutine")
    w("")


def main():
    std = pympistandard()
    text, procs, missing = emit(std)
    if "--list-missing" in sys.argv:
        for n, why in missing:
            print(f"{n}: {why}")
        return
    outputs = [(OUT, text), (NAMES_OUT, emit_names(procs)), (SIZEOFS_OUT, emit_sizeofs())]
    if "--check" in sys.argv:
        for path, content in outputs:
            with open(path) as f:
                if f.read() != content:
                    sys.exit(f"{path} is not current: run scripts/gen-f08.py")
        return
    for path, content in outputs:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
    print(f"wrote {OUT}: {len(procs)} procedures, {len(missing)} not generated (--list-missing)")


if __name__ == "__main__":
    main()
