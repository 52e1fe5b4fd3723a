/* oxmpi-test: ranks=1,2,4,8 */
/* MPI-4 sessions without MPI_Init (MPI 4.1 section 11.3): process sets mpi://WORLD and
   mpi://SELF with their info, groups from them, MPI_Comm_create_from_group with point-to-point,
   a barrier, attributes and the error handler given on the result,
   MPI_Intercomm_create_from_groups, MPI_Session_finalize, and a second session at the same
   time. MPI_Initialized stays false throughout. The sessions' own error handlers are in
   err_session.c, sessions after the last one ended in env_session_reinit.c. */
#include "oxtest.h"

static void check_not_initialized(void)
{
    int init = 1, fin = 1;
    MPI_OK(MPI_Initialized(&init));
    MPI_OK(MPI_Finalized(&fin));
    CHECK(!init && !fin, "MPI_Initialized %d, MPI_Finalized %d: sessions do not initialise the World model", init, fin);
}

static int info_int(MPI_Info info, const char *key)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "info key %s is missing", key);
    return atoi(v);
}

/* Ring exchange, a barrier and an attribute on an intracommunicator made from a session. */
static void use_comm(MPI_Comm comm, int size)
{
    int rank, n, keyval, *val, flag, got = -1, tok;
    MPI_Request rq[2];
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &n));
    CHECK(n == size, "size %d, want %d", n, size);
    tok = 1000 + rank;
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, (rank + n - 1) % n, 7, comm, &rq[0]));
    MPI_OK(MPI_Isend(&tok, 1, MPI_INT, (rank + 1) % n, 7, comm, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(got == 1000 + (rank + n - 1) % n, "ring got %d", got);
    MPI_OK(MPI_Barrier(comm));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
    MPI_OK(MPI_Comm_set_attr(comm, keyval, &tok));
    MPI_OK(MPI_Comm_get_attr(comm, keyval, &val, &flag));
    CHECK(flag && val == &tok, "attribute not found");
    MPI_OK(MPI_Comm_free_keyval(&keyval));
}

int main(void)
{
    MPI_Session s, s2;
    MPI_Info info;
    MPI_Group world, self;
    MPI_Comm comm, comm2;
    MPI_Errhandler got;
    int n, i, len, rank, size, rc;
    char name[MPI_MAX_PSET_NAME_LEN], val[MPI_MAX_INFO_VAL + 1];
    int found_world = 0, found_self = 0, flag;

    check_not_initialized();
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Info_free(&info));
    CHECK(s != MPI_SESSION_NULL, "MPI_Session_init gave MPI_SESSION_NULL");
    check_not_initialized();

    /* The session's info says the thread level. */
    MPI_OK(MPI_Session_get_info(s, &info));
    MPI_OK(MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag, "the session info has no thread_level");
    MPI_OK(MPI_Info_free(&info));

    /* Process sets: at least mpi://WORLD and mpi://SELF; length queries with pset_len = 0. */
    MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    for (i = 0; i < n; i++) {
        len = 0;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", i, len);
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) + 1 == len, "pset %d: \"%s\" but length %d", i, name, len);
        found_world |= strcmp(name, "mpi://WORLD") == 0;
        found_self |= strcmp(name, "mpi://SELF") == 0;
    }
    CHECK(found_world && found_self, "mpi://WORLD %d, mpi://SELF %d", found_world, found_self);

    MPI_OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
    size = info_int(info, "mpi_size");
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
    CHECK(info_int(info, "mpi_size") == 1, "mpi://SELF is not of size 1");
    MPI_OK(MPI_Info_free(&info));

    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    MPI_OK(MPI_Group_size(world, &n));
    CHECK(n == size, "group size %d, mpi_size %d", n, size);
    MPI_OK(MPI_Group_rank(world, &rank));
    CHECK(rank >= 0 && rank < size, "rank %d", rank);
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &self));
    MPI_OK(MPI_Group_size(self, &n));
    CHECK(n == 1, "mpi://SELF has %d members", n);

    /* Communicators from the groups. */
    MPI_OK(MPI_Comm_create_from_group(world, "org.oxmpi.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
    use_comm(comm, size);
    MPI_OK(MPI_Comm_get_errhandler(comm, &got));
    CHECK(got == MPI_ERRORS_RETURN, "the new communicator does not carry MPI_ERRORS_RETURN");
    rc = MPI_Send(&n, 1, MPI_INT, size, 0, comm);
    CHECK_CLASS(rc, MPI_ERR_RANK);
    MPI_OK(MPI_Comm_create_from_group(self, "org.oxmpi.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm2));
    use_comm(comm2, 1);
    MPI_OK(MPI_Comm_free(&comm2));
    /* An intercommunicator between the even and the odd ranks of mpi://WORLD. */
    if (size >= 2) {
        MPI_Group even, odd;
        int e = (size + 1) / 2, o = size / 2, rsize, lsize, x, y = -1, inter;
        int ranges[1][3] = {{0, size - 1, 2}}, ranges2[1][3] = {{1, size - 1, 2}};
        MPI_OK(MPI_Group_range_incl(world, 1, ranges, &even));
        MPI_OK(MPI_Group_range_incl(world, 1, ranges2, &odd));
        MPI_OK(MPI_Intercomm_create_from_groups(rank % 2 ? odd : even, 0, rank % 2 ? even : odd, 0, "org.oxmpi.test.inter",
                                                MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm2));
        MPI_OK(MPI_Comm_test_inter(comm2, &inter));
        MPI_OK(MPI_Comm_remote_size(comm2, &rsize));
        MPI_OK(MPI_Comm_size(comm2, &lsize));
        CHECK(inter && lsize == (rank % 2 ? o : e) && rsize == (rank % 2 ? e : o), "inter %d, sizes %d/%d", inter, lsize, rsize);
        /* Rank i of each group pairs with rank i of the other, where it exists. */
        x = rank;
        if (rank / 2 < (rank % 2 ? e : o)) {
            MPI_Request rq[2];
            MPI_OK(MPI_Irecv(&y, 1, MPI_INT, rank / 2, 3, comm2, &rq[0]));
            MPI_OK(MPI_Isend(&x, 1, MPI_INT, rank / 2, 3, comm2, &rq[1]));
            MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            CHECK(y == (rank % 2 ? rank - 1 : rank + 1), "intercommunicator partner sent %d", y);
        }
        MPI_OK(MPI_Barrier(comm2));
        MPI_OK(MPI_Comm_free(&comm2));
        MPI_OK(MPI_Group_free(&even));
        MPI_OK(MPI_Group_free(&odd));
    }

    /* A second session at the same time: its own groups, a communicator over both sessions' ranks. */
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    CHECK(s2 != s, "two sessions share a handle");
    {
        MPI_Group w2;
        int cmp;
        MPI_OK(MPI_Group_from_session_pset(s2, "mpi://WORLD", &w2));
        MPI_OK(MPI_Group_compare(w2, world, &cmp));
        CHECK(cmp == MPI_IDENT, "the two sessions' mpi://WORLD groups compare %d", cmp);
        MPI_OK(MPI_Comm_create_from_group(w2, "org.oxmpi.test.world2", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm2));
        use_comm(comm2, size);
        MPI_OK(MPI_Comm_free(&comm2));
        MPI_OK(MPI_Group_free(&w2));
    }

    MPI_OK(MPI_Comm_free(&comm));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Group_free(&self));
    MPI_OK(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "MPI_Session_finalize did not reset the handle");
    /* s2 is still open and works on. */
    MPI_OK(MPI_Session_get_num_psets(s2, MPI_INFO_NULL, &n));
    MPI_OK(MPI_Session_finalize(&s2));
    check_not_initialized();

    return 0;
}
