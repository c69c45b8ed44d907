/* LMDB (Debian's liblmdb, linked static), as a program nobody here wrote
 * uses files: `lmdbprobe DIR [writemap] [nolock]` puts 2000 keys into an
 * environment in DIR in 20 transactions, reads them back in another
 * transaction, then closes, opens the environment again and reads them once
 * more.  LMDB reads its pages through a shared mapping of its data file and
 * writes them with pwrite (writemap: stores into a writable shared mapping
 * and msyncs it); without nolock it keeps its readers' table and its mutexes
 * in a writable shared mapping of lock.mdb.  It prints what it saw. */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define E(x)                                                                     \
    do {                                                                         \
        int rc_ = (x);                                                           \
        if (rc_) {                                                               \
            printf("%s: %s\n", #x, mdb_strerror(rc_));                           \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static long check(MDB_env *env, MDB_dbi dbi)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    long n = 0, bad = 0;
    E(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
    E(mdb_cursor_open(txn, dbi, &cur));
    while (mdb_cursor_get(cur, &k, &v, n ? MDB_NEXT : MDB_FIRST) == 0) {
        char want[64];
        int i = atoi((char *)k.mv_data + 4);
        snprintf(want, sizeof want, "value %d of the probe", i * 7);
        bad += v.mv_size != strlen(want) + 1 || memcmp(v.mv_data, want, v.mv_size);
        n++;
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return bad ? -bad : n;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    unsigned flags = 0, nolock = 0;
    for (int i = 2; i < argc; i++) {
        flags |= !strcmp(argv[i], "writemap") ? MDB_WRITEMAP : 0;
        nolock |= !strcmp(argv[i], "nolock") ? MDB_NOLOCK : 0;
    }
    mkdir(argv[1], 0755);
    MDB_env *env;
    MDB_dbi dbi;
    E(mdb_env_create(&env));
    E(mdb_env_set_mapsize(env, 16 << 20));
    E(mdb_env_open(env, argv[1], flags | nolock, 0644));
    for (int t = 0; t < 20; t++) {
        MDB_txn *txn;
        E(mdb_txn_begin(env, NULL, 0, &txn));
        E(mdb_dbi_open(txn, NULL, 0, &dbi));
        for (int j = 0; j < 100; j++) {
            char key[32], val[64];
            int i = t * 100 + j;
            snprintf(key, sizeof key, "key %05d", i);
            snprintf(val, sizeof val, "value %d of the probe", i * 7);
            MDB_val k = {strlen(key) + 1, key}, v = {strlen(val) + 1, val};
            E(mdb_put(txn, dbi, &k, &v, 0));
        }
        E(mdb_txn_commit(txn));
    }
    printf("in the same environment: %ld keys read back\n", check(env, dbi));
    mdb_env_close(env);
    E(mdb_env_create(&env));
    E(mdb_env_set_mapsize(env, 16 << 20));
    E(mdb_env_open(env, argv[1], flags | nolock, 0644));
    MDB_txn *txn;
    E(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
    E(mdb_dbi_open(txn, NULL, 0, &dbi));
    mdb_txn_abort(txn);
    printf("opened again: %ld keys read back\n", check(env, dbi));
    MDB_stat st;
    E(mdb_env_stat(env, &st));
    printf("entries %zu, depth %u\n", st.ms_entries, st.ms_depth);
    mdb_env_close(env);
    return 0;
}
