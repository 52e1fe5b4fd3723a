#!/usr/bin/env python3
"""Writes src/fortran/generated.rs: the mechanical Fortran bindings (mpif.h / `use mpi`).

One binding per C function that oxmpi implements (a prototype in include/mpi.h that is not listed
in docs/UNSUPPORTED.md), except the large-count `_c` forms (Fortran 77/90 has none), the C-only
handle conversions, and the functions in HAND (src/fortran/hand.rs and dynproc.rs bind those: strings, callbacks,
attributes, 1-based indices, functions returning values).

Mechanical rule (MPICH ABI, docs/design/abi.md 2.2-2.4): every argument is passed by
reference; by-value C scalars and handles are read through the pointer (INTEGER = int = handle,
INTEGER(KIND=MPI_ADDRESS_KIND/OFFSET_KIND/COUNT_KIND) = 8 bytes); pointers and arrays pass through
(same layout; gfortran's .TRUE. is 1 like C); choice buffers, statuses and weights are mapped from
the COMMON-block sentinels to the C ones; the C return code goes to IERROR.

usage: scripts/gen-fortran-bindings.py [--check]
"""
import os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "src", "fortran", "generated.rs")

HAND = {
    "MPI_Init", "MPI_Init_thread", "MPI_Waitany", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome",
    "MPI_Buffer_detach", "MPI_Pcontrol", "MPI_Op_create", "MPI_Comm_create_errhandler",
    "MPI_Errhandler_create", "MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Type_get_attr",
    "MPI_Type_set_attr", "MPI_Attr_get", "MPI_Attr_put", "MPI_Comm_create_keyval",
    "MPI_Type_create_keyval", "MPI_Keyval_create",
    "MPI_Win_get_attr", "MPI_Win_set_attr", "MPI_Win_create_keyval", "MPI_Win_create_errhandler",
    "MPI_File_create_errhandler", "MPI_File_open", "MPI_File_delete", "MPI_File_set_view",
    "MPI_File_get_view", "MPI_Register_datarep",
    "MPI_Get_processor_name", "MPI_Error_string", "MPI_Get_library_version", "MPI_Add_error_string",
    "MPI_Comm_get_name", "MPI_Comm_set_name", "MPI_Type_get_name", "MPI_Type_set_name",
    "MPI_Win_get_name", "MPI_Win_set_name", "MPI_Info_set", "MPI_Info_delete", "MPI_Info_get",
    "MPI_Info_get_string", "MPI_Info_get_valuelen", "MPI_Info_get_nthkey", "MPI_Info_create_env",
    "MPI_Pack_external", "MPI_Unpack_external", "MPI_Pack_external_size", "MPI_Grequest_start",
    "MPI_Session_create_errhandler", "MPI_Group_from_session_pset", "MPI_Session_get_pset_info",
    "MPI_Session_get_nth_pset", "MPI_Comm_create_from_group", "MPI_Intercomm_create_from_groups",
    # src/fortran/dynproc.rs
    "MPI_Comm_spawn", "MPI_Comm_spawn_multiple", "MPI_Open_port", "MPI_Close_port", "MPI_Comm_accept",
    "MPI_Comm_connect", "MPI_Publish_name", "MPI_Unpublish_name", "MPI_Lookup_name",
}
SCALARS = {"int": "c_int", "double": "f64", "MPI_Aint": "MPI_Aint", "MPI_Count": "MPI_Count", "MPI_Offset": "MPI_Offset"}
HANDLES = {"MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Op", "MPI_Errhandler", "MPI_Request",
           "MPI_Message", "MPI_Win", "MPI_Info", "MPI_Session"}


def implemented():
    with open(os.path.join(ROOT, "docs", "UNSUPPORTED.md")) as f:
        unsupported = set(re.findall(r"`(MPI_[A-Za-z0-9_]+)`", f.read()))
    with open(os.path.join(ROOT, "include", "mpi.h")) as f:
        text = f.read()
    # MPI_ functions, and the ULFM MPIX_ extensions MPICH's libmpichfort binds too.
    for m in re.finditer(r"^int (MPIX?_[A-Za-z0-9_]+)\((.*)\);$", text, re.M):
        name, params = m.group(1), m.group(2)
        if name in unsupported or name in HAND or name.endswith("_c") or name.startswith("MPI_T_"):
            continue
        # MPICH has no Fortran binding of its generalized request extensions.
        if name.startswith("MPIX_Grequest_"):
            continue
        if re.search(r"_(c2f|f2c|c2f08|f082c|f082f|f2f08)$", name):
            continue
        yield name, [] if params.strip() == "void" else [p.strip() for p in params.split(",")]


