#!/usr/bin/env python3
"""Generates the MPI-5 standard ABI layer from include/mpi.h (one prototype per line); with
`--abi ompi`, Open MPI 4.1's (libmpi.so.40, see ompi_main() below) the same way.

Writes (all committed; rerun after changing include/mpi.h or this script, scripts/check-mpi-abi.sh
fails when they are stale):
  src/abi5/wrappers.rs     one `oxabi_MPI_X` per function: converts the ABI's arguments (pointer
                           handles, 32-byte status, constants) to the MPICH ABI, calls
                           `crate::ffi::PMPI_X`, converts results and the error code back;
                           functions it cannot convert yet report MPI_ERR_UNSUPPORTED_OPERATION;
  c-src/mpi_abi_entry.S    libmpi_abi.so.1's exports: MPI_X and PMPI_X, each a jump to oxabi_MPI_X;
  include/mpi_abi.h        the prototype block between the GENERATED markers;
  docs/MPI_ABI_UNSUPPORTED.md  what the layer does not convert yet.
Why from our own mpi.h and not pympistandard's apis.json: mpi.h is what the engine implements
(same names, one line each, already parsed by build.rs); the ABI's function set is mpi.h's minus
the Fortran conversions (MPI_Fint, MPI_F08_status) plus MPI_Abi_* and *_toint/*_fromint, which
are hand-written in src/abi5/.
"""
import re, sys, pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
HANDLES = {"MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Op", "MPI_Info", "MPI_Errhandler", "MPI_Win",
           "MPI_Request", "MPI_Message", "MPI_Session"}
TPTR = {"MPI_T_enum", "MPI_T_cvar_handle", "MPI_T_pvar_handle", "MPI_T_pvar_session",
        "MPI_T_event_registration", "MPI_T_event_instance"}
SCALAR = {"int": "c_int", "char": "c_char", "void": "c_void", "double": "f64", "MPI_Aint": "i64",
          "MPI_Count": "i64", "MPI_Offset": "i64", "MPI_T_cb_safety": "c_int", "MPI_T_source_order": "c_int"}
# Written by hand in src/abi5/ (callbacks, ABI-only functions).
HAND = {"MPI_Keyval_create", "MPI_Op_create", "MPI_Op_create_c", "MPI_Comm_create_errhandler", "MPI_Win_create_errhandler", "MPI_File_create_errhandler", "MPI_Session_create_errhandler",
        "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval"} | {"MPI_Comm_spawn", "MPI_Comm_spawn_multiple"} \
    | {"MPI_Register_datarep", "MPI_Register_datarep_c", "MPI_Grequest_start"} \
    | {"MPI_T_event_register_callback", "MPI_T_event_handle_free", "MPI_T_event_set_dropped_handler"} \
    | {"MPI_Get_library_version", "MPI_Type_size", "MPI_Type_size_c"}  # abi_info.rs
# The ABI's own functions src/abi5/abi_info.rs reports unsupported, and why (listed in the doc).
HAND_UNSUPPORTED = []
# Not part of the standard ABI (Fortran conversions) or superseded there.
NOT_ABI = re.compile(r"_c2f$|_f2c$|_f2f08$|_f082f|_c2f08|_f082c|^MPI_Status_f|^MPI_Status_c|^MPIX_"
                     r"|^MPI_(Address|Errhandler_(create|get|set)|Type_(extent|hindexed|hvector|lb|ub|struct))$")  # removed in MPI-3.0
# Int parameters whose values are constants that differ between the ABIs: name -> converter.
INT_IN = {"dest": "rank_in", "source": "rank_in", "root": "rank_in", "target_rank": "rank_in",
          "rank": "rank_in", "tag": "tag_in", "sendtag": "tag_in", "recvtag": "tag_in",
          "required": "thread_in", "split_type": "split_in", "lock_type": "lock_in", "assert": "assert_in",
          "amode": "amode_in", "whence": "whence_in", "order": "order_in", "typeclass": "typeclass_in",
          "comm_keyval": "keyval_in", "win_keyval": "keyval_in", "type_keyval": "keyval_in",
          "keyval": "keyval_in", "errorcode": "code_in", "errorclass": "code_in"}
FN_INT_IN = {("MPI_Status_set_error", "error"): "code_in"}
PTR_OUT = {"provided": "thread_out", "rank_source": "rank_out", "rank_dest": "rank_out",
           "combiner": "combiner_out", "amode": "amode_out", "errorclass": "code_out", "errorcode": "code_out",
           "comm_keyval": "keyval_out", "win_keyval": "keyval_out", "type_keyval": "keyval_out",
           "keyval": "keyval_out", "rank": "rank_out"}
FN_PTR_OUT = {("MPI_Comm_compare", "result"): "compare_out", ("MPI_Group_compare", "result"): "compare_out",
              ("MPI_Topo_test", "status"): "topo_out", ("MPI_Status_get_source", "source"): "rank_out",
              ("MPI_Status_get_tag", "tag"): "tag_out", ("MPI_Status_get_error", "error"): "code_out"}
NO_INT_MAP = {"MPI_Abort"}  # errorcode is the exit status
# Int outputs whose values are the same in all three ABIs: a rank >= 0 or MPI_UNDEFINED (-32766
# in each), passed to the engine as the caller's own int, unconverted.
SAME_OUT = {("MPI_Comm_rank", "rank"), ("MPI_Group_rank", "rank")}
ARRAY_LEN = {"array_of_requests": ["count", "incount"], "array_of_statuses": ["count", "incount"],
             "array_of_types": ["count"], "array_of_datatypes": ["max_datatypes"], "array_of_info": ["count"],
             "array_of_distribs": ["ndims"]}
SPECIAL_LEN = {"sendtypes": "peers", "recvtypes": "peers"}
# What differs between the targets in the generated wrappers (set by main() / ompi_main()).
CFG = {"status": "AbiStatus", "prefix": "oxabi_"}
# Handle pointers the function reads (in-out); the others are outputs only, whose initial content
# may be garbage: a layer whose h_in dereferences (Open MPI's) must not read them, and neither
# layer converts them (an MPI_Isend's request is an output: reading it cost a conversion per call).
# An output goes back only if the engine wrote it (MPICH handles are never 0).
LATE_OUTPUTS = {"MPI_Comm_idup", "MPI_Comm_idup_with_info"}
INOUT = re.compile(r"_free$|^MPI_(Cancel|Comm_disconnect|Wait|Test|Start|Type_commit|Mrecv|Imrecv|Session_finalize)(_c)?$")


# Functions whose engine code converts the arguments itself and writes the caller's request and
# message handles and statuses in the layer's own ABI (src/ffi/layer.rs, with conv::Abi), and
# returns the error code in the ABI: the wrapper passes its arguments on. Those with a count are
# generic over its type (int, or MPI_Count in the `_c` form): name -> (entry, has a count).
DIRECT = {}
for _base, _entry in [("MPI_Send", "send"), ("MPI_Ssend", "ssend"), ("MPI_Bsend", "bsend"), ("MPI_Rsend", "rsend"),
                      ("MPI_Isend", "isend"), ("MPI_Issend", "issend"), ("MPI_Ibsend", "ibsend"), ("MPI_Irsend", "irsend"),
                      ("MPI_Recv", "recv"), ("MPI_Irecv", "irecv"), ("MPI_Sendrecv", "sendrecv"), ("MPI_Mrecv", "mrecv")]:
    DIRECT[_base] = DIRECT[_base + "_c"] = (_entry, True)
