/* oxmpi-test: ranks=1 */
/* Datatype attributes: MPI_Type_create_keyval / set / get / delete / free_keyval; MPI_Type_dup
   runs copy callbacks (MPI_TYPE_DUP_FN, MPI_TYPE_NULL_COPY_FN, a user one that declines, a failing
   one that makes the dup fail), MPI_Type_free and overwriting/deleting run delete callbacks, a
   keyval freed while in use keeps working for its attributes, predefined types take attributes.
   Error handlers: MPI_ERRORS_RETURN on both MPI_COMM_WORLD and MPI_COMM_SELF (no communicator). */
#include "oxtest.h"

static int deletes, copies;
static int last_deleted;

static int del_fn(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t;
    (void)kv;
    CHECK(extra == (void *)&deletes, "extra_state %p", extra);
    deletes++;
    last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int copy_plus_one(MPI_Datatype t, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)kv;
    (void)extra;
    copies++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int copy_decline(MPI_Datatype t, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)kv;
    (void)extra;
    (void)in;
    (void)out;
    copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int copy_fail(MPI_Datatype t, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)kv;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static void expect(MPI_Datatype t, int kv, int want_flag, intptr_t want, int line)
{
    void *v = NULL;
    int flag = -1;
    MPI_OK(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(flag == want_flag, "line %d: flag %d, expected %d", line, flag, want_flag);
    if (want_flag)
        CHECK((intptr_t)v == want, "line %d: value %ld, expected %ld", line, (long)(intptr_t)v, (long)want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int k_plus, k_dup, k_null, k_decl;
    MPI_Datatype t, d;
    MPI_OK(MPI_Type_create_keyval(copy_plus_one, del_fn, &k_plus, &deletes));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &k_dup, NULL));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, del_fn, &k_null, &deletes));
    MPI_OK(MPI_Type_create_keyval(copy_decline, MPI_TYPE_NULL_DELETE_FN, &k_decl, NULL));

    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    expect(t, k_plus, 0, 0, __LINE__);
    MPI_OK(MPI_Type_set_attr(t, k_plus, (void *)10));
    MPI_OK(MPI_Type_set_attr(t, k_dup, (void *)20));
    MPI_OK(MPI_Type_set_attr(t, k_null, (void *)30));
    MPI_OK(MPI_Type_set_attr(t, k_decl, (void *)40));
    expect(t, k_plus, 1, 10, __LINE__);
    expect(t, k_dup, 1, 20, __LINE__);

    /* overwrite: delete callback sees the old value */
    MPI_OK(MPI_Type_set_attr(t, k_plus, (void *)11));
    CHECK(deletes == 1 && last_deleted == 10, "overwrite: deletes %d last %d", deletes, last_deleted);
    expect(t, k_plus, 1, 11, __LINE__);

    /* dup: copy callbacks */
    MPI_OK(MPI_Type_dup(t, &d));
    CHECK(copies == 2, "copy callbacks called %d times, expected 2", copies);
    expect(d, k_plus, 1, 12, __LINE__);
    expect(d, k_dup, 1, 20, __LINE__);
    expect(d, k_null, 0, 0, __LINE__);
    expect(d, k_decl, 0, 0, __LINE__);
    expect(t, k_plus, 1, 11, __LINE__);

    /* delete_attr on the dup, then free the dup: one delete each */
    deletes = 0;
    MPI_OK(MPI_Type_delete_attr(d, k_plus));
    CHECK(deletes == 1 && last_deleted == 12, "delete_attr: deletes %d last %d", deletes, last_deleted);
    expect(d, k_plus, 0, 0, __LINE__);
    MPI_OK(MPI_Type_delete_attr(d, k_plus)); /* not set: nothing happens */
    MPI_OK(MPI_Type_free(&d));
    CHECK(deletes == 1, "freeing a type without delete-callback attributes called %d deletes", deletes);

    /* a keyval freed while in use: the attribute stays, its delete callback runs on type free */
    int k_saved = k_plus;
    MPI_OK(MPI_Type_free_keyval(&k_plus));
    CHECK(k_plus == MPI_KEYVAL_INVALID, "free_keyval did not reset the handle");
    (void)k_saved;
    deletes = 0;
    MPI_OK(MPI_Type_free(&t));
    CHECK(deletes == 2, "Type_free ran %d delete callbacks, expected 2 (k_plus and k_null)", deletes);

    /* attributes on a predefined type */
    MPI_OK(MPI_Type_set_attr(MPI_DOUBLE, k_dup, (void *)99));
    expect(MPI_DOUBLE, k_dup, 1, 99, __LINE__);
    MPI_OK(MPI_Type_delete_attr(MPI_DOUBLE, k_dup));
    expect(MPI_DOUBLE, k_dup, 0, 0, __LINE__);

    /* errors: a failing copy callback fails the dup; a freed keyval is invalid */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int k_fail;
    MPI_OK(MPI_Type_create_keyval(copy_fail, MPI_TYPE_NULL_DELETE_FN, &k_fail, NULL));
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Type_set_attr(t, k_fail, (void *)1));
    d = MPI_DATATYPE_NULL;
    int rc = MPI_Type_dup(t, &d);
    CHECK(rc != MPI_SUCCESS, "dup with a failing copy callback succeeded");
    MPI_OK(MPI_Type_delete_attr(t, k_fail));
    MPI_OK(MPI_Type_free(&t));
    /* (MPICH 4.0.2 still accepts a freed keyval in MPI_Type_get_attr, so that is not tested) */
    MPI_OK(MPI_Type_free_keyval(&k_fail));
    CHECK(k_fail == MPI_KEYVAL_INVALID, "free_keyval did not reset the handle");
    MPI_OK(MPI_Type_free_keyval(&k_dup));
    MPI_OK(MPI_Type_free_keyval(&k_null));
    MPI_OK(MPI_Type_free_keyval(&k_decl));
    MPI_Finalize();
    printf("type_attr OK\n");
    return 0;
}
