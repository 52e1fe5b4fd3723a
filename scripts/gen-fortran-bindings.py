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


def binding(name, params):
    """-> (rust params, call args, statements before, after) or None when the function needs a
    hand-written binding. A Fortran file handle is an INTEGER (`MPI_File_c2f`), a C one a
    pointer: an `MPI_File *` is converted into a local and back after the call."""
    fparams, args, before, after = [], [], [], []
    for p in params:
        t = parse(p)
        if t is None:
            return None
        ctype, depth, array, pname = t
        pname = {"type": "type_", "ref": "ref_", "in": "in_"}.get(pname, pname)
        ind = depth + (1 if array else 0)
        if ctype == "char" or ctype.endswith("_function") or ctype.endswith("_fn"):
            return None
        if ctype == "MPI_File":
            fparams.append(f"{pname}: *mut MPI_Fint")
            if ind == 0:
                args.append(f"crate::ffi::io::file::f2c(*{pname})")
            elif ind == 1:
                before.append(f"let mut c_{pname} = crate::ffi::io::file::f2c(*{pname});")
                args.append(f"&mut c_{pname}")
                after.append(f"*{pname} = crate::ffi::io::file::c2f(c_{pname});")
            else:
                return None
            continue
        if ctype == "void":
            if ind != 1:
                return None
            fparams.append(f"{pname}: *mut c_void")
            args.append(f"sentinels::buf({pname}) as _")
        elif ctype == "MPI_Status":
            fparams.append(f"{pname}: *mut MPI_Fint")
            args.append(f"sentinels::statuses({pname}) as _" if array or "statuses" in pname else f"sentinels::status({pname}) as _")
        elif ind == 0:
            if ctype in SCALARS:
                rt = SCALARS[ctype]
            elif ctype in HANDLES:
                rt = "MPI_Fint"
            else:
                return None
            fparams.append(f"{pname}: *const {rt}")
            args.append(f"*{pname}")
        elif ind == 1 and (ctype in SCALARS or ctype in HANDLES):
            rt = SCALARS.get(ctype, "MPI_Fint")
            fparams.append(f"{pname}: *mut {rt}")
            if ctype == "int" and "weights" in pname:
                args.append(f"sentinels::weights({pname}) as _")
            else:
                args.append(f"{pname} as _")
        else:
            return None
    return fparams, args, before, after


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


if __name__ == "__main__":
    text = generate()
    if "--check" in sys.argv:
        with open(OUT) as f:
            if f.read() != text:
                sys.exit(f"{OUT} is stale: run scripts/gen-fortran-bindings.py")
    else:
        with open(OUT, "w") as f:
            f.write(text)