def parse(p):
    """-> (ctype, pointer depth, is array, name) or None."""
    m = re.match(r"^(const )?([A-Za-z_][A-Za-z0-9_]*)\s*(\**)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\[\](?:\[\d+\])?)?$", p)
    if not m:
        return None
    return m.group(2), len(m.group(3)), bool(m.group(5)), m.group(4)


def file_arg(pname, ind, f2c, c2f, fparams, args, before, after):
    """A Fortran file handle (an INTEGER) as the C MPI_File (`ind` 0) or MPI_File * (1) through
    the conversions `f2c`/`c2f`; False for other forms."""
    fparams.append(f"{pname}: *mut MPI_Fint")
    if ind == 0:
        args.append(f"{f2c}(*{pname})")
    elif ind == 1:
        before.append(f"let mut c_{pname} = {f2c}(*{pname});")
        args.append(f"&mut c_{pname}")
        after.append(f"*{pname} = {c2f}(c_{pname});")
    else:
        return False
    return True


def convert(params, handle, f2c, c2f):
    """The per-parameter rule both Fortran libraries share -> (rust params, call args, statements
    before, after), or None when the function needs a hand-written binding. `handle` converts a
    handle parameter (`handle(ctype, pname, ind, array, const, names, fparams, args, before,
    after)`, False for a form it cannot), `f2c`/`c2f` a file handle: a Fortran one is an INTEGER
    (`MPI_File_c2f`), a C one a pointer, so an `MPI_File *` is converted into a local and back
    after the call."""
    names = [parse(p)[3] for p in params if parse(p)]
    fparams, args, before, after = [], [], [], []
    for p in params:
        t = parse(p)
        if t is None:
            return None
        ctype, depth, array, pname = t
        const = p.startswith("const ")
        pname = {"type": "type_", "ref": "ref_", "in": "in_"}.get(pname, pname)
        ind = depth + (1 if array else 0)
        if ctype == "char" or ctype.endswith("_function") or ctype.endswith("_fn"):
            return None
        if ctype == "MPI_File":
            ok = file_arg(pname, ind, f2c, c2f, fparams, args, before, after)
        elif ctype == "void":
            ok = ind == 1
            fparams.append(f"{pname}: *mut c_void")
            args.append(f"sentinels::buf({pname}) as _")
        elif ctype == "MPI_Status":
            ok = True
            fparams.append(f"{pname}: *mut MPI_Fint")
            args.append(f"sentinels::statuses({pname}) as _" if array or "statuses" in pname else f"sentinels::status({pname}) as _")
        elif ctype in HANDLES:
            ok = handle(ctype, pname, ind, array, const, names, fparams, args, before, after)
        elif ctype in SCALARS and ind == 0:
            ok = True
            fparams.append(f"{pname}: *const {SCALARS[ctype]}")
            args.append(f"*{pname}")
        elif ctype in SCALARS and ind == 1:
            ok = True
            fparams.append(f"{pname}: *mut {SCALARS[ctype]}")
            args.append(f"sentinels::weights({pname}) as _" if ctype == "int" and "weights" in pname else f"{pname} as _")
        else:
            ok = False
        if not ok:
            return None
    return fparams, args, before, after


def mpich_handle(ctype, pname, ind, array, const, names, fparams, args, before, after):
    """MPICH ABI: a Fortran handle is the C handle (an INTEGER, arrays alike)."""
    if ind == 0:
        fparams.append(f"{pname}: *const MPI_Fint")
        args.append(f"*{pname}")
    elif ind == 1:
        fparams.append(f"{pname}: *mut MPI_Fint")
        args.append(f"{pname} as _")
    else:
        return False
    return True


def binding(name, params):
    """-> (rust params, call args, statements before, after) or None (see convert())."""
    return convert(params, mpich_handle, "crate::ffi::io::file::f2c", "crate::ffi::io::file::c2f")


