/* oxmpi-test: ranks=1,2 */
/* Attribute caching on communicators: keyvals with copy/delete callbacks (arguments, extra_state,
   the copy flag), MPI_COMM_DUP_FN and the NULL callbacks, delete callbacks on overwrite / delete /
   MPI_Comm_free / MPI_Finalize (MPI_COMM_SELF first, most recent first), freeing a keyval while an
   attribute still uses it, a failing copy callback failing MPI_Comm_dup, the deprecated MPI-1
   names, the predefined attributes, and the error classes of misuse under MPI_ERRORS_RETURN.
   Each rank uses its own values, so in threads mode ranks must not see each other's attributes. */
#include "oxtest.h"
#include <stdint.h>

#define MAXLOG 64
struct call {
    MPI_Comm comm;
    int keyval;
    void *val;
    void *extra;
};
static struct call copies[MAXLOG], deletes[MAXLOG];
static int ncopies, ndeletes;
static int extra_a = 11, extra_b = 22;
static int fail_copy;

static int copy_plus(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    if (ncopies < MAXLOG)
        copies[ncopies] = (struct call){oldcomm, keyval, in, extra};
    ncopies++;
    if (fail_copy)
        return MPI_ERR_OTHER;
    *(void **)out = (char *)in + 1000;
    *flag = 1;
    return MPI_SUCCESS;
}