for _base, _entry in [("MPI_Probe", "probe"), ("MPI_Iprobe", "iprobe"), ("MPI_Mprobe", "mprobe"), ("MPI_Improbe", "improbe"),
                      ("MPI_Wait", "wait"), ("MPI_Test", "test"), ("MPI_Waitall", "waitall"), ("MPI_Testall", "testall"),
                      ("MPI_Waitany", "waitany"), ("MPI_Testany", "testany"), ("MPI_Waitsome", "waitsome"),
                      ("MPI_Testsome", "testsome"), ("MPI_Request_free", "request_free"),
                      ("MPI_Request_get_status", "request_get_status"), ("MPI_Request_get_status_all", "request_get_status_all"),
                      ("MPI_Request_get_status_any", "request_get_status_any"), ("MPI_Request_get_status_some", "request_get_status_some")]:
    DIRECT[_base] = (_entry, False)


class Unsupported(Exception):
    pass


def parse(line):
    line = line.strip()
    m = re.match(r"^(int|double|MPI_Aint)\s+(MPI_\w+)\((.*)\);$", line)
    if not m:
        return None
    ret, name, args = m.groups()
    params = []
    if args.strip() not in ("void", ""):
        for a in args.split(","):
            a = a.strip()
            if a == "...":
                continue
            params.append(a)
    return ret.strip(), name, params, line


def split_param(a):
    const = a.startswith("const ")
    if const:
        a = a[6:]
    arr = ""
    m = re.match(r"^(.*?)(\w+)((\[[^\]]*\])*)$", a)
    base_ptr, pname, dims = m.group(1), m.group(2), m.group(3)
    stars = base_ptr.count("*")
    base = base_ptr.replace("*", "").strip()
    return const, base, stars, pname, dims


def rtype(base, stars, const, dims, abi):
    """Rust type of a parameter, in the ABI (`abi`) or in crate::ffi's MPICH signature."""
    if dims == "[][3]":
        assert base == "int"
        return "*mut [c_int; 3]"
    levels = stars + (1 if dims else 0)
    if base in HANDLES:
        t = "Handle" if abi else "c_int"
    elif base == "MPI_File" or base in TPTR:
        t = "*mut c_void"
    elif base == "MPI_Status":
        t = CFG["status"] if abi else "crate::abi::MPI_Status"
    elif base in SCALAR:
        t = SCALAR[base]
    elif base.endswith("_function") or base.endswith("_function_c"):
        raise Unsupported(f"callback parameter {base}")
    else:
        raise Unsupported(f"type {base}")
    if levels == 0:
        return t
    out = t
    for i in range(levels):
        out = ("*const " if (const and i == levels - 1) else "*mut ") + out
    return out


# MPI_T (tool interface) int parameters whose values differ between the ABIs: name -> converter.
T_PTR_OUT = {"verbosity": "t_verbosity_out", "bind": "t_bind_out", "scope": "t_scope_out", "var_class": "t_class_out"}
T_INT_IN = {"var_class": "t_class_in"}
# The MPI_T function whose obj_handle names an object of the variable's binding: its kind and index.
T_OBJ = {"MPI_T_cvar_handle_alloc": ("TVar::Cvar", "cvar_index"), "MPI_T_pvar_handle_alloc": ("TVar::Pvar", "pvar_index"),
         "MPI_T_event_handle_alloc": ("TVar::Event", "event_index")}


def t_param(name, base, stars, dims, pn, v, names, pre, args, post):
    """An MPI_T function's parameter that needs an MPI_T conversion: appends its code and returns True."""
    nul = "std::ptr::null_mut()"
    if base == "MPI_T_pvar_handle" and stars == 0:
        args.append(f"pvar_h_in({v})")  # MPI_T_PVAR_ALL_HANDLES differs
    elif base == "MPI_T_pvar_handle" and stars == 1:
        # MPI_T_pvar_handle_alloc's output, MPI_T_pvar_handle_free's in-out (the conversion reads
        # only the pointer's value, never through it).
        pre.append(f"let mut t_{pn}: *mut c_void = if {v}.is_null() {{ {nul} }} else {{ pvar_h_in(*{v}) }};")
        args.append(f"if {v}.is_null() {{ {nul} }} else {{ &mut t_{pn} }}")
        post.append(f"if !{v}.is_null() {{ *{v} = pvar_h_out(t_{pn}); }}")
    elif base in TPTR:
        args.append(f"{v} as _")  # the engine's own numbers, opaque to the program: unchanged
    elif base == "MPI_T_cb_safety" and stars == 0:
        args.append(f"t_cb_safety_in({v})")
    elif (base == "MPI_T_source_order" and stars == 1) or (base == "int" and stars == 1 and not dims and pn in T_PTR_OUT):
        conv = "t_source_order_out" if base == "MPI_T_source_order" else T_PTR_OUT[pn]
        pre.append(f"let mut t_{pn}: c_int = 0;")
        args.append(f"if {v}.is_null() {{ {nul} }} else {{ &mut t_{pn} }}")
        post.append(f"if !{v}.is_null() {{ *{v} = {conv}(t_{pn}); }}")
    elif base == "int" and stars == 0 and pn in T_INT_IN:
        args.append(f"{T_INT_IN[pn]}({v})")
    elif base == "void" and stars == 1 and pn == "obj_handle" and name in T_OBJ:
        kind, idx = T_OBJ[name]
        pre.append(f"let mut t_{pn} = ObjSlot::default();")
        args.append(f"t_obj_in({kind}, {idx}, {v}, &mut t_{pn})")
    elif base == "MPI_Datatype" and dims == "[]" and pn == "array_of_datatypes" and "num_elements" in names:
        # Outputs only, as many as *num_elements says on input.
        n = "if num_elements.is_null() { 0 } else { len(*num_elements) }"
        pre.append(f"let t_n_{pn} = {n};")
        pre.append(f"let mut t_{pn}: Vec<c_int> = vec![0; t_n_{pn}];")
        args.append(f"arr_ptr({v}, &mut t_{pn})")
        post.append(f"handles_out({v}, &t_{pn}[..t_n_{pn}.min(if num_elements.is_null() {{ 0 }} else {{ len(*num_elements) }})]);")
    else:
        return False
    return True