def generate():
    out = [
        "// @generated by scripts/gen-fortran-bindings.py from include/mpi.h and docs/UNSUPPORTED.md.",
        "// Do not edit; run the script (a unit test checks that this file is current).",
        "use super::sentinels;",
        "#[allow(unused_imports)]",
        "use crate::abi::{MPI_Aint, MPI_Count, MPI_Fint, MPI_Offset};",
        "#[allow(unused_imports)]",
        "use std::os::raw::{c_int, c_void};",
        "",
    ]
    skipped = []
    for name, params in implemented():
        b = binding(name, params)
        if b is None:
            skipped.append(name)
            continue
        fparams, args, before, after = b
        ext = name.startswith("MPIX_")
        base = name[5:] if ext else name[4:]
        sig = ", ".join(fparams + ["ierr: *mut MPI_Fint"])
        out.append(f"fortran_binding!({'mpix ' if ext else ''}{base.lower()}, {base.upper()}; ({sig}) => {{")
        out.extend(f"    {x}" for x in before)
        out.append(f"    super::set_ierr(ierr, crate::ffi::P{name}({', '.join(args)}));")
        out.extend(f"    {x}" for x in after)
        out.append("});")
    out.insert(2, "// Needing a hand-written binding (src/fortran/hand.rs) and not in its list: "
               + (", ".join(skipped) if skipped else "none") + ".")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# --abi ompi: Open MPI 4.1's Fortran library (libmpi_mpifh.so.40). The same functions and rule,
# over the Open MPI C layer (src/abi_ompi/wrappers.rs: it converts constants, statuses and codes
# as Open MPI's Fortran values are its C ones), with Open MPI's INTEGER handles (f2c indices,
# src/abi_ompi/fortran/handles.rs) and sentinels. Writes src/abi_ompi/fortran/generated.rs and
# c-src/ompi_mpifh_entry.S (the exported names, each a jump to liboxmpi.so's oxompif_NAME).
OMPI_OUT = os.path.join(ROOT, "src", "abi_ompi", "fortran", "generated.rs")
OMPI_HAND = [os.path.join(ROOT, "src", "abi_ompi", "fortran", f) for f in ("hand.rs", "callbacks.rs", "dynproc.rs")]
OMPI_ASM = os.path.join(ROOT, "c-src", "ompi_mpifh_entry.S")
OMPI_DOC = os.path.join(ROOT, "docs", "OMPI_FORTRAN_UNSUPPORTED.md")
F_KIND = {"MPI_Comm": "F_COMM", "MPI_Group": "F_GROUP", "MPI_Datatype": "F_DATATYPE", "MPI_Op": "F_OP",
          "MPI_Info": "F_INFO", "MPI_Errhandler": "F_ERRHANDLER", "MPI_Request": "F_REQUEST",
          "MPI_Message": "F_MESSAGE", "MPI_Win": "F_WIN"}
# Written by hand in src/abi_ompi/fortran/hand.rs: the engine writes the new communicator when
# the operation completes, after the call (into the caller's INTEGER, not a temporary).
OMPI_F_HAND = {"MPI_Comm_idup", "MPI_Comm_idup_with_info"}
# Arrays of handles and the argument holding their length.
F_ARRAY_LEN = {"array_of_requests": ("count", "incount"), "array_of_types": ("count",),
               "array_of_datatypes": ("max_datatypes",)}


def ompi_c_functions():
    """The C layer's functions that convert (not its MPI_ERR_UNSUPPORTED_OPERATION stubs)."""
    d = os.path.join(ROOT, "src", "abi_ompi")
    out, unsupported = {}, set()
    for f in sorted(os.listdir(d)):
        if f.endswith(".rs"):
            text = open(os.path.join(d, f)).read()
            m = re.search(r"pub const UNSUPPORTED: \[&str; \d+\] = \[(.*?)\];", text)
            unsupported |= set(re.findall(r'"(\w+)"', m.group(1))) if m else set()
            for n in re.findall(r"fn oxompi_(MPI_\w+)\(", text):
                out[n] = {"wrappers": "w", "hand": "c"}.get(f[:-3], f"super::super::{f[:-3]}")
    return {n: mod for n, mod in out.items() if n not in unsupported}


