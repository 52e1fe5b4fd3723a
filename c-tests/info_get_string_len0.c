/* oxmpi-test: ranks=1 */
/* MPI_Info_get_string with *buflen == 0 only reports: flag, and the value's length plus one in
   *buflen; the value buffer is left alone. A short buffer gets the value cut with a terminator
   and still the whole length; a missing key gives flag 0 and leaves the buffer alone. */
#include "oxtest.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "key", "value123"));
    char buf[32];
    int len = 0, flag = -1;
    memset(buf, 'x', sizeof buf);
    MPI_OK(MPI_Info_get_string(info, "key", &len, buf, &flag));
    CHECK(flag == 1 && len == 9, "buflen 0: flag %d buflen %d, expected 1 and 9", flag, len);
    for (size_t i = 0; i < sizeof buf; i++)
        CHECK(buf[i] == 'x', "buflen 0: value[%zu] written (0x%02x)", i, (unsigned char)buf[i]);
    len = 4;
    MPI_OK(MPI_Info_get_string(info, "key", &len, buf, &flag));
    CHECK(flag == 1 && len == 9 && strcmp(buf, "val") == 0, "buflen 4: flag %d buflen %d value \"%s\"", flag, len,
          buf);
    CHECK(buf[4] == 'x', "buflen 4: wrote past the buffer");
    len = 32;
    MPI_OK(MPI_Info_get_string(info, "key", &len, buf, &flag));
    CHECK(flag == 1 && len == 9 && strcmp(buf, "value123") == 0, "buflen 32: flag %d buflen %d value \"%s\"", flag,
          len, buf);
    memset(buf, 'x', sizeof buf);
    len = 0;
    MPI_OK(MPI_Info_get_string(info, "nokey", &len, buf, &flag));
    CHECK(flag == 0 && buf[0] == 'x', "missing key: flag %d value[0] 0x%02x", flag, (unsigned char)buf[0]);
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Finalize());
    return 0;
}