def gen(ret, name, params):
    rret = {"int": "c_int", "double": "f64", "MPI_Aint": "i64"}.get(ret)
    if rret is None:
        raise Unsupported(f"returns {ret}")
    is_t = name.startswith("MPI_T_")
    sig, pre, args, post = [], [], [], []
    names = [split_param(p)[3] for p in params]
    comm_name = next((split_param(p)[3] for p in params if split_param(p)[1] == "MPI_Comm" and split_param(p)[2] == 0 and not split_param(p)[4]), None)
    for p in params:
        const, base, stars, pn, dims = split_param(p)
        v = "r#" + pn if pn in ("type", "in", "ref", "fn", "mod", "match") else pn
        sig.append(f"{v}: {rtype(base, stars, const, dims, True)}")
        is_arr = bool(dims) or False
        if is_t and t_param(name, base, stars, dims, pn, v, names, pre, args, post):
            continue
        if base in HANDLES and stars == 0 and not dims:
            args.append(f"{'req_in' if base == 'MPI_Request' else 'h_in'}({v})")
        elif (base == "MPI_File") and stars == 0 and not dims:
            args.append(f"file_in({v})")
        elif base == "MPI_File" and stars == 1 and not dims:
            pre.append(f"let mut t_{pn} = if {v}.is_null() {{ std::ptr::null_mut() }} else {{ file_in(*{v}) }};")
            args.append(f"if {v}.is_null() {{ std::ptr::null_mut() }} else {{ &mut t_{pn} }}")
            post.append(f"if !{v}.is_null() {{ *{v} = file_out(t_{pn}); }}")
        elif base in HANDLES and ((stars == 1 and not dims) or (stars == 0 and dims == "[]")):
            if stars == 1 and name in LATE_OUTPUTS and pn == "newcomm":
                # Written by the engine when the operation completes, after this call returns:
                # into the caller's slot, zeroed, whose low half then holds the MPICH handle, as
                # a user handle's pointer is in both pointer ABIs (src/abi_ompi/objects.rs, abi5::conv::h_out).
                # Until then it reads as MPI_COMM_NULL (the standard ABI's is 0x100, not 0).
                null = "0x100 as Handle" if CFG["prefix"] == "oxabi_" else "std::ptr::null_mut()"
                pre.append(f"if !{v}.is_null() {{ *{v} = {null}; }}")
                args.append(f"{v} as *mut c_int")
            elif stars == 1 and not (pn in ARRAY_LEN or pn in SPECIAL_LEN):
                reads = const or (INOUT.search(name) and not (name in ("MPI_Imrecv", "MPI_Imrecv_c") and pn == "request"))
                init = f"{'req_in' if base == 'MPI_Request' else 'h_in'}(*{v})" if reads else "0"
                pre.append(f"let mut t_{pn}: c_int = if {v}.is_null() {{ 0 }} else {{ {init} }};")
                args.append(f"if {v}.is_null() {{ std::ptr::null_mut() }} else {{ &mut t_{pn} }}")
                if not const:
                    out = {"MPI_Message": "msg_out", "MPI_Request": "req_out"}.get(base, "h_out")
                    # An output the engine did not write (a failed call) leaves the caller's as it was.
                    written = "" if reads else f" && t_{pn} != 0"
                    post.append(f"if !{v}.is_null(){written} {{ *{v} = {out}(t_{pn}); }}")
            else:
                if pn in SPECIAL_LEN:
                    if comm_name is None:
                        raise Unsupported(f"array {pn} without a communicator")
                    n = f"peers(h_in({comm_name}))"
                    if "neighbor" in name.lower():  # one per neighbour: sent to the out-, received from the in-neighbours
                        n = f"neighbor_degrees(h_in({comm_name})).{1 if pn == 'sendtypes' else 0}"
                else:
                    cands = [c for c in ARRAY_LEN.get(pn, []) if c in names]
                    if not cands:
                        raise Unsupported(f"array {pn} of unknown length")
                    n = cands[0]
                if pn == "array_of_requests" and not const and re.match(r"^MPI_(Wait|Test)(all|any|some)$|^MPI_Startall$", name):
                    # Read and written by the engine: converted in the caller's array, no copy.
                    args.append(f"requests_narrow({v}, len({n}))")
                    post.append(f"requests_widen({v}, len({n}));")
                    continue
                if const or name != "MPI_Type_get_contents":
                    pre.append(f"let mut t_{pn}: Vec<c_int> = handles_in({v}, len({n}));")
                else:  # an output only: its initial content may be garbage
                    pre.append(f"let mut t_{pn}: Vec<c_int> = vec![0; len({n})];")
                args.append(f"arr_ptr({v}, &mut t_{pn})")
                if not const:
                    post.append(f"handles_out({v}, &t_{pn});")
        elif base in HANDLES:
            raise Unsupported(f"handle parameter {p}")
        elif base == "MPI_Status":
            if dims or pn == "array_of_statuses":
                # The engine writes arrays of statuses in the layer's layout itself (DIRECT).
                if name not in DIRECT:
                    raise Unsupported("array of statuses: make it a DIRECT entry (src/ffi/layer.rs)")
                continue
            elif not const and not name.startswith(("MPI_Status_set", "MPI_Status_get_")):
                # An output only: not read (status_out writes it only if the engine did).
                pre.append(f"let mut t_{pn} = status_tmp();")
                args.append(f"status_ptr({v}, &mut t_{pn})")
                post.append(f"status_out({v}, &t_{pn});")
            else:
                pre.append(f"let mut t_{pn} = status_in({v});")
                args.append(f"status_ptr({v}, &mut t_{pn})")
                # MPI_Status_get_* read it (MPI 5.0 makes it const; MPICH's header does not).
                if not const and not name.startswith("MPI_Status_get_"):
                    post.append(f"status_out({v}, &t_{pn});")
        elif base == "int" and stars == 0 and not dims and (pn in INT_IN or (name, pn) in FN_INT_IN) and name not in NO_INT_MAP:
            args.append(f"{FN_INT_IN.get((name, pn)) or INT_IN[pn]}({v})")
        elif (name, pn) in SAME_OUT:
            args.append(v)
        elif base == "int" and stars == 1 and not dims and not const and ((name, pn) in FN_PTR_OUT or pn in PTR_OUT) and name not in NO_INT_MAP:
            conv = FN_PTR_OUT.get((name, pn)) or PTR_OUT[pn]
            inconv = {"code_out": "code_in", "keyval_out": "keyval_in", "amode_out": "amode_in"}.get(conv)
            init = f"{inconv}(*{v})" if inconv else "0"
            pre.append(f"let mut t_{pn}: c_int = if {v}.is_null() {{ 0 }} else {{ {init} }};")
            args.append(f"if {v}.is_null() {{ std::ptr::null_mut() }} else {{ &mut t_{pn} }}")
            post.append(f"if !{v}.is_null() {{ *{v} = {conv}(t_{pn}); }}")
        elif base == "int" and dims == "[]" and pn in ("array_of_distribs", "array_of_dargs"):
            f = "distrib_in" if pn == "array_of_distribs" else "darg_in"
            pre.append(f"let t_{pn}: Vec<c_int> = ints_in({v}, len(ndims), {f});")
            args.append(f"if {v}.is_null() {{ {v} }} else {{ t_{pn}.as_ptr() }}")
        elif base == "int" and dims == "[]" and name == "MPI_Group_translate_ranks":
            if const:
                pre.append(f"let t_{pn}: Vec<c_int> = ints_in({v}, len(n), rank_in);")
                args.append(f"if {v}.is_null() {{ {v} }} else {{ t_{pn}.as_ptr() }}")
            else:
                args.append(v)
                post.append(f"ints_out({v}, len(n), rank_out);")
        elif base == "int" and pn in ("sourceweights", "destweights", "weights"):
            args.append(f"weights_in_const({v})" if const else f"weights_in({v})")
        elif base == "void" and stars == 1 and pn in ("sendbuf", "recvbuf"):
            args.append(f"buf_in({v})" if const else f"buf_in_mut({v})")
        elif base == "void" and stars == 1 and pn == "buffer" and name.endswith("attach_buffer") or name == "MPI_Buffer_attach" and pn == "buffer":
            args.append(v)
        else:
            args.append(v)
    if name in ("MPI_Type_get_contents", "MPI_Type_get_contents_c"):
        post.append(f"if rc == 0 {{ contents_out(h_in(datatype), len(max_integers), array_of_integers, {'true' if name.endswith('_c') else 'false'}); }}")
    if name == "MPI_Win_get_attr":
        post.append("win_attr_out(win_keyval, attribute_val, flag);")
    if name in ("MPI_Comm_get_attr", "MPI_Attr_get"):
        keyval = "comm_keyval" if name == "MPI_Comm_get_attr" else "keyval"
        post.append(f"comm_attr_out({keyval}, attribute_val, flag);")
    if is_t and post:
        # An MPI_T call that failed wrote no output: the caller's stay as they were.
        post = ["if rc == 0 {"] + ["    " + x for x in post] + ["}"]
    call = f"crate::ffi::P{name}({', '.join(args)})"
    if name in DIRECT:
        return direct(name, sig)
    body = []
    body += pre
    if rret == "c_int":
        body.append(f"let rc = {call};")
        body += post
        body.append("code_out(rc)")
        fallback = "ERR_INTERN"
    else:
        body.append(call)
        fallback = "0 as _" if rret != "f64" else "0.0"
    inner = "\n        ".join(body)
    return (f"#[no_mangle]\n#[allow(non_snake_case, unused_mut, unused_unsafe, clippy::missing_safety_doc)]\n"
            f"pub unsafe extern \"C\" fn {CFG['prefix']}{name}({', '.join(sig)}) -> {rret} {{\n"
            f"    // SAFETY: the caller passes what the ABI prototype says; each conversion reads or writes\n"
            f"    // only what the MPICH-ABI function it stands for would.\n"
            f"    guard({fallback}, || unsafe {{\n        {inner}\n    }})\n}}\n")