# The function ompi_handle converts for (its array lengths depend on it).
CURRENT = [""]


def ompi_handle(ctype, pname, ind, array, const, names, fparams, args, before, after):
    """Open MPI: a Fortran handle is an f2c index (`handles`), converted both ways."""
    if ctype not in F_KIND:
        return False
    k = F_KIND[ctype]
    if ind == 0:
        fparams.append(f"{pname}: *const MPI_Fint")
        args.append(f"handles::to_c({k}, *{pname})")
    elif ind == 1 and (array or pname in F_ARRAY_LEN):
        n = next((f"*{c}" for c in F_ARRAY_LEN.get(pname, ()) if c in names), None)
        if pname in ("sendtypes", "recvtypes") and "comm" in names:
            n = "super::super::conv::peers(handles::mpich(F_COMM, *comm)) as c_int"  # one per peer
            if "neighbor" in CURRENT[0].lower():  # one per out-neighbour (sent) or in-neighbour (received)
                n = f"super::super::conv::neighbor_degrees(handles::mpich(F_COMM, *comm)).{1 if pname == 'sendtypes' else 0} as c_int"
        if n is None:
            return False
        fparams.append(f"{pname}: *mut MPI_Fint")
        before.append(f"let mut t_{pname} = handles::array_to_c({k}, {pname}, {n});")
        args.append(f"handles::array_ptr({pname}, &mut t_{pname})")
        if not const:
            after.append(f"handles::array_from_c({pname}, &t_{pname});")
    elif ind == 1:
        fparams.append(f"{pname}: *mut MPI_Fint")
        before.append(f"let mut t_{pname} = handles::to_c({k}, *{pname});")
        args.append(f"&mut t_{pname}")
        after.append(f"*{pname} = handles::from_c(t_{pname});")
    else:
        return False
    return True


OMPI_H = os.environ.get("OMPI_MPI_H", "/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h")


def ompi_fortran_procedures():
    """(name, number of C parameters) of each MPI function of Open MPI's mpi.h that has a Fortran
    binding (not the C-only conversions, MPI_T, or functions returning a value)."""
    with open(OMPI_H) as f:
        flat = re.sub(r"\s+", " ", re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S))
    seen = {}
    for name, params in re.findall(r"OMPI_DECLSPEC int (MPI_\w+) ?\(([^)]*)\)", flat):
        if re.search(r"_(c2f|f2c|c2f08|f082c|f082f|f2f08)$", name) or name.startswith("MPI_T_") or name.startswith("MPI_Status_"):
            continue
        seen.setdefault(name, 0 if params.strip() in ("", "void") else len(params.split(",")))
    return sorted(seen.items())


