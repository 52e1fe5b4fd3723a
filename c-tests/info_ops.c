/* oxmpi-test: ranks=1,2 */
/* MPI_Info (MPI 4.1 section 10): create before MPI_Init, set/get/get_valuelen/get_nkeys,
   get_nthkey in insertion order (replacing a value keeps the position), delete, dup, free,
   MPI_Info_get_string truncation and length reporting, MPI_INFO_ENV readable and duplicable,
   key/value length limits and the error classes under MPI_ERRORS_RETURN. */
#include "oxtest.h"

static void expect_value(MPI_Info info, const char *key, const char *want, int line)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = -1, len = -1;
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag == 1, "line %d: key %s not found", line, key);
    CHECK(strcmp(v, want) == 0, "line %d: %s = '%s', expected '%s'", line, key, v, want);
    MPI_OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag == 1 && len == (int)strlen(want), "line %d: valuelen of %s = %d", line, key, len);
}

static void expect_keys(MPI_Info info, const char **keys, int n, int line)
{
    int nk = -1;
    char k[MPI_MAX_INFO_KEY + 1];
    MPI_OK(MPI_Info_get_nkeys(info, &nk));
    CHECK(nk == n, "line %d: %d keys, expected %d", line, nk, n);
    for (int i = 0; i < n; i++) {
        MPI_OK(MPI_Info_get_nthkey(info, i, k));
        CHECK(strcmp(k, keys[i]) == 0, "line %d: key %d is '%s', expected '%s'", line, i, k, keys[i]);
    }
}

