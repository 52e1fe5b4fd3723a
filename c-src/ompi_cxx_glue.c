/* What Open MPI's C++ bindings library (libmpi_cxx.so.40, Debian's libopenmpi3) needs from
 * libmpi.so.40 beyond the MPI functions and predefined objects: Open MPI internals its glue code
 * (ompi/mpi/cxx/cxx_glue.c, intercepts.cc) reaches into. Debian links libmpi_cxx into every
 * program built with mpicxx.openmpi and into some C libraries (PnetCDF), and loads it with
 * immediate binding, so without these symbols such programs do not even start.
 *
 * Programs that use the C API, or the C++ bindings' plain calls (inline wrappers of the C
 * functions), need nothing more. The C++-only features that go through Open MPI's internals
 * (C++ error handlers, keyval callbacks and reduction operations) are forwarded to
 * liboxmpi.so (src/abi_ompi/cxx_glue.rs); MPI::ERRORS_THROW_EXCEPTIONS is not an error handler
 * oxmpi knows, and ompi_errhandler_invoke (the bindings' internal error path) ends the job with
 * one line naming it. Built into libmpi.so.40 by scripts/install.sh. */
#include <stddef.h>

/* liboxmpi.so: prints the line and ends the job (src/abi_ompi/cxx_glue.rs). */
extern void oxompi_cxx_unsupported(const char *what) __attribute__((noreturn));

/* MPI::ERRORS_THROW_EXCEPTIONS's object (ompi_predefined_errhandler_t is 1024 bytes).
 * MPI::Init stores the C++ throwing functions into it; oxmpi does not know it as an error
 * handler, so setting it fails with MPI_ERR_ARG (an invalid handle) rather than throwing. */
__attribute__((aligned(64))) char ompi_mpi_errors_throw_exceptions[1024];

/* The table of internal error codes and its last used index (opal_pointer_array_t, an int):
 * read by the inline OMPI_ERRHANDLER_INVOKE the glue expands; empty. */
__attribute__((aligned(64))) char ompi_errcodes_intern[128];
int ompi_errcode_intern_lastused = 0;

/* The list of C++ data representations (Open MPI 4.1's opal_list_t: an object header of 16 bytes,
 * the sentinel item {header, next, prev, item_free} and the length), empty: the sentinel links to
 * itself. MPI::Register_datarep's glue appends its intercept state here (never removed, as in
 * Open MPI) and then calls MPI_Register_datarep with C-callable intercepts, which work. */
struct oxompi_list_item {
    void *obj_class;
    int obj_reference_count;
    struct oxompi_list_item *next, *prev;
    int item_free;
};
struct oxompi_list {
    void *obj_class;
    int obj_reference_count;
    struct oxompi_list_item sentinel;
    size_t length;
};
__attribute__((aligned(64))) struct oxompi_list ompi_registered_datareps = {
    .obj_reference_count = 1,
    .sentinel = {.obj_reference_count = 1, .next = &ompi_registered_datareps.sentinel, .prev = &ompi_registered_datareps.sentinel},
};

/* MPI::Comm/Win/File::Create_errhandler: an ompi_errhandler_t-shaped object the bindings store
 * their dispatcher into, whose handler calls it (src/abi_ompi/cxx_glue.rs). */
extern void *oxompi_cxx_errhandler_create(int type, void *fn, int lang);
void *ompi_errhandler_create(int type, void *fn, int lang) {
    return oxompi_cxx_errhandler_create(type, fn, lang);
}

int ompi_errhandler_invoke(void *errhandler, void *mpi_object, int type, int err_code, const char *message) {
    (void)errhandler, (void)mpi_object, (void)type, (void)err_code, (void)message;
    oxompi_cxx_unsupported("MPI::Comm/File::Call_errhandler through Open MPI's C++ glue");
}

/* MPI::Comm/Win/Datatype::Create_keyval: copy and del are the bindings' C-callable intercepts,
 * extra their state (src/abi_ompi/cxx_glue.rs). flags and bindings_extra are for Fortran. */
extern int oxompi_cxx_attr_create_keyval(int type, void *copy, void *del, int *key, void *extra);
int ompi_attr_create_keyval(int type, void *copy, void *del, int *key, void *extra, int flags, void *bindings_extra) {
    (void)flags, (void)bindings_extra;
    return oxompi_cxx_attr_create_keyval(type, copy, del, key, extra);
}

/* MPI::Op::Init: the op was just made with the bindings' intercept; liboxmpi.so calls the
 * intercept with the user's C++ function fn (src/abi_ompi/cxx_glue.rs). */
extern void oxompi_cxx_op_set(void *op, void *fn);
void ompi_op_set_cxx_callback(void *op, void *fn) {
    oxompi_cxx_op_set(op, fn);
}