static int copy_never(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    if (ncopies < MAXLOG)
        copies[ncopies] = (struct call){oldcomm, keyval, in, extra};
    ncopies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int fail_delete;
static int del_failing(MPI_Comm comm, int keyval, void *val, void *extra)
{
    return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int del(MPI_Comm comm, int keyval, void *val, void *extra)
{
    if (ndeletes < MAXLOG)
        deletes[ndeletes] = (struct call){comm, keyval, val, extra};
    ndeletes++;
    return MPI_SUCCESS;
}

#define V(x) ((void *)(intptr_t)(x))

static void expect_attr(MPI_Comm c, int key, void *want, int want_flag)
{
    void *got = V(-1);
    int flag = -1;
    MPI_OK(MPI_Comm_get_attr(c, key, &got, &flag));
    CHECK(flag == want_flag, "keyval %d: flag %d, expected %d", key, flag, want_flag);
    if (want_flag)
        CHECK(got == want, "keyval %d: value %p, expected %p", key, got, want);
}

/* Finalize checks: which values got deleted from MPI_COMM_SELF / MPI_COMM_WORLD, in what order. */
static int fin_order[8], nfin;
static int del_fin(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval;
    (void)extra;
    if (nfin < 8)
        fin_order[nfin] = (int)(intptr_t)val + (comm == MPI_COMM_SELF ? 100 : comm == MPI_COMM_WORLD ? 200 : 900);
    nfin++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size, rc;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* predefined attributes */
    int *pv, flag;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &pv, &flag));
    CHECK(flag && *pv >= 32767, "MPI_TAG_UB flag %d", flag);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &pv, &flag));
    CHECK(!flag || *pv == 0 || *pv == 1, "MPI_WTIME_IS_GLOBAL %d", *pv);
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &pv, &flag));
    CHECK(flag, "MPI_LASTUSEDCODE not set");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_SELF, MPI_HOST, &pv, &flag));
    CHECK(flag, "MPI_HOST not set");

    int ka, kb, kdup, knull;
    MPI_OK(MPI_Comm_create_keyval(copy_plus, del, &ka, &extra_a));
    MPI_OK(MPI_Comm_create_keyval(copy_never, del, &kb, &extra_b));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL));
    CHECK(ka != kb && ka != kdup && kb != knull && ka != MPI_KEYVAL_INVALID, "keyvals not distinct");
    CHECK(ka != MPI_TAG_UB && ka != MPI_LASTUSEDCODE && kdup != MPI_APPNUM, "keyval collides with a predefined key");

    /* set / get / unset */
    expect_attr(MPI_COMM_WORLD, ka, NULL, 0);
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, ka, V(10 + rank)));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kb, V(20 + rank)));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, V(30 + rank)));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, knull, V(40 + rank)));
    expect_attr(MPI_COMM_WORLD, ka, V(10 + rank), 1);
    expect_attr(MPI_COMM_WORLD, kb, V(20 + rank), 1);
    expect_attr(MPI_COMM_SELF, ka, NULL, 0);
    CHECK(ndeletes == 0 && ncopies == 0, "callbacks called too early: %d deletes %d copies", ndeletes, ncopies);

    /* overwrite: delete callback with the old value */
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, ka, V(50 + rank)));
    CHECK(ndeletes == 1, "overwrite: %d delete calls", ndeletes);
    CHECK(deletes[0].comm == MPI_COMM_WORLD && deletes[0].keyval == ka && deletes[0].val == V(10 + rank) &&
              deletes[0].extra == &extra_a,
          "overwrite: delete called with wrong arguments (val %p)", deletes[0].val);
    expect_attr(MPI_COMM_WORLD, ka, V(50 + rank), 1);

    /* dup: copy callbacks with the right arguments; flag decides */
    MPI_Comm d;
    ncopies = 0;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK(ncopies == 2, "dup: %d copy callbacks, expected 2 (ka, kb)", ncopies);
    for (int i = 0; i < 2; i++) {
        CHECK(copies[i].comm == MPI_COMM_WORLD, "copy callback oldcomm is not MPI_COMM_WORLD");
        if (copies[i].keyval == ka)
            CHECK(copies[i].val == V(50 + rank) && copies[i].extra == &extra_a, "copy ka: wrong in/extra");
        else
            CHECK(copies[i].keyval == kb && copies[i].val == V(20 + rank) && copies[i].extra == &extra_b,
                  "copy kb: wrong keyval/in/extra");
    }
    expect_attr(d, ka, V(1050 + rank), 1);
    expect_attr(d, kb, NULL, 0);
    expect_attr(d, kdup, V(30 + rank), 1);
    expect_attr(d, knull, NULL, 0);
    expect_attr(MPI_COMM_WORLD, ka, V(50 + rank), 1);

    /* dup of the dup (copies of copies), then delete_attr and free */
    MPI_Comm d2;
    MPI_OK(MPI_Comm_dup(d, &d2));
    expect_attr(d2, ka, V(2050 + rank), 1);
    expect_attr(d2, kdup, V(30 + rank), 1);
    ndeletes = 0;
    MPI_OK(MPI_Comm_delete_attr(d2, ka));
    CHECK(ndeletes == 1 && deletes[0].comm == d2 && deletes[0].val == V(2050 + rank), "delete_attr: %d calls", ndeletes);
    expect_attr(d2, ka, NULL, 0);
    MPI_OK(MPI_Comm_delete_attr(d2, ka)); /* not set: nothing happens */
    CHECK(ndeletes == 1, "delete_attr of an unset attribute called the callback");
    MPI_Comm d2h = d2;
    MPI_OK(MPI_Comm_free(&d2));
    CHECK(d2 == MPI_COMM_NULL, "free did not set MPI_COMM_NULL");
    CHECK(ndeletes == 1, "free of d2 (only kdup left, NULL delete) called %d deletes", ndeletes);
    (void)d2h;

    /* free a keyval while in use: the attribute stays, its delete callback runs at MPI_Comm_free */
    int ka_saved = ka;
    MPI_OK(MPI_Comm_free_keyval(&ka));
    CHECK(ka == MPI_KEYVAL_INVALID, "free_keyval did not set MPI_KEYVAL_INVALID");
    ndeletes = 0;
    MPI_Comm dh = d;
    MPI_OK(MPI_Comm_free(&d));
    CHECK(ndeletes == 1 && deletes[0].comm == dh && deletes[0].keyval == ka_saved && deletes[0].val == V(1050 + rank) &&
              deletes[0].extra == &extra_a,
          "free of d: %d deletes (keyval %d, val %p)", ndeletes, deletes[0].keyval, deletes[0].val);
    /* the attribute of the freed keyval can still be read through the old handle value */
    expect_attr(MPI_COMM_WORLD, ka_saved, V(50 + rank), 1);
    /* world still has ka's attribute; a dup still calls its copy callback */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    expect_attr(d, kdup, V(30 + rank), 1);
    ndeletes = 0;
    MPI_OK(MPI_Comm_free(&d));
    CHECK(ndeletes == 1 && deletes[0].keyval == ka_saved, "freed keyval's copied attribute not deleted (%d)", ndeletes);

    /* a failing copy callback fails the dup with its error */
    MPI_OK(MPI_Comm_create_keyval(copy_plus, del, &ka, &extra_a));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, ka, V(7)));
    fail_copy = 1;
    d = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_SELF, &d);
    CHECK(rc != MPI_SUCCESS, "dup with a failing copy callback succeeded");
    CHECK(d == MPI_COMM_NULL, "a failed dup did not give MPI_COMM_NULL");
    fail_copy = 0;
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_SELF, ka));
    MPI_OK(MPI_Comm_free_keyval(&ka));

    /* a failing delete callback fails delete_attr and set_attr's replacement; the value stays */
    int kfail;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_failing, &kfail, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kfail, V(70 + rank)));
    fail_delete = 1;
    CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kfail) != MPI_SUCCESS, "delete_attr with a failing callback succeeded");
    CHECK(MPI_Comm_set_attr(MPI_COMM_WORLD, kfail, V(80 + rank)) != MPI_SUCCESS, "set_attr over a failing delete callback succeeded");
    fail_delete = 0;
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kfail, V(90 + rank)));
    expect_attr(MPI_COMM_WORLD, kfail, V(90 + rank), 1);
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kfail));
    MPI_OK(MPI_Comm_free_keyval(&kfail));

    /* misuse */
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, V(1)), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &pv, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, V(1)), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
    int kp = MPI_TAG_UB;
    CHECK_CLASS(MPI_Comm_free_keyval(&kp), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_NULL, kdup, V(1)), MPI_ERR_COMM);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &pv, &flag));
    CHECK(flag && *pv >= 32767, "MPI_TAG_UB changed");

    /* deprecated MPI-1 names */
    int kold;
    MPI_OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kold, NULL));
    MPI_OK(MPI_Attr_put(MPI_COMM_WORLD, kold, V(60 + rank)));
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, kold, &pv, &flag));
    CHECK(flag && pv == V(60 + rank), "MPI_Attr_get: flag %d", flag);
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Attr_get(d, kold, &pv, &flag));
    CHECK(flag && pv == V(60 + rank), "MPI_DUP_FN did not copy: flag %d", flag);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Attr_delete(MPI_COMM_WORLD, kold));
    MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, kold, &pv, &flag));
    CHECK(!flag, "MPI_Attr_delete did not delete");
    MPI_OK(MPI_Keyval_free(&kold));
    CHECK(kold == MPI_KEYVAL_INVALID, "MPI_Keyval_free did not set MPI_KEYVAL_INVALID");

    /* Finalize: MPI_COMM_SELF's attributes first, most recent first, then MPI_COMM_WORLD's */
    int kf;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fin, &kf, NULL));
    int kf2;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fin, &kf2, NULL));
    int kf3;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fin, &kf3, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kf, V(1)));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kf2, V(2)));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kf3, V(3)));
    MPI_OK(MPI_Comm_free_keyval(&kf2));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kf, V(4)));
    ndeletes = 0;
    MPI_OK(MPI_Finalize());
    CHECK(nfin == 4, "MPI_Finalize ran %d finalize deletes, expected 4", nfin);
    CHECK(fin_order[0] == 103 && fin_order[1] == 102 && fin_order[2] == 101, "MPI_COMM_SELF attributes deleted in order %d %d %d",
          fin_order[0], fin_order[1], fin_order[2]);
    CHECK(fin_order[3] == 204, "MPI_COMM_WORLD attribute: %d", fin_order[3]);
    /* world also holds ka's (keyval freed) and kb's attributes, both with delete callbacks */
    CHECK(ndeletes == 2, "world's remaining attributes: %d deletes, expected 2", ndeletes);
    CHECK((deletes[0].val == V(50 + rank) && deletes[1].val == V(20 + rank)) ||
              (deletes[1].val == V(50 + rank) && deletes[0].val == V(20 + rank)),
          "world's remaining attributes deleted with values %p %p", deletes[0].val, deletes[1].val);
    return 0;
}