def ompi_generate():
    out = [
        "// @generated by scripts/gen-fortran-bindings.py --abi ompi from include/mpi.h and src/abi_ompi/.",
        "// Do not edit; run the script (a unit test checks that this file is current).",
        "#[allow(unused_imports)]",
        "use super::super::hand as c;",
        "use super::super::tables::*;",
        "use super::super::wrappers as w;",
        "use super::{handles, sentinels};",
        "#[allow(unused_imports)]",
        "use crate::abi::{MPI_Aint, MPI_Count, MPI_Fint, MPI_Offset};",
        "#[allow(unused_imports)]",
        "use std::os::raw::{c_int, c_void};",
        "",
    ]
    have = ompi_c_functions()
    bound, skipped = [], []
    for name, params in implemented():
        if name not in have or name.startswith("MPIX_") or name in OMPI_F_HAND:
            continue
        CURRENT[0] = name
        b = convert(params, ompi_handle, "c::oxompi_MPI_File_f2c", "c::oxompi_MPI_File_c2f")
        if b is None:
            skipped.append(name)
            continue
        fparams, args, before, after = b
        lower = name[4:].lower()
        bound.append(lower)
        sig = ", ".join(fparams + ["ierr: *mut MPI_Fint"])
        out.append(f"ompi_fortran!({lower}; ({sig}) => {{")
        out.extend(f"    {x}" for x in before)
        out.append(f"    let rc = {have[name]}::oxompi_{name}({', '.join(args)});")
        out.extend(f"    {x}" for x in after)
        out.append("    super::set_ierr(ierr, rc);")
        out.append("});")
    hand = []
    for path in OMPI_HAND:
        with open(path) as f:
            hand += re.findall(r"^ompi_fortran!\((\w+);", f.read(), re.M)
    # Every other procedure of Open MPI's Fortran library reports MPI_ERR_UNSUPPORTED_OPERATION:
    # left out, its name would reach liboxmpi.so's MPICH-ABI binding (other handle numbers).
    stubs = []
    for name, nparams in ompi_fortran_procedures():
        lower = name[4:].lower()
        if lower in bound or lower in hand:
            continue
        stubs.append(name)
        bound.append(lower)
        sig = ", ".join([f"_a{i}: *mut c_void" for i in range(nparams)] + ["ierr: *mut MPI_Fint"])
        out.append(f"ompi_fortran!({lower}; ({sig}) => {{")
        out.append(f"    super::set_ierr(ierr, super::unsupported(\"{name.upper()}\"));")
        out.append("});")
    out.insert(2, "// Not bound (an array of handles of computed length, or a C layer stub): "
               + (", ".join(skipped) if skipped else "none") + ".")
    out.insert(3, f"// Reporting MPI_ERR_UNSUPPORTED_OPERATION (the last {len(stubs)}): " + (", ".join(stubs) if stubs else "none") + ".")
    asm = ["# @generated by scripts/gen-fortran-bindings.py --abi ompi; do not edit.",
           "# libmpi_mpifh.so.40 (Open MPI 4.1's Fortran ABI): Open MPI's eight names of each binding,",
           "# each a jump to liboxmpi.so's oxompif_NAME (src/abi_ompi/fortran/).", "\t.text"]
    # TYPE(C_PTR) forms of `use mpi`: the C_PTR is passed as the INTEGER(KIND=MPI_ADDRESS_KIND) is.
    cptr = {f"{n}_cptr": n for n in ("alloc_mem", "win_allocate", "win_allocate_shared", "win_shared_query")}
    for lower in sorted(set(bound) | set(hand) | set(cptr)):
        target = cptr.get(lower, lower)
        for sym in (f"mpi_{lower}", f"mpi_{lower}_", f"mpi_{lower}__", f"MPI_{lower.upper()}",
                    f"pmpi_{lower}", f"pmpi_{lower}_", f"pmpi_{lower}__", f"PMPI_{lower.upper()}"):
            asm += [f"\t.globl {sym}", f"\t.type {sym}, @function", f"{sym}:", f"\tjmp oxompif_{target}@PLT", f"\t.size {sym}, .-{sym}"]
    asm.append('\t.section .note.GNU-stack,"",@progbits')
    doc = ["# Open MPI ABI, Fortran (libmpi_mpifh.so.40): procedures not converted yet", "",
           "libmpi_mpifh.so.40 exports these under Open MPI's eight names each, but they set",
           "`ierror` to MPI_ERR_UNSUPPORTED_OPERATION through the error handler, with a message naming the",
           "procedure (left out, the name would reach liboxmpi.so's MPICH-ABI binding, whose handle",
           "numbers differ). Generated by `scripts/gen-fortran-bindings.py --abi ompi`; do not edit.", "",
           f"{len(stubs)} procedures:", ""] + [f"- `{n.upper()}`" for n in sorted(stubs)] + [
           "", "## `use mpi_f08` and `use mpi` (libmpi_usempif08.so.40, libmpi_usempi_ignore_tkr.so.40)", "",
           "Programs built with `mpifort.openmpi` that `use mpi_f08` NEED libmpi_usempif08.so.40 and",
           "reference its `mpi_X_f08_` procedures, the module's handle operators",
           "`__mpi_f08_types_MOD_ompi_X_op_eq`/`_op_ne` and, naming `MPI_COMM_DUP_FN` & co., the",
           "`__mpi_f08_callbacks_MOD_mpi_*_fn` subroutines; `use mpi` programs reference the mpif.h",
           "names (libmpi_mpifh.so.40) and `mpi_sizeof_*` (in both libraries). oxmpi's libraries",
           "export all of these (c-src/ompi_usempif08_entry.S, c-src/ompi_usempi_entry.S); the",
           "procedures above report MPI_ERR_UNSUPPORTED_OPERATION under `use mpi_f08` too.",
           "Not exported: the module's `__mpi_f08_types_MOD_mpi_*` variables (`MPI_COMM_WORLD`...: the",
           "module's PARAMETERs, which gfortran folds into the program; no program built here",
           "references them), the `__copy_`/`__def_init_`/`__vtab_` entries of the handle types",
           "(gfortran emits them for CLASS(*) and allocatable uses of the types, not for MPI calls),",
           "`__mpi_f08_callbacks_MOD_mpi_conversion_fn_null` (MPI_REGISTER_DATAREP under f08 not converted)."]
    return "\n".join(out) + "\n", "\n".join(asm) + "\n", ompi_usempi(), ompi_usempif08(sorted(set(bound) | set(hand))), "\n".join(doc) + "\n"


