/* HDF5 (Debian's libhdf5, serial, linked static), as a program nobody here
 * wrote uses files: `h5probe DIR` makes DIR/probe.h5 (a group, a chunked
 * and deflated dataset of doubles, an attribute), closes it, opens it
 * again read-only and prints what it reads back (DIR is made if need be). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    mkdir(argv[1], 0755);
    char path[1024];
    snprintf(path, sizeof path, "%s/probe.h5", argv[1]);
    enum { NX = 100, NY = 200 };
    static double a[NX][NY], b[NX][NY];
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            a[i][j] = i * 1000.0 + j;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {NX, NY}, chunk[2] = {25, 50};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(pl, 2, chunk);
    H5Pset_deflate(pl, 6);
    hid_t g = H5Gcreate2(f, "/results", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t d = H5Dcreate2(g, "field", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    herr_t w = H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a);
    int step = 42;
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t at = H5Acreate2(d, "step", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(at, H5T_NATIVE_INT, &step);
    H5Aclose(at); H5Sclose(as); H5Dclose(d); H5Gclose(g); H5Pclose(pl); H5Sclose(sp);
    herr_t c = H5Fclose(f);
    printf("write: %s, close: %s\n", w < 0 ? "FAILED" : "ok", c < 0 ? "FAILED" : "ok");
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "/results/field", H5P_DEFAULT);
    herr_t r = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, b);
    int same = 1;
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            same &= a[i][j] == b[i][j];
    int got = 0;
    at = H5Aopen(d, "step", H5P_DEFAULT);
    H5Aread(at, H5T_NATIVE_INT, &got);
    hid_t dcpl = H5Dget_create_plist(d);
    int filters = H5Pget_nfilters(dcpl);
    hsize_t stored = H5Dget_storage_size(d);
    printf("read: %s, the same: %s, attribute step %d, filters %d, compressed %s\n",
           r < 0 ? "FAILED" : "ok", same ? "yes" : "NO", got, filters,
           stored < sizeof a / 2 ? "yes" : "NO");
    H5Pclose(dcpl); H5Aclose(at); H5Dclose(d); H5Fclose(f);
    return !(same && w >= 0 && r >= 0);
}