def direct(name, sig):
    """The wrapper of a DIRECT function: a jump to its engine entry with the caller's arguments,
    which the entry converts (crate::ffi::layer). The entries are `extern "C"` (they never
    unwind): nothing here can panic."""
    names = [x.split(":")[0] for x in sig]
    entry, counted = DIRECT[name]
    return (f"#[no_mangle]\n#[allow(non_snake_case, clippy::missing_safety_doc)]\n"
            f"pub unsafe extern \"C\" fn {CFG['prefix']}{name}({', '.join(sig)}) -> c_int {{\n"
            "    // SAFETY: the caller passes what the ABI prototype says; the entry converts the arguments,\n"
            "    // writes the requests and statuses in this ABI and returns this ABI's code.\n"
            f"    unsafe {{ crate::ffi::layer::{entry}::<Abi{', _' if counted else ''}>({', '.join(names)}) }}\n}}\n")


def unsupported_stub(ret, name, params, why):
    sig = []
    for p in params:
        const, base, stars, pn, dims = split_param(p)
        v = "r#" + pn if pn in ("type", "in", "ref", "fn", "mod", "match") else pn
        try:
            t = rtype(base, stars, const, dims, True)
        except Unsupported:
            t = "*mut c_void"
        sig.append(f"_{pn}: {t}")
    return (f"#[no_mangle]\n#[allow(non_snake_case, clippy::missing_safety_doc)]\n"
            f"pub unsafe extern \"C\" fn {CFG['prefix']}{name}({', '.join(sig)}) -> c_int {{\n"
            f"    unsupported(\"{name}\")\n}}\n")


def main():
    header = (ROOT / "include/mpi.h").read_text()
    protos = [p for p in map(parse, header.splitlines()) if p]
    seen, out, names, unsup, decls = set(), [], [], [], []
    for ret, name, params, line in protos:
        if name in seen or NOT_ABI.search(name) or any("MPI_Fint" in p or "MPI_F08_status" in p for p in params):
            continue
        seen.add(name)
        decls.append(line)
        if name in HAND:
            names.append(name)
            continue
        try:
            out.append(gen(ret, name, params))
        except Unsupported as e:
            if ret != "int":
                continue
            out.append(unsupported_stub(ret, name, params, str(e)))
            unsup.append((name, str(e)))
        names.append(name)
    rs = ("// @generated by scripts/gen-mpi-abi.py from include/mpi.h; do not edit.\n"
          "use super::conv::*;\nuse super::mpit::*;\nuse std::os::raw::{c_char, c_int, c_void};\n\n"
          "/// The functions this file reports as unsupported (MPI_ERR_UNSUPPORTED_OPERATION).\n#[allow(dead_code)] // read by no code: a list for readers, empty when all convert\n"
          f"pub const UNSUPPORTED: [&str; {len(unsup)}] = [{', '.join(repr(n).replace(chr(39), chr(34)) for n, _ in unsup)}];\n\n"
          + "\n".join(out))
    (ROOT / "src/abi5/wrappers.rs").write_text(rs)
    extra = ["MPI_Abi_get_version", "MPI_Abi_get_info", "MPI_Abi_get_fortran_info", "MPI_Abi_set_fortran_info",
             "MPI_Abi_get_fortran_booleans", "MPI_Abi_set_fortran_booleans"]
    for obj in ["Comm", "Errhandler", "File", "Group", "Info", "Message", "Op", "Request", "Session", "Type", "Win"]:
        extra += [f"MPI_{obj}_toint", f"MPI_{obj}_fromint"]
    s = ["# @generated by scripts/gen-mpi-abi.py; do not edit.",
         "# libmpi_abi.so.1: each MPI_X and PMPI_X jumps to liboxmpi.so's oxabi_MPI_X.", "\t.text"]
    for n in names + extra:
        for sym in (n, "P" + n):
            s += [f"\t.globl {sym}", f"\t.type {sym}, @function", f"{sym}:", f"\tjmp *oxabi_{n}@GOTPCREL(%rip)",
                  f"\t.size {sym}, .-{sym}"]
    s.append('\t.section .note.GNU-stack,"",@progbits')
    (ROOT / "c-src/mpi_abi_entry.S").write_text("\n".join(s) + "\n")
    h = (ROOT / "include/mpi_abi.h").read_text()
    a, b = "/* BEGIN GENERATED PROTOTYPES */\n", "/* END GENERATED PROTOTYPES */"
    i, j = h.index(a) + len(a), h.index(b)
    pro = [d for d in decls] + [d.replace("int MPI_", "int PMPI_", 1).replace("double MPI_", "double PMPI_", 1).replace("MPI_Aint MPI_", "MPI_Aint PMPI_", 1) for d in decls]
    (ROOT / "include/mpi_abi.h").write_text(h[:i] + "\n".join(pro) + "\n" + h[j:])
    unsup = unsup + HAND_UNSUPPORTED
    md = ["# MPI-5 ABI layer: functions not converted yet", "",
          "libmpi_abi.so.1 exports these (MPI_ and PMPI_ names) but they return MPI_ERR_UNSUPPORTED_OPERATION",
          "through the error handler, with a message naming the function. Generated by scripts/gen-mpi-abi.py.", "",
          f"{len(unsup)} functions:", ""] + [f"- `{n}`: {w}" for n, w in unsup]
    (ROOT / "docs/MPI_ABI_UNSUPPORTED.md").write_text("\n".join(md) + "\n")
    print(f"{len(names) + len(extra)} functions, {len(unsup)} unsupported", file=sys.stderr)