# Open MPI's `use mpi` library (libmpi_usempi_ignore_tkr.so.40): its module's procedures are the
# mpif.h ones (libmpi_mpifh.so.40) but for MPI_SIZEOF, a specific procedure per type and rank
# (scalar, 1 to 15 dimensions): `mpi_sizeof_<type>_<rank>_(x, size, ierror)` stores the size of
# one element. Element sizes by Open MPI's type names (iso_fortran_env kinds; complexNN is a
# pair of realNN).
OMPI_USEMPI_ASM = os.path.join(ROOT, "c-src", "ompi_usempi_entry.S")
OMPI_SIZEOF = {"character": 1, "logical": 4, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "real32": 4,
               "real64": 8, "real128": 16, "complex32": 8, "complex64": 16, "complex128": 32}


def ompi_usempi():
    asm = ["# @generated by scripts/gen-fortran-bindings.py --abi ompi; do not edit.",
           "# libmpi_usempi_ignore_tkr.so.40 (Open MPI 4.1's `use mpi`): MPI_SIZEOF's specific procedures",
           "# (%rdi: the argument, %rsi: SIZE, %rdx: IERROR); the others are libmpi_mpifh.so.40's.", "\t.text"]
    for t, size in sorted(OMPI_SIZEOF.items()):
        body = f"oxompi_sizeof_{t}"
        asm += [f"\t.type {body}, @function", f"{body}:", f"\tmovl ${size}, (%rsi)", "\ttestq %rdx, %rdx", f"\tje 1f",
                "\tmovl $0, (%rdx)", "1:\tret", f"\t.size {body}, .-{body}"]
        for rank in ["scalar"] + [f"r{i}" for i in range(1, 16)]:
            for pre in ("mpi", "pmpi"):
                sym = f"{pre}_sizeof_{t}_{rank}_"
                asm += [f"\t.globl {sym}", f"\t.type {sym}, @function", f"\t.set {sym}, {body}"]
    asm.append('\t.section .note.GNU-stack,"",@progbits')
    return "\n".join(asm) + "\n"


# Open MPI's `use mpi_f08` library (libmpi_usempif08.so.40). Open MPI 4.1 built with gfortran
# passes every f08 argument as its mpif.h binding takes it: a TYPE(MPI_Comm)... by reference is
# the address of its one INTEGER (MPI_VAL), TYPE(MPI_Status) has the 24-byte C layout, choice
# buffers are plain addresses (its ignore-TKR form, not descriptors), the sentinels are the same
# COMMON blocks, CHARACTER lengths trail, and an absent optional IERROR is a NULL address, which
# the bindings skip. So `mpi_X_f08_` is the mpif.h binding of X. The f08 module has no
# procedures for what MPI-3 removed (MPI_ADDRESS, MPI_TYPE_EXTENT...) and for the functions it
# binds to C directly (MPI_WTIME, MPI_WTICK), nor the `_cptr` forms (its baseptr is a C_PTR).
# Callback arguments (MPI_OP_CREATE, the keyval and errhandler constructors) have the mpif.h
# layout in f08 too (a TYPE(MPI_Comm) by reference is the address of its INTEGER; the user
# function's TYPE(C_PTR), VALUE buffers are the addresses mpif.h passes).
# The module's `==` and `/=` on handles (`ompi_X_op_eq`/`_op_ne`, LOGICAL functions of two
# handles by reference) compare MPI_VAL.
OMPI_USEMPIF08_ASM = os.path.join(ROOT, "c-src", "ompi_usempif08_entry.S")
OMPI_NOT_F08 = {"address", "attr_delete", "attr_get", "attr_put", "errhandler_create", "errhandler_get",
                "errhandler_set", "keyval_create", "keyval_free", "type_extent", "type_hindexed",
                "type_hvector", "type_lb", "type_struct", "type_ub", "wtick", "wtime", "conversion_fn_null"}
