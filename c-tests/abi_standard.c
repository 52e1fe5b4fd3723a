/* oxmpi-test: ranks=2,4 abi=mpi5 mpich=skip */
/* The MPI-5 standard ABI's own semantics, built with `mpicc -mpi-abi` (c-tests/run.sh --mpi-abi):
 * MPI_Abi_get_version/_info, *_toint/_fromint, the 32-byte status and its constants (PROC_NULL,
 * ANY_TAG), renumbered error classes, thread levels, comparison/topology/combiner values, and the
 * callbacks (user op, error handler, attribute copy/delete) seeing ABI handles. */
#include "oxtest.h"

static MPI_Datatype op_type_seen;
static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    op_type_seen = *dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static MPI_Comm eh_comm_seen;
static int eh_code_seen, eh_calls;
static void my_handler(MPI_Comm *comm, int *code, ...)
{
    eh_comm_seen = *comm;
    eh_code_seen = *code;
    eh_calls++;
}

static MPI_Comm copy_comm_seen;
static int copies, deletes;
static int my_copy(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)kv;
    CHECK(extra == (void *)&copies, "copy callback got extra_state %p", extra);
    copy_comm_seen = c;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int my_delete(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c; (void)kv; (void)val; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int provided, rank, size, major = -1, minor = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SERIALIZED ||
              provided == MPI_THREAD_MULTIPLE, "provided %d is not an ABI thread level", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* ABI version and info */
    MPI_OK(MPI_Abi_get_version(&major, &minor));
    CHECK(major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION, "MPI_Abi_get_version %d.%d", major, minor);
    MPI_Info info;
    char val[64];
    int flag, len = sizeof val;
    MPI_OK(MPI_Abi_get_info(&info));
    MPI_OK(MPI_Info_get_string(info, "mpi_aint_size", &len, val, &flag));
    CHECK(flag && atoi(val) == (int)sizeof(MPI_Aint), "mpi_aint_size %s", flag ? val : "(unset)");
    MPI_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");

    /* Both spellings of long long (each header makes one the alias), and an optional datatype
     * oxmpi lacks: size MPI_UNDEFINED, how the standard says programs detect it. */
    int tsize = 0;
    MPI_OK(MPI_Type_size(MPI_LONG_LONG, &tsize));
    CHECK(tsize == (int)sizeof(long long), "MPI_LONG_LONG size %d", tsize);
    MPI_OK(MPI_Type_size(MPI_LONG_LONG_INT, &tsize));
    CHECK(tsize == (int)sizeof(long long), "MPI_LONG_LONG_INT size %d", tsize);
    MPI_OK(MPI_Type_size(MPI_REAL2, &tsize));
    CHECK(tsize == MPI_UNDEFINED, "MPI_REAL2 (not supported) size %d, not MPI_UNDEFINED", tsize);
    MPI_Count csize = 0;
    MPI_OK(MPI_Type_size_c(MPI_INTEGER16, &csize));
    CHECK(csize == MPI_UNDEFINED, "MPI_INTEGER16 (not supported) size %lld, not MPI_UNDEFINED", (long long)csize);
    MPI_OK(MPI_Type_size(MPI_CHARACTER, &tsize));
    CHECK(tsize == 1 && MPI_Type_toint(MPI_CHARACTER) == 0x21e, "MPI_CHARACTER size %d", tsize);

    /* MPI 5.0's status accessors convert the sentinels and classes both ways. */
    MPI_Status acc;
    int gotv = 0;
    MPI_OK(MPI_Status_set_source(&acc, MPI_ANY_SOURCE));
    MPI_OK(MPI_Status_set_tag(&acc, MPI_ANY_TAG));
    MPI_OK(MPI_Status_set_error(&acc, MPI_ERR_ARG));
    CHECK(acc.MPI_SOURCE == MPI_ANY_SOURCE && acc.MPI_TAG == MPI_ANY_TAG && acc.MPI_ERROR == MPI_ERR_ARG,
          "Status_set_*: source %d tag %d error %d", acc.MPI_SOURCE, acc.MPI_TAG, acc.MPI_ERROR);
    MPI_OK(MPI_Status_get_source(&acc, &gotv));
    CHECK(gotv == MPI_ANY_SOURCE, "Status_get_source %d", gotv);
    MPI_OK(MPI_Status_get_tag(&acc, &gotv));
    CHECK(gotv == MPI_ANY_TAG, "Status_get_tag %d", gotv);
    MPI_OK(MPI_Status_get_error(&acc, &gotv));
    CHECK(gotv == MPI_ERR_ARG, "Status_get_error %d", gotv);

    /* MPI_Comm_idup: the new communicator is written when the request completes (into the
     * caller's handle, which reads as MPI_COMM_NULL until then). */
    MPI_Comm idup;
    MPI_Request idreq;
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &idup, &idreq));
    MPI_OK(MPI_Wait(&idreq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, idup, &gotv));
    CHECK(gotv == MPI_CONGRUENT, "Comm_compare(world, idup) = %d", gotv);
    MPI_OK(MPI_Comm_free(&idup));

    /* toint/fromint: predefined handles are their own values; user handles round-trip */
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101 && MPI_Type_toint(MPI_INT) == 0x209 && MPI_Op_toint(MPI_SUM) == 0x21,
          "toint of predefined handles");
    CHECK(MPI_Comm_fromint(0x102) == MPI_COMM_SELF && MPI_Request_fromint(MPI_Request_toint(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
          "fromint of predefined handles");
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK((uintptr_t)dup >= 4096, "a user handle %p is in the predefined range", (void *)dup);
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(dup)) == dup, "toint/fromint of a user communicator");
    int cmp;
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "Comm_compare(world, dup) = %d, not MPI_CONGRUENT (%d)", cmp, MPI_CONGRUENT);
    MPI_OK(MPI_Comm_compare(dup, dup, &cmp));
    CHECK(cmp == MPI_IDENT, "Comm_compare(dup, dup) = %d", cmp);

    /* status: a receive from MPI_PROC_NULL */
    MPI_Status st;
    int buf[4] = {0}, count = -1;
    MPI_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
          "PROC_NULL status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);

    /* ANY_SOURCE/ANY_TAG, a status array, MPI_STATUSES_IGNORE */
    int peer = rank ^ 1;
    if (peer < size) {
        int out[3] = {rank, rank + 1, rank + 2}, in[3] = {-1, -1, -1};
        MPI_Request reqs[2];
        MPI_Status sts[2];
        MPI_OK(MPI_Irecv(in, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &reqs[0]));
        MPI_OK(MPI_Isend(out, 3, MPI_INT, peer, 40 + rank, dup, &reqs[1]));
        MPI_OK(MPI_Waitall(2, reqs, sts));
        CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Waitall did not free the requests");
        MPI_OK(MPI_Get_count(&sts[0], MPI_INT, &count));
        CHECK(sts[0].MPI_SOURCE == peer && sts[0].MPI_TAG == 40 + peer && count == 3 && in[2] == peer + 2,
              "status source %d tag %d count %d", sts[0].MPI_SOURCE, sts[0].MPI_TAG, count);
        MPI_OK(MPI_Isend(out, 1, MPI_INT, peer, 1, dup, &reqs[0]));
        MPI_OK(MPI_Irecv(in, 1, MPI_INT, peer, 1, dup, &reqs[1]));
        MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    }

    /* user op: the function sees the ABI datatype; MPI_IN_PLACE */
    MPI_Op op;
    MPI_OK(MPI_Op_create(my_sum, 1, &op));
    int x = rank + 1;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, op, MPI_COMM_WORLD));
    CHECK(x == size * (size + 1) / 2, "user op: sum %d", x);
    int a = 5, b = 6; /* a local reduction calls the function on every rank */
    MPI_OK(MPI_Reduce_local(&a, &b, 1, MPI_INT, op));
    CHECK(b == 11 && op_type_seen == MPI_INT, "Reduce_local: %d, datatype %p", b, (void *)op_type_seen);
    MPI_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "Op_free did not set MPI_OP_NULL");

    /* error classes are the ABI's; a user handler sees the ABI communicator */
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    int rc = MPI_Send(buf, 1, MPI_INT, size + 5, 0, dup), cls = -1;
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "send to rank %d: class %d, not MPI_ERR_RANK (%d)", size + 5, cls, MPI_ERR_RANK);
    char msg[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(len > 0 && strstr(msg, "MPI_ERR_RANK") != NULL, "error string '%s'", msg);
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(my_handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(dup, eh));
    rc = MPI_Send(buf, 1, MPI_INT, 0, -7, dup);
    MPI_OK(MPI_Error_class(eh_code_seen, &cls));
    CHECK(eh_calls == 1 && eh_comm_seen == dup && cls == MPI_ERR_TAG, "handler: %d calls, comm %p (dup %p), class %d",
          eh_calls, (void *)eh_comm_seen, (void *)dup, cls);
    MPI_OK(MPI_Errhandler_free(&eh));

    /* attributes: predefined key, copy callback on dup, delete on free */
    int *tag_ub;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");
    int kv = MPI_KEYVAL_INVALID;
    MPI_OK(MPI_Comm_create_keyval(my_copy, my_delete, &kv, &copies));
    CHECK(kv != MPI_KEYVAL_INVALID, "create_keyval");
    static int value = 42;
    MPI_OK(MPI_Comm_set_attr(dup, kv, &value));
    MPI_Comm dup2;
    MPI_OK(MPI_Comm_dup(dup, &dup2));
    int *got;
    MPI_OK(MPI_Comm_get_attr(dup2, kv, &got, &flag));
    CHECK(copies == 1 && copy_comm_seen == dup && flag && *got == 42, "copy callback: %d copies, comm %p", copies, (void *)copy_comm_seen);
    MPI_OK(MPI_Comm_free(&dup2));
    CHECK(deletes == 1 && dup2 == MPI_COMM_NULL, "delete callback ran %d times", deletes);
    MPI_OK(MPI_Comm_free_keyval(&kv));

    /* datatypes: fixed-size encodings, combiner values */
    int sz;
    MPI_OK(MPI_Type_size(MPI_INT32_T, &sz));
    CHECK(sz == 4, "MPI_INT32_T size %d", sz);
    MPI_OK(MPI_Type_size(MPI_DOUBLE, &sz));
    CHECK(sz == 8, "MPI_DOUBLE size %d", sz);
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vec));
    int ni, na, nd, nc, comb;
    MPI_OK(MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && nd == 1, "combiner %d", comb);
    MPI_Datatype inner;
    int ints[3];
    MPI_OK(MPI_Type_get_contents(vec, 3, 0, 1, ints, NULL, &inner));
    CHECK(inner == MPI_DOUBLE && ints[2] == 3, "Type_get_contents: %p", (void *)inner);
    MPI_OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED, "named combiner %d", comb);
    MPI_OK(MPI_Type_free(&vec));
    (void)nc;

    /* topology */
    MPI_Comm cart;
    int dims[1] = {size}, periods[1] = {1}, src, dst, topo;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    MPI_OK(MPI_Topo_test(cart, &topo));
    CHECK(topo == MPI_CART, "Topo_test %d", topo);
    MPI_Comm line;
    periods[0] = 0;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line));
    MPI_OK(MPI_Cart_shift(line, 0, 1, &src, &dst));
    CHECK(rank > 0 || src == MPI_PROC_NULL, "Cart_shift source %d at the edge", src);
    MPI_OK(MPI_Comm_free(&line));
    MPI_OK(MPI_Comm_free(&cart));

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("abi_standard: OK\n");
    return 0;
}