def with_aliases(text, handles):
    """`handles` plus the header's aliases (`#define MPI_LONG_LONG MPI_LONG_LONG_INT`): each header
    spells one name of a pair as the alias, so matching by name needs both."""
    for a, b in re.findall(r"^#define (MPI_\w+)\s+(MPI_\w+)\s*(?:/\*.*\*/)?$", text, re.M):
        if b in handles and a not in handles:
            handles[a] = handles[b]
    return handles


def tables():
    """src/abi5/tables.rs: the predefined handles, error classes and attribute keys of both ABIs,
    matched by name (include/mpi.h is the MPICH ABI, include/mpi_abi.h the standard's)."""
    mpich = (ROOT / "include/mpi.h").read_text()
    abi = (ROOT / "include/mpi_abi.h").read_text()
    hre = re.compile(r"^#define (MPI_\w+)\s+\(?\((MPI_\w+)\)\(?(0x[0-9a-fA-F]+|0)\)", re.M)
    m_h = with_aliases(mpich, {n: (t, int(v, 16)) for n, t, v in hre.findall(mpich)})
    a_h = with_aliases(abi, {n: (t, int(v, 16)) for n, t, v in hre.findall(abi)})
    ire = re.compile(r"^(?:#define|\s+)\s*(MPI_\w+)\s*=?\s*(-?0x[0-9a-fA-F]+|-?\d+),?\s*(?:/\*.*)?$", re.M)
    m_i = {n: int(v, 0) for n, v in ire.findall(mpich)}
    a_i = {n: int(v, 0) for n, v in ire.findall(abi)}
    to_mpich = [0] * 0x300
    pairs = []
    for n, (t, v) in a_h.items():
        if n in m_h and t != "MPI_File":
            to_mpich[v] = m_h[n][1]
            pairs.append((m_h[n][1], v, n))
    absent = sorted({v for n, (t, v) in a_h.items() if t == "MPI_Datatype" and v != 0x200 and not to_mpich[v]})
    out = ["// @generated by scripts/gen-mpi-abi.py from include/mpi.h and include/mpi_abi.h; do not edit.",
           "/// MPICH-ABI value of each predefined handle of the standard ABI (index = ABI value; 0 = none).",
           f"pub static TO_MPICH: [u32; 0x300] = [{', '.join(hex(x) for x in to_mpich)}];",
           "/// The standard's optional datatypes oxmpi lacks (" + ", ".join(n for n, (t, v) in sorted(a_h.items(), key=lambda x: x[1][1]) if v in absent) + ").",
           f"pub static ABSENT_DATATYPES: [u16; {len(absent)}] = [{', '.join(hex(x) for x in absent)}];",
           "/// Standard-ABI value of a predefined MPICH-ABI handle.",
           "pub fn to_abi(h: u32) -> Option<usize> {", "    Some(match h {"]
    seen = set()
    for mv, av, n in sorted(pairs):
        if n == "MPI_MESSAGE_NULL":
            continue  # = MPICH's MPI_REQUEST_NULL; message outputs use conv::msg_out
        if mv in seen:
            continue
        seen.add(mv)
        out.append(f"        {hex(mv)} => {hex(av)}, // {n}")
    out += ["        _ => return None,", "    })", "}"]
    errs = [n for n in a_i if n.startswith("MPI_ERR_") or n.startswith("MPI_T_ERR_")]
    e2a = [-1] * 128
    e2a[0] = 0
    for n in errs:
        if n in m_i and 0 <= m_i[n] < 128:
            e2a[m_i[n]] = a_i[n]
    out.append("/// Standard-ABI value of each MPICH error class (index; -1 = not a class).")
    out.append(f"pub static ERR_TO_ABI: [i32; 128] = [{', '.join(map(str, e2a))}];")
    keys = ["MPI_TAG_UB", "MPI_IO", "MPI_HOST", "MPI_WTIME_IS_GLOBAL", "MPI_UNIVERSE_SIZE", "MPI_APPNUM",
            "MPI_LASTUSEDCODE", "MPI_WIN_BASE", "MPI_WIN_DISP_UNIT", "MPI_WIN_SIZE", "MPI_WIN_CREATE_FLAVOR",
            "MPI_WIN_MODEL", "MPI_KEYVAL_INVALID"]
    out.append("/// Predefined attribute keys: (standard ABI, MPICH ABI).")
    out.append(f"pub static KEYVALS: [(i32, i32); {len(keys)}] = [{', '.join(f'({a_i[k]}, {hex(m_i[k])})' for k in keys)}];")
    for dom, pre in (("T_VERBOSITIES", "MPI_T_VERBOSITY_"), ("T_BINDS", "MPI_T_BIND_"), ("T_SCOPES", "MPI_T_SCOPE_"),
                     ("T_PVAR_CLASSES", "MPI_T_PVAR_CLASS_"), ("T_CB_SAFETIES", "MPI_T_CB_REQUIRE_"), ("T_SOURCE_ORDERS", "MPI_T_SOURCE_")):
        ns = [n for n in a_i if n.startswith(pre) and n in m_i]
        out.append(f"/// MPI_T constants (standard ABI, MPICH ABI): {', '.join(ns)}.")
        out.append(f"pub static {dom}: [(i32, i32); {len(ns)}] = [{', '.join(f'({a_i[n]}, {m_i[n]})' for n in ns)}];")
    (ROOT / "src/abi5/tables.rs").write_text("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------------------
# Open MPI 4.1's ABI (libmpi.so.40): same wrappers (gen() above, with conversions from
# src/abi_ompi/conv.rs), Open MPI's function set and predefined objects, constants as its header
# numbers them. Reads Debian's libopenmpi-dev header (OMPI_MPI_H overrides its path).
OMPI_H = pathlib.Path(__import__("os").environ.get("OMPI_MPI_H", "/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h"))
# Bytes of each predefined object (nm -S of Open MPI 4.1's libmpi.so.40; scripts/check-ompi-abi.sh
# compares): a program may copy-relocate them, so ours must be exactly as large.
OMPI_SIZES = {"communicator": 0x200, "datatype": 0x200, "errhandler": 0x400, "file": 0x600, "group": 0x100,
              "info": 0x100, "message": 0x100, "op": 0x800, "request": 0x100, "win": 0x200}
# Open MPI's Fortran sentinels (mpif-sentinels.h COMMON blocks, defined in its libmpi.so.40) and
# their sizes as a program's blocks have them; the order is src/abi_ompi/fortran/sentinels.rs's.
OMPI_F_SENTINELS = [("mpi_fortran_bottom_", 4), ("mpi_fortran_in_place_", 4), ("mpi_fortran_status_ignore_", 24),
                    ("mpi_fortran_statuses_ignore_", 24), ("mpi_fortran_errcodes_ignore_", 4),
                    ("mpi_fortran_argv_null_", 1), ("mpi_fortran_argvs_null_", 1), ("mpi_fortran_unweighted_", 4),
                    ("mpi_fortran_weights_empty_", 4)]
OMPI_MPIF_HANDLES = OMPI_H.parent / "mpif-handles.h"
# Written by hand in src/abi_ompi/hand.rs: handle <-> Fortran integer, and the predefined
# attribute callbacks (OMPI_C_MPI_*_FN, what MPI_COMM_DUP_FN etc. name in Open MPI's mpi.h).
OMPI_HAND = re.compile(r"^MPI_\w+_(c2f|f2c)$")
# Written by hand in src/abi_ompi/callbacks.rs (the application's functions, called with Open MPI handles).
# Written by hand in src/abi_ompi/ (besides the handle conversions): callbacks, arrays of computed
# length, and MPI_Get_version (Open MPI 4.1's 3.1) and MPI_Get_library_version (naming this ABI), version.rs.
OMPI_CALLBACKS = {"MPI_Op_create", "MPI_Grequest_start", "MPI_Comm_create_errhandler", "MPI_Errhandler_create", "MPI_Win_create_errhandler",
                  "MPI_File_create_errhandler", "MPI_Comm_spawn", "MPI_Comm_spawn_multiple", "MPI_Keyval_create", "MPI_Comm_create_keyval",
                  "MPI_Type_create_keyval", "MPI_Win_create_keyval", "MPI_Get_version", "MPI_Get_library_version", "MPI_Register_datarep"}
# Constants that differ between the ABIs, by domain: the generator asks a C compiler for their
# values under both headers and writes (Open MPI, MPICH) pairs into src/abi_ompi/tables.rs.
OMPI_DOMAINS = {
    "RANKS": ["MPI_ANY_SOURCE", "MPI_PROC_NULL", "MPI_ROOT"],
    "THREADS": ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"],
    "COMPARES": ["MPI_IDENT", "MPI_CONGRUENT", "MPI_SIMILAR", "MPI_UNEQUAL"],
    "TOPOS": ["MPI_GRAPH", "MPI_CART", "MPI_DIST_GRAPH"],
    "SPLITS": ["MPI_COMM_TYPE_SHARED"],
    "LOCKS": ["MPI_LOCK_EXCLUSIVE", "MPI_LOCK_SHARED"],
    "ASSERTS": ["MPI_MODE_NOCHECK", "MPI_MODE_NOPRECEDE", "MPI_MODE_NOPUT", "MPI_MODE_NOSTORE", "MPI_MODE_NOSUCCEED"],
    "AMODES": ["MPI_MODE_CREATE", "MPI_MODE_RDONLY", "MPI_MODE_WRONLY", "MPI_MODE_RDWR", "MPI_MODE_DELETE_ON_CLOSE",
               "MPI_MODE_UNIQUE_OPEN", "MPI_MODE_EXCL", "MPI_MODE_APPEND", "MPI_MODE_SEQUENTIAL"],
    "WHENCES": ["MPI_SEEK_SET", "MPI_SEEK_CUR", "MPI_SEEK_END"],
    "ORDERS": ["MPI_ORDER_C", "MPI_ORDER_FORTRAN"],
    "DISTRIBS": ["MPI_DISTRIBUTE_BLOCK", "MPI_DISTRIBUTE_CYCLIC", "MPI_DISTRIBUTE_NONE"],
    "DARGS": ["MPI_DISTRIBUTE_DFLT_DARG"],
    "TYPECLASSES": ["MPI_TYPECLASS_INTEGER", "MPI_TYPECLASS_REAL", "MPI_TYPECLASS_COMPLEX"],
    "KEYVALS": ["MPI_TAG_UB", "MPI_HOST", "MPI_IO", "MPI_WTIME_IS_GLOBAL", "MPI_APPNUM", "MPI_LASTUSEDCODE",
                "MPI_UNIVERSE_SIZE", "MPI_WIN_BASE", "MPI_WIN_SIZE", "MPI_WIN_DISP_UNIT", "MPI_WIN_CREATE_FLAVOR",
                "MPI_WIN_MODEL", "MPI_KEYVAL_INVALID"],
    "FLAVORS": ["MPI_WIN_FLAVOR_CREATE", "MPI_WIN_FLAVOR_ALLOCATE", "MPI_WIN_FLAVOR_DYNAMIC", "MPI_WIN_FLAVOR_SHARED"],
    "MODELS": ["MPI_WIN_UNIFIED", "MPI_WIN_SEPARATE"],
    # MPI_T (Open MPI 4.1 numbers its enums from 0; MPICH from 221, 9700, 60438, 240).
    "T_VERBOSITIES": [f"MPI_T_VERBOSITY_{w}_{l}" for w in ("USER", "TUNER", "MPIDEV") for l in ("BASIC", "DETAIL", "ALL")],
    "T_BINDS": ["MPI_T_BIND_NO_OBJECT"] + [f"MPI_T_BIND_MPI_{o}" for o in ("COMM", "DATATYPE", "ERRHANDLER", "FILE", "GROUP", "OP",
                                                                          "REQUEST", "WIN", "MESSAGE", "INFO")],
    "T_SCOPES": [f"MPI_T_SCOPE_{s}" for s in ("CONSTANT", "READONLY", "LOCAL", "GROUP", "GROUP_EQ", "ALL", "ALL_EQ")],
    "T_PVAR_CLASSES": [f"MPI_T_PVAR_CLASS_{c}" for c in ("STATE", "LEVEL", "SIZE", "PERCENTAGE", "HIGHWATERMARK", "LOWWATERMARK",
                                                         "COUNTER", "AGGREGATE", "TIMER", "GENERIC")],
}


def c_values(include_dir, names):
    """NAME -> int value of each name under `include_dir`/mpi.h, as a C compiler evaluates it."""
    import subprocess, tempfile, os
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d, "probe.c")
        src.write_text("#include <stdio.h>\n#include <mpi.h>\nint main(void) {\n"
                       + "".join(f'    printf("{n} %lld\\n", (long long)({n}));\n' for n in names) + "    return 0;\n}\n")
        exe = pathlib.Path(d, "probe")
        subprocess.run([os.environ.get("CC", "cc"), "-w", f"-I{include_dir}", str(src), "-o", str(exe)], check=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {n: int(v) for n, v in (l.split() for l in out.splitlines())}


def ompi_header():
    text = OMPI_H.read_text()
    flat = re.sub(r"\s+", " ", re.sub(r"/\*.*?\*/", " ", text, flags=re.S))
    return text, flat


def ompi_objects(text):
    """[(symbol, kind, [MPI_ names])] of Open MPI's predefined objects, in header order."""
    syms = re.findall(r"extern struct ompi_predefined_(\w+)_t (\w+);", text)
    names = {}
    for n, sym in re.findall(r"^#\s*define (MPI_\w+)\s+OMPI_PREDEFINED_GLOBAL\(\s*\w+\s*,\s*(\w+)\s*\)", text, re.M):
        names.setdefault(sym, []).append(n)
    for t, sym in re.findall(r"OMPI_PREDEFINED_GLOBAL\(\s*(\w+)\s*,\s*(\w+)\s*\)", text):
        OMPI_OBJECT_KIND.setdefault(sym, t)
    seen, out = set(), []
    for kind, sym in syms:
        if sym not in seen:
            seen.add(sym)
            out.append((sym, kind, names.get(sym, [])))
    return out


def ompi_main():
    CFG.update(status="OmpiStatus", prefix="oxompi_")
    text, flat = ompi_header()
    fnames = sorted(set(re.findall(r"OMPI_DECLSPEC (?:const )?\w+ ?\*? ?(MPI_\w+) ?\(", flat)))
    ours = {}
    for ret, name, params, line in filter(None, map(parse, (ROOT / "include/mpi.h").read_text().splitlines())):
        ours.setdefault(name, (ret, params))
    out, names, hand, unsup = [], [], [], []
    for name in fnames:
        if OMPI_HAND.match(name) or name in OMPI_CALLBACKS:
            hand.append(name)
            continue
        names.append(name)
        if name not in ours:
            out.append(f"#[no_mangle]\n#[allow(non_snake_case)]\npub extern \"C\" fn oxompi_{name}() -> c_int {{\n    unsupported(\"{name}\")\n}}\n")
            unsup.append((name, "not implemented by oxmpi's engine (no prototype in include/mpi.h)"))
            continue
        ret, params = ours[name]
        try:
            if any("MPI_Fint" in p or "MPI_F08_status" in p for p in params):
                raise Unsupported("Fortran status conversion (Open MPI's Fortran ABI is not provided yet)")
            out.append(gen(ret, name, params))
        except Unsupported as e:
            out.append(unsupported_stub(ret, name, params, str(e)))
            unsup.append((name, str(e)))
    rs = ("// @generated by scripts/gen-mpi-abi.py --abi ompi from include/mpi.h and Open MPI's mpi.h; do not edit.\n"
          "use super::conv::*;\nuse super::mpit::*;\nuse std::os::raw::{c_char, c_int, c_void};\n\n"
          "/// The functions this file reports as unsupported (MPI_ERR_UNSUPPORTED_OPERATION).\n#[allow(dead_code)] // read by no code: a list for readers, empty when all convert\n"
          f"pub const UNSUPPORTED: [&str; {len(unsup)}] = [{', '.join(chr(34) + n + chr(34) for n, _ in unsup)}];\n\n"
          + "\n".join(out))
    (ROOT / "src/abi_ompi/wrappers.rs").write_text(rs)
    objs = ompi_objects(text)
    callbacks = sorted(set(re.findall(r"OMPI_DECLSPEC int (OMPI_C_MPI_\w+) ?\(", flat)))
    s = ["# @generated by scripts/gen-mpi-abi.py --abi ompi; do not edit.",
         "# libmpi.so.40 (Open MPI 4.1's ABI): each MPI_X and PMPI_X jumps to liboxmpi.so's oxompi_MPI_X;",
         "# the predefined objects carry their MPICH-ABI handle in their first 4 bytes (src/abi_ompi/objects.rs).",
         "\t.text"]
    for n in names + hand:
        for sym in (n, "P" + n):
            s += [f"\t.globl {sym}", f"\t.type {sym}, @function", f"{sym}:", f"\tjmp *oxompi_{n}@GOTPCREL(%rip)", f"\t.size {sym}, .-{sym}"]
    for n in callbacks:
        s += [f"\t.globl {n}", f"\t.type {n}, @function", f"{n}:", f"\tjmp *oxompi_{n}@GOTPCREL(%rip)", f"\t.size {n}, .-{n}"]
    # Registers the objects' addresses (after relocation: a program's copy, if it made one).
    s += ["\t.type oxompi_ctor, @function", "oxompi_ctor:", "\tleaq oxompi_objects(%rip), %rdi",
          f"\tmovl ${len(objs)}, %esi", "\tleaq oxompi_objects_begin(%rip), %rdx", "\tleaq oxompi_objects_end(%rip), %rcx",
          "\tjmp oxompi_register@PLT", "\t.size oxompi_ctor, .-oxompi_ctor",
          '\t.section .init_array,"aw"', "\t.align 8", "\t.quad oxompi_ctor"]
    mhandles = {n: v for n, (t, v) in mpich_handles().items()}
    s += ["\t.data", "\t.align 64", "oxompi_objects_begin:"]
    rows = []
    for sym, kind, mpinames in objs:
        size = OMPI_SIZES[kind]
        h = next((mhandles[n] for n in mpinames if n in mhandles), 0)
        rows.append((sym, h, mpinames))
        s += [f"\t.globl {sym}", f"\t.type {sym}, @object", "\t.align 64", f"{sym}:", f"\t.long {hex(h)}", f"\t.zero {size - 4}",
              f"\t.size {sym}, {size}"]
    s += ["oxompi_objects_end:", "\t.local oxompi_f_status_ignore", "\t.comm oxompi_f_status_ignore, 24, 8"]
    # The COMMON blocks of Open MPI's mpif-sentinels.h (libmpi.so.40 defines them, libmpi_mpifh.so.40
    # compares addresses against them), registered like the objects: after relocation, the
    # program's own blocks when it has them (src/abi_ompi/fortran/sentinels.rs).
    s += ["\t.align 64"]
    for sym, size in OMPI_F_SENTINELS:
        s += [f"\t.globl {sym}", f"\t.type {sym}, @object", "\t.align 8", f"{sym}:", f"\t.zero {size}", f"\t.size {sym}, {size}"]
    for n in ("MPI_F_STATUS_IGNORE", "MPI_F_STATUSES_IGNORE"):
        s += [f"\t.globl {n}", f"\t.type {n}, @object", "\t.align 8", f"{n}:", "\t.quad oxompi_f_status_ignore", f"\t.size {n}, 8"]
    s += ['\t.section .data.rel,"aw"', "\t.align 8", "oxompi_objects:"] + [f"\t.quad {sym}" for sym, _, _ in objs]
    s += ["oxompi_f_sentinels:"] + [f"\t.quad {sym}" for sym, _ in OMPI_F_SENTINELS]
    s += ["\t.text", "\t.type oxompi_fctor, @function", "oxompi_fctor:", "\tleaq oxompi_f_sentinels(%rip), %rdi",
          f"\tmovl ${len(OMPI_F_SENTINELS)}, %esi", "\tjmp oxompif_register@PLT", "\t.size oxompi_fctor, .-oxompi_fctor",
          '\t.section .init_array,"aw"', "\t.align 8", "\t.quad oxompi_fctor"]
    s.append('\t.section .note.GNU-stack,"",@progbits')
    (ROOT / "c-src/ompi_abi_entry.S").write_text("\n".join(s) + "\n")
    ompi_tables(rows, text)
    md = ["# Open MPI ABI layer (libmpi.so.40): functions not converted yet", "",
          "libmpi.so.40 exports these (MPI_ and PMPI_ names) but they return MPI_ERR_UNSUPPORTED_OPERATION",
          "through the error handler, with a message naming the function. Generated by",
          "`scripts/gen-mpi-abi.py --abi ompi`.", "", f"{len(unsup)} of {len(names) + len(hand)} functions:", ""] + [f"- `{n}`: {w}" for n, w in unsup]
    (ROOT / "docs/OMPI_ABI_UNSUPPORTED.md").write_text("\n".join(md) + "\n")
    print(f"{len(names) + len(hand)} functions, {len(unsup)} unsupported, {len(objs)} objects", file=sys.stderr)


def mpich_handles():
    hre = re.compile(r"^#define (MPI_\w+)\s+\(?\((MPI_\w+)\)\(?(0x[0-9a-fA-F]+|0)\)", re.M)
    text = (ROOT / "include/mpi.h").read_text()
    return with_aliases(text, {n: (t, int(v, 16)) for n, t, v in hre.findall(text)})


# Open MPI's Fortran handles are indices into one f2c table per kind of object.
# The C type of each predefined object, by its symbol (filled from the header by ompi_objects()).
OMPI_OBJECT_KIND = {}
F_KINDS = ["MPI_Comm", "MPI_Group", "MPI_Datatype", "MPI_Op", "MPI_Info", "MPI_Errhandler", "MPI_Request", "MPI_Message", "MPI_Win"]


def ompi_fortran_handles(rows):
    """Rust lines: Open MPI's Fortran INTEGER of each predefined handle (mpif-handles.h) as the
    MPICH-ABI handle it stands for, per kind, and the way back; and as the predefined object it
    names (`rows`: the objects in registration order), both ways."""
    f = {n: int(v) for n, v in re.findall(r"parameter\s*\(\s*(MPI_\w+)\s*=\s*(-?\d+)\s*\)", OMPI_MPIF_HANDLES.read_text())}
    m = mpich_handles()
    obj_of = {n: i for i, (_, _, names) in enumerate(rows) for n in names}
    f_objects, obj_fortran = [], [-1] * len(rows)
    for k in F_KINDS:
        named = sorted((v, n) for n, v in f.items() if n in obj_of and OMPI_OBJECT_KIND[rows[obj_of[n]][0]] == k)
        t = [-1] * (max(v for v, _ in named) + 1)
        for v, n in named:
            t[v] = obj_of[n]
            if obj_fortran[obj_of[n]] < 0:
                obj_fortran[obj_of[n]] = v
        f_objects.append(t)
    out = ["/// Open MPI's Fortran handle kinds: the index into F_TO_MPICH.",
           *[f"pub const F_{k[4:].upper()}: usize = {i};" for i, k in enumerate(F_KINDS)],
           "/// The MPICH-ABI handle of each predefined Fortran handle of Open MPI's mpif.h, per kind",
           "/// (index = Fortran value; 0 = no predefined handle there)."]
    tables, back = [], {}
    for k in F_KINDS:
        named = sorted((v, n) for n, v in f.items() if n in m and m[n][0] == k)
        t = [0] * (max(v for v, _ in named) + 1)
        for v, n in named:
            t[v] = m[n][1]
            back.setdefault(m[n][1], (v, n))
        tables.append(t)
    out.append(f"pub static F_TO_MPICH: [&[u32]; {len(F_KINDS)}] = [{', '.join('&[' + ', '.join(hex(x) for x in t) + ']' for t in tables)}];")
    out += ["/// Open MPI's Fortran value of a predefined MPICH-ABI handle.", "#[inline]",
            "pub fn fortran_of(h: u32) -> Option<i32> {", "    Some(match h {"]
    for h, (v, n) in sorted(back.items()):
        out.append(f"        {hex(h)} => {v}, // {n}")
    out += ["        _ => return None,", "    })", "}",
            "/// The predefined object (index into OBJECT_HANDLES) of each Fortran handle, per kind (-1: none).",
            f"pub static F_OBJECTS: [&[i16]; {len(F_KINDS)}] = [{', '.join('&[' + ', '.join(map(str, t)) + ']' for t in f_objects)}];",
            "/// The Fortran handle of each predefined object (-1: none).",
            f"pub static OBJECT_FORTRAN: [i32; {len(rows)}] = [{', '.join(map(str, obj_fortran))}];"]
    return out


def ompi_tables(rows, text):
    """src/abi_ompi/tables.rs: the objects' MPICH handles in registration order, and the constants."""
    out = ["// @generated by scripts/gen-mpi-abi.py --abi ompi from include/mpi.h and Open MPI's mpi.h; do not edit.",
           "/// The MPICH-ABI handle each predefined object of libmpi.so.40 stands for, in the order",
           "/// c-src/ompi_abi_entry.S registers their addresses (0: none in oxmpi; calls report it invalid).",
           f"pub static OBJECT_HANDLES: [u32; {len(rows)}] = [{', '.join(hex(h) for _, h, _ in rows)}];",
           "/// Their symbols, in the same order.",
           f"pub static OBJECT_SYMBOLS: [&str; {len(rows)}] = [{', '.join(chr(34) + s + chr(34) for s, _, _ in rows)}];",
           "/// The object (index into OBJECT_HANDLES) a predefined MPICH handle is returned as.",
           "#[inline]", "pub fn object_of(h: u32) -> Option<usize> {", "    Some(match h {"]
    seen = set()
    for i, (sym, h, names) in enumerate(rows):
        if h and h not in seen:
            seen.add(h)
            out.append(f"        {hex(h)} => {i}, // {sym}")
    out += ["        _ => return None,", "    })", "}"]
    for sym, const in (("ompi_message_null", "MESSAGE_NULL"), ("ompi_mpi_file_null", "FILE_NULL")):
        out.append(f"/// The index of {sym}.")
        out.append(f"pub const {const}: usize = {[r[0] for r in rows].index(sym)};")
    out += ompi_fortran_handles(rows)
    mpich_h = (ROOT / "include/mpi.h").read_text()
    OMPI_DOMAINS["COMBINERS"] = [c for c in dict.fromkeys(re.findall(r"^\s*(MPI_COMBINER_\w+)", text, re.M))
                                 if re.search(rf"\b{c}\b", mpich_h)
                                 and c not in ("MPI_COMBINER_HVECTOR_INTEGER", "MPI_COMBINER_HINDEXED_INTEGER", "MPI_COMBINER_STRUCT_INTEGER")]  # removed in MPI-3.0
    names = sorted({n for v in OMPI_DOMAINS.values() for n in v})
    errs = sorted(set(re.findall(r"^#define (MPI_ERR_\w+|MPI_T_ERR_\w+|MPI_SUCCESS)\s+-?\d+", text, re.M)) - {"MPI_ERR_LASTCODE"})
    mpich_h = (ROOT / "include/mpi.h").read_text()
    errs = [e for e in errs if re.search(rf"\b{e}\b", mpich_h)]
    o = c_values(OMPI_H.parent, names + errs + ["MPI_ERR_LASTCODE"])
    m = c_values(ROOT / "include", names + errs)
    for dom, ns in OMPI_DOMAINS.items():
        pairs = [(o[n], m[n]) for n in ns]
        out.append(f"/// (Open MPI, MPICH) values of {', '.join(ns)}.")
        out.append(f"pub static {dom}: [(i32, i32); {len(pairs)}] = [{', '.join(f'({a}, {b})' for a, b in pairs)}];")
    e2o = [-1] * 128
    for e in errs:
        if 0 <= m[e] < 128:
            e2o[m[e]] = o[e]
    out.append("/// Open MPI's value of each MPICH error class (index; -1 = none in Open MPI 4.1).")
    out.append(f"pub static ERR_TO_OMPI: [i32; 128] = [{', '.join(map(str, e2o))}];")
    out.append("/// Open MPI's MPI_ERR_LASTCODE (the last predefined code).")
    out.append("#[allow(dead_code)] // for readers: Open MPI's codes above it are user codes")
    out.append(f"pub const ERR_LASTCODE: i32 = {o['MPI_ERR_LASTCODE']};")
    (ROOT / "src/abi_ompi/tables.rs").write_text("\n".join(out) + "\n")


if "--abi" in sys.argv and sys.argv[sys.argv.index("--abi") + 1] == "ompi":
    ompi_main()
else:
    tables()
    main()