OMPI_F08_HANDLES = ["comm", "datatype", "errhandler", "file", "group", "info", "message", "op", "request", "win"]


def ompi_usempif08(procedures):
    asm = ["# @generated by scripts/gen-fortran-bindings.py --abi ompi; do not edit.",
           "# libmpi_usempif08.so.40 (Open MPI 4.1's `use mpi_f08`): mpi_X_f08_ is libmpi_mpifh.so.40's",
           "# binding of X (see the script), and the handle comparisons of module mpi_f08_types. The",
           "# library is built from this file and ompi_usempi_entry.S, whose MPI_SIZEOF procedures it",
           "# exports too (scripts/install.sh).", "\t.text"]
    for lower in procedures:
        if lower in OMPI_NOT_F08 or lower.startswith("sizeof"):
            continue
        for sym in (f"mpi_{lower}_f08_", f"pmpi_{lower}_f08_"):
            asm += [f"\t.globl {sym}", f"\t.type {sym}, @function", f"{sym}:", f"\tjmp oxompif_{lower}@PLT", f"\t.size {sym}, .-{sym}"]
    for h in OMPI_F08_HANDLES:
        for op, cc in (("eq", "sete"), ("ne", "setne")):
            sym = f"__mpi_f08_types_MOD_ompi_{h}_op_{op}"
            asm += [f"\t.globl {sym}", f"\t.type {sym}, @function", f"{sym}:", "\tmovl (%rdi), %eax", "\tcmpl (%rsi), %eax",
                    f"\t{cc} %al", "\tmovzbl %al, %eax", "\tret", f"\t.size {sym}, .-{sym}"]
    # The predefined attribute callbacks of module mpi_f08_callbacks (all arguments by reference):
    # copy (obj, keyval, extra_state, val_in, val_out, flag, ierror: the 7th, on the stack) and
    # delete (obj, keyval, val, extra_state, ierror), called through the keyval constructors'
    # trampolines (src/fortran/callbacks.rs) as any Fortran callback.
    bodies = {"dup_fn": ["movq (%rcx), %rax", "movq %rax, (%r8)", "movl $1, (%r9)", "movq 8(%rsp), %rax", "movl $0, (%rax)", "ret"],
              "null_copy_fn": ["movl $0, (%r9)", "movq 8(%rsp), %rax", "movl $0, (%rax)", "ret"],
              "null_delete_fn": ["movl $0, (%r8)", "ret"]}
    for kind in ("comm", "type", "win"):
        for what, body in bodies.items():
            sym = f"__mpi_f08_callbacks_MOD_mpi_{kind}_{what}"
            asm += [f"\t.globl {sym}", f"\t.type {sym}, @function", f"{sym}:"] + [f"\t{b}" for b in body] + [f"\t.size {sym}, .-{sym}"]
    asm.append('\t.section .note.GNU-stack,"",@progbits')
    return "\n".join(asm) + "\n"


if __name__ == "__main__":
    if "--abi" in sys.argv and sys.argv[sys.argv.index("--abi") + 1] == "ompi":
        files = dict(zip((OMPI_OUT, OMPI_ASM, OMPI_USEMPI_ASM, OMPI_USEMPIF08_ASM, OMPI_DOC), ompi_generate()))
    else:
        files = {OUT: generate()}
    for path, text in files.items():
        if "--check" in sys.argv:
            with open(path) as f:
                if f.read() != text:
                    sys.exit(f"{path} is stale: run scripts/gen-fortran-bindings.py {' '.join(a for a in sys.argv[1:] if a != '--check')}")
        else:
            with open(path, "w") as f:
                f.write(text)