int main(int argc, char **argv)
{
    MPI_Info pre, info, dup, env;
    int flag, len, nk;
    char v[MPI_MAX_INFO_VAL + 2], big[MPI_MAX_INFO_VAL + 2];

    /* MPI 4: info objects before MPI_Init */
    MPI_OK(MPI_Info_create(&pre));
    MPI_OK(MPI_Info_set(pre, "early", "yes"));
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    expect_value(pre, "early", "yes", __LINE__);
    MPI_OK(MPI_Info_free(&pre));
    CHECK(pre == MPI_INFO_NULL, "freed info is not MPI_INFO_NULL");

    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_get_nkeys(info, &nk));
    CHECK(nk == 0, "new info has %d keys", nk);
    MPI_OK(MPI_Info_set(info, "zeta", "1"));
    MPI_OK(MPI_Info_set(info, "alpha", "two"));
    MPI_OK(MPI_Info_set(info, "mid", "three"));
    MPI_OK(MPI_Info_set(info, "zeta", "one"));
    {
        const char *keys[] = {"zeta", "alpha", "mid"};
        expect_keys(info, keys, 3, __LINE__);
    }
    expect_value(info, "zeta", "one", __LINE__);
    expect_value(info, "alpha", "two", __LINE__);
    flag = -1;
    MPI_OK(MPI_Info_get(info, "missing", 10, v, &flag));
    CHECK(flag == 0, "missing key found");
    MPI_OK(MPI_Info_get_valuelen(info, "missing", &len, &flag));
    CHECK(flag == 0, "missing key has a length");

    /* get_string: truncation, required length, buflen 0 */
    MPI_OK(MPI_Info_set(info, "long", "abcdef"));
    len = 3;
    memset(v, 'x', sizeof v);
    MPI_OK(MPI_Info_get_string(info, "long", &len, v, &flag));
    CHECK(flag == 1 && len == 7 && strcmp(v, "ab") == 0, "get_string buflen 3: flag %d len %d v '%s'", flag, len, v);
    len = 7;
    MPI_OK(MPI_Info_get_string(info, "long", &len, v, &flag));
    CHECK(flag == 1 && len == 7 && strcmp(v, "abcdef") == 0, "get_string buflen 7: len %d v '%s'", len, v);
    len = 100;
    MPI_OK(MPI_Info_get_string(info, "long", &len, v, &flag));
    CHECK(flag == 1 && len == 7 && strcmp(v, "abcdef") == 0, "get_string buflen 100: len %d v '%s'", len, v);
    len = 0;
    strcpy(v, "keep");
    MPI_OK(MPI_Info_get_string(info, "long", &len, v, &flag));
    CHECK(flag == 1 && len == 7 && strcmp(v, "keep") == 0, "get_string buflen 0: len %d v '%s'", len, v);
    len = 5;
    flag = 7;
    MPI_OK(MPI_Info_get_string(info, "missing", &len, v, &flag));
    CHECK(flag == 0 && len == 5, "get_string of a missing key: flag %d len %d", flag, len);
    MPI_OK(MPI_Info_get(info, "long", 6, v, &flag));
    CHECK(flag == 1 && strcmp(v, "abcdef") == 0, "get with exact valuelen: '%s'", v);

    /* delete */
    MPI_OK(MPI_Info_delete(info, "alpha"));
    {
        const char *keys[] = {"zeta", "mid", "long"};
        expect_keys(info, keys, 3, __LINE__);
    }
    CHECK_CLASS(MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY);
    MPI_OK(MPI_Info_set(info, "alpha", "back"));
    {
        const char *keys[] = {"zeta", "mid", "long", "alpha"};
        expect_keys(info, keys, 4, __LINE__);
    }

    /* dup is independent */
    MPI_OK(MPI_Info_dup(info, &dup));
    MPI_OK(MPI_Info_set(dup, "extra", "e"));
    MPI_OK(MPI_Info_set(info, "zeta", "changed"));
    {
        const char *keys[] = {"zeta", "mid", "long", "alpha", "extra"};
        expect_keys(dup, keys, 5, __LINE__);
    }
    expect_value(dup, "zeta", "one", __LINE__);
    expect_value(info, "zeta", "changed", __LINE__);
    MPI_OK(MPI_Info_free(&dup));

    /* limits */
    memset(big, 'k', sizeof big);
    big[MPI_MAX_INFO_KEY] = 0;
    MPI_OK(MPI_Info_set(info, big, "maxkey"));
    expect_value(info, big, "maxkey", __LINE__);
    big[MPI_MAX_INFO_KEY] = 'k';
    big[MPI_MAX_INFO_KEY + 1] = 0;
    CHECK_CLASS(MPI_Info_set(info, big, "v"), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_get(info, big, 10, v, &flag), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_get_valuelen(info, big, &len, &flag), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_delete(info, big), MPI_ERR_INFO_KEY);
    CHECK_CLASS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
    memset(big, 'v', sizeof big);
    big[MPI_MAX_INFO_VAL] = 0;
    MPI_OK(MPI_Info_set(info, "maxval", big));
    expect_value(info, "maxval", big, __LINE__);
    big[MPI_MAX_INFO_VAL] = 'v';
    big[MPI_MAX_INFO_VAL + 1] = 0;
    CHECK_CLASS(MPI_Info_set(info, "toolong", big), MPI_ERR_INFO_VALUE);
    MPI_OK(MPI_Info_get_valuelen(info, "toolong", &len, &flag));
    CHECK(flag == 0, "a rejected value was stored");

    /* other argument errors */
    MPI_OK(MPI_Info_get_nkeys(info, &nk));
    CHECK_CLASS(MPI_Info_get_nthkey(info, nk, v), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nthkey(info, -1, v), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get(info, "zeta", -1, v, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get(info, "zeta", 10, v, NULL), MPI_ERR_ARG);
    len = -1;
    CHECK_CLASS(MPI_Info_get_string(info, "zeta", &len, v, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_set(info, "k", NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &nk), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_dup(MPI_INFO_NULL, &dup), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_dup(info, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_create(NULL), MPI_ERR_ARG);
    dup = MPI_INFO_NULL;
    CHECK_CLASS(MPI_Info_free(&dup), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_get_nkeys((MPI_Info)MPI_COMM_WORLD, &nk), MPI_ERR_INFO);

    /* MPI_INFO_ENV: readable and duplicable (its keys are implementation-defined) */
    MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nk));
    CHECK(nk >= 0, "MPI_INFO_ENV has %d keys", nk);
    for (int i = 0; i < nk; i++) {
        char k[MPI_MAX_INFO_KEY + 1];
        MPI_OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, k));
        MPI_OK(MPI_Info_get_valuelen(MPI_INFO_ENV, k, &len, &flag));
        CHECK(flag == 1 && len >= 0 && len <= MPI_MAX_INFO_VAL, "MPI_INFO_ENV %s: flag %d len %d", k, flag, len);
        MPI_OK(MPI_Info_get(MPI_INFO_ENV, k, MPI_MAX_INFO_VAL, v, &flag));
        CHECK(flag == 1 && (int)strlen(v) == len, "MPI_INFO_ENV %s: value '%s'", k, v);
    }
    MPI_OK(MPI_Info_dup(MPI_INFO_ENV, &env));
    MPI_OK(MPI_Info_get_nkeys(env, &len));
    CHECK(len == nk, "dup of MPI_INFO_ENV has %d keys, MPI_INFO_ENV %d", len, nk);
    MPI_OK(MPI_Info_set(env, "mine", "1"));
    MPI_OK(MPI_Info_free(&env));

    MPI_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "freed info is not MPI_INFO_NULL");
    MPI_Finalize();
    return 0;
}
