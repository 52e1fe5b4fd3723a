/* C++ attribute callbacks (MPI::Comm::Create_keyval, MPI::Datatype::Create_keyval) through both
 * bindings: the copy callback runs on Dup with the old object, the keyval, the extra state and
 * the value, and its new value and flag decide the copy's attribute; the delete callback runs on
 * Free (and on Delete_attr) with the value. */
#include <mpi.h>
#include <cstdio>
static int extra_state_target;
static int copies, deletes, last_deleted = -1;
static bool args_ok = true;
static MPI::Comm *expect_old;
static int comm_copy(const MPI::Comm &old, int keyval, void *extra, void *in, void *out, bool &flag) {
    copies++;
    if (extra != &extra_state_target) args_ok = false;
    if (expect_old && MPI::Comm::Compare(old, *expect_old) != MPI_IDENT) args_ok = false;
    (void)keyval;
    *static_cast<void **>(out) = static_cast<char *>(in) + 100; /* the copy gets value + 100 */
    flag = true;
    return MPI_SUCCESS;
}
static int comm_delete(MPI::Comm &comm, int keyval, void *value, void *extra) {
    deletes++;
    last_deleted = (int)(long)value;
    if (extra != &extra_state_target) args_ok = false;
    (void)comm, (void)keyval;
    return MPI_SUCCESS;
}
static int type_copies, type_deletes;
#ifdef OMPI_MAJOR_VERSION
typedef const void *type_in_t; /* Open MPI's MPI::Datatype::Copy_attr_function */
#else
typedef void *type_in_t;
#endif
static int type_copy(const MPI::Datatype &old, int, void *, type_in_t in, void *out, bool &flag) {
    type_copies++;
    int sz = 0;
    MPI_Type_size((MPI_Datatype)old, &sz); /* not old.Get_size(): a virtual call (cxx_errhandler.cc) */
    if (sz != 3 * (int)sizeof(double)) args_ok = false;
    *static_cast<void **>(out) = const_cast<void *>(in);
    flag = true;
    return MPI_SUCCESS;
}
static int type_delete(MPI::Datatype &, int, void *, void *) {
    type_deletes++;
    return MPI_SUCCESS;
}
int main(int argc, char **argv) {
    MPI::Init(argc, argv);
    int rank = MPI::COMM_WORLD.Get_rank(), size = MPI::COMM_WORLD.Get_size();
    bool ok = true;
    int key = MPI::Comm::Create_keyval(comm_copy, comm_delete, &extra_state_target);
    MPI::Intracomm a = MPI::COMM_WORLD.Dup();
    a.Set_attr(key, (void *)(long)(7 + rank));
    expect_old = &a;
    MPI::Intracomm b = a.Dup();
    void *v = 0;
    bool found = b.Get_attr(key, &v);
    ok = ok && copies == 1 && found && (long)v == 107 + rank;
    b.Free();
    ok = ok && deletes == 1 && last_deleted == 107 + rank;
    a.Delete_attr(key);
    ok = ok && deletes == 2 && last_deleted == 7 + rank;
    a.Free();
    ok = ok && deletes == 2; /* nothing left to delete */
    MPI::Comm::Free_keyval(key);

    int tkey = MPI::Datatype::Create_keyval(type_copy, type_delete, (void *)0);
    MPI::Datatype t = MPI::DOUBLE.Create_contiguous(3);
    t.Set_attr(tkey, (void *)42);
    MPI::Datatype t2 = t.Dup();
    ok = ok && type_copies == 1 && t2.Get_attr(tkey, &v) && (long)v == 42;
    t2.Free();
    t.Free();
    ok = ok && type_deletes == 2;
    MPI::Datatype::Free_keyval(tkey);

    ok = ok && args_ok;
    int good = ok, allgood = 0;
    MPI::COMM_WORLD.Allreduce(&good, &allgood, 1, MPI::INT, MPI::LAND);
    if (!ok) std::printf("rank %d: copies %d deletes %d last %d type %d/%d args %d\n", rank, copies, deletes, last_deleted, type_copies, type_deletes, args_ok);
    if (rank == 0) std::printf("cxx_keyval: %s (%d ranks)\n", allgood ? "OK" : "FAIL", size);
    MPI::Finalize();
    return allgood ? 0 : 1;
}
