/*
 * Info objects: ordered (key, value) lists.  Tern's MPI reads no hint from
 * them (an MPI may ignore any), but a program sets and reads them back, and
 * passes them to MPI_File_open and MPI_File_set_view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mpi_impl.h"

/* Info objects live in chunks allocated as they are needed, so an object
 * never moves (a call holds a pointer to one while it makes another) and a
 * program may have tens of thousands.  Index 0 is MPI_INFO_NULL, 1 is
 * MPI_INFO_ENV. */
#define CHUNK 256
#define MAX_CHUNKS 256
#define ENV_IDX 1

struct pair {
    char *key, *value;
};
struct minfo {
    bool in_use;
    int n;
    struct pair *v;
};
static struct minfo *chunks[MAX_CHUNKS];

static struct minfo *slot(int i, bool make)
{
    if (i <= 0 || i >= CHUNK * MAX_CHUNKS)
        return NULL;
    if (!chunks[i / CHUNK] && make)
        chunks[i / CHUNK] = calloc(CHUNK, sizeof(struct minfo));
    return chunks[i / CHUNK] ? &chunks[i / CHUNK][i % CHUNK] : NULL;
}

static int bad_info(const char *call, MPI_Info h, struct minfo **out)
{
    struct minfo *m = H_KIND(h) == K_INFO ? slot(H_IDX(h), false) : NULL;
    if (H_IDX(h) == ENV_IDX)
        m = slot(ENV_IDX, true); /* before MPI_Init: empty */
    if (!m || (!m->in_use && H_IDX(h) != ENV_IDX))
        return mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, call, "%#x is not an info object", h);
    *out = m;
    return MPI_SUCCESS;
}

bool mpi_info_ok(MPI_Info h)
{
    struct minfo *m = H_KIND(h) == K_INFO ? slot(H_IDX(h), false) : NULL;
    return h == MPI_INFO_ENV || (m && m->in_use);
}

/* MPI_INFO_ENV is the library's: a program reads it, never changes it. */
static int read_only(const char *call, MPI_Info h)
{
    if (h != MPI_INFO_ENV)
        return MPI_SUCCESS;
    return mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, call, "MPI_INFO_ENV cannot be changed or freed");
}

static int bad_key(const char *call, const char *key)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n > MPI_MAX_INFO_KEY)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, call,
                         "a key is 1 to %d characters", MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static int find(const struct minfo *m, const char *key)
{
    for (int k = 0; k < m->n; k++)
        if (!strcmp(m->v[k].key, key))
            return k;
    return -1;
}

int MPI_Info_create(MPI_Info *info)
{
    for (int i = ENV_IDX + 1; i < CHUNK * MAX_CHUNKS; i++) {
        struct minfo *m = slot(i, true);
        if (!m)
            return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "no memory");
        if (!m->in_use) {
            *m = (struct minfo){.in_use = true};
            *info = H_MAKE(K_INFO, i);
            return MPI_SUCCESS;
        }
    }
    return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "%d info objects in use",
                     CHUNK * MAX_CHUNKS - 2);
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_set", info, &m);
    if (rc || (rc = read_only("MPI_Info_set", info)) || (rc = bad_key("MPI_Info_set", key)))
        return rc;
    size_t vn = value ? strlen(value) : 0;
    if (vn == 0 || vn > MPI_MAX_INFO_VAL)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, "MPI_Info_set",
                         "a value is 1 to %d characters", MPI_MAX_INFO_VAL);
    char *v = strdup(value);
    if (!v)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_set", "no memory");
    int k = find(m, key);
    if (k >= 0) {
        free(m->v[k].value);
        m->v[k].value = v;
        return MPI_SUCCESS;
    }
    struct pair *nv = realloc(m->v, (size_t)(m->n + 1) * sizeof *nv);
    char *kc = strdup(key);
    if (!nv || !kc) {
        free(v);
        free(kc);
        if (nv)
            m->v = nv;
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_set", "no memory");
    }
    m->v = nv;
    m->v[m->n++] = (struct pair){kc, v};
    return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_get", info, &m);
    if (rc || (rc = bad_key("MPI_Info_get", key)))
        return rc;
    int k = find(m, key);
    *flag = k >= 0;
    if (k >= 0) {
        /* valuelen characters at most, and the NUL after them. */
        size_t n = strlen(m->v[k].value);
        if (valuelen >= 0 && n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, m->v[k].value, n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}

/* MPI-4.0 9.4: buflen in is the buffer's size, out the value's size with
 * its NUL; the value is cut to fit, always NUL-terminated, and the buffer
 * is left alone for a key not there or a buflen of 0. */
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_get_string", info, &m);
    if (rc || (rc = bad_key("MPI_Info_get_string", key)))
        return rc;
    if (*buflen < 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_string", "buflen %d", *buflen);
    int k = find(m, key);
    *flag = k >= 0;
    if (k < 0)
        return MPI_SUCCESS;
    size_t n = strlen(m->v[k].value);
    if (*buflen > 0) {
        size_t c = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, m->v[k].value, c);
        value[c] = 0;
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_get_valuelen", info, &m);
    if (rc || (rc = bad_key("MPI_Info_get_valuelen", key)))
        return rc;
    int k = find(m, key);
    *flag = k >= 0;
    if (k >= 0)
        *valuelen = (int)strlen(m->v[k].value);
    return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_get_nkeys", info, &m);
    if (!rc)
        *nkeys = m->n;
    return rc;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_get_nthkey", info, &m);
    if (rc)
        return rc;
    if (n < 0 || n >= m->n)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                         "key %d of %d keys", n, m->n);
    strcpy(key, m->v[n].key);
    return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_delete", info, &m);
    if (rc || (rc = read_only("MPI_Info_delete", info)) || (rc = bad_key("MPI_Info_delete", key)))
        return rc;
    int k = find(m, key);
    if (k < 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, "MPI_Info_delete", "no key \"%s\"", key);
    free(m->v[k].key);
    free(m->v[k].value);
    memmove(&m->v[k], &m->v[k + 1], (size_t)(m->n - k - 1) * sizeof *m->v);
    m->n--;
    return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_dup", info, &m);
    if (rc || (rc = MPI_Info_create(newinfo)))
        return rc;
    for (int k = 0; k < m->n; k++)
        if ((rc = MPI_Info_set(*newinfo, m->v[k].key, m->v[k].value))) {
            MPI_Info_free(newinfo);
            return rc;
        }
    return MPI_SUCCESS;
}

int MPI_Info_free(MPI_Info *info)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_free", *info, &m);
    if (rc || (rc = read_only("MPI_Info_free", *info)))
        return rc;
    for (int k = 0; k < m->n; k++) {
        free(m->v[k].key);
        free(m->v[k].value);
    }
    free(m->v);
    *m = (struct minfo){0};
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/* ---- the environment (MPI-4.0 11.2.1) ---- */

static int set_if(MPI_Info info, const char *key, const char *value)
{
    return value && *value ? MPI_Info_set(info, key, value) : MPI_SUCCESS;
}

/* What MPI_Info_create_env and MPI_INFO_ENV say of the program: its
 * command and arguments (from the argv given, or NULL), the directory it
 * runs in, the node's name and architecture. */
static int fill_env(MPI_Info info, int argc, char **argv)
{
    int rc = MPI_SUCCESS;
    if (argv && argc > 0 && argv[0]) {
        rc = set_if(info, "command", argv[0]);
        size_t len = 1;
        for (int i = 1; i < argc && argv[i]; i++)
            len += strlen(argv[i]) + 1;
        char *args = malloc(len);
        if (!args)
            return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_create_env", "no memory");
        args[0] = 0;
        for (int i = 1; i < argc && argv[i]; i++) {
            if (i > 1)
                strcat(args, " ");
            strcat(args, argv[i]);
        }
        if (!rc && strlen(args) <= MPI_MAX_INFO_VAL)
            rc = set_if(info, "argv", args);
        free(args);
    }
    char wdir[MPI_MAX_INFO_VAL + 1];
    if (!rc && getcwd(wdir, sizeof wdir))
        rc = set_if(info, "wdir", wdir);
    struct utsname u;
    if (!rc && uname(&u) == 0 && !(rc = set_if(info, "host", u.nodename)))
        rc = set_if(info, "arch", u.machine);
    return rc;
}

int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    TRY(MPI_Info_create(info));
    int rc = fill_env(*info, argc, argv);
    if (rc)
        MPI_Info_free(info);
    return rc;
}

void mpi_info_env_init(int argc, char **argv, int nprocs, int thread_level)
{
    static const char *const level[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                        "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    struct minfo *m = slot(ENV_IDX, true);
    if (!m)
        mpi_fatal("MPI_Init", "no memory");
    m->in_use = true;
    /* Filled as any info object is; the program is kept out by read_only. */
    MPI_Info tmp;
    if (MPI_Info_create(&tmp) != MPI_SUCCESS || fill_env(tmp, argc, argv) != MPI_SUCCESS)
        mpi_fatal("MPI_Init", "no memory for MPI_INFO_ENV");
    char n[16];
    snprintf(n, sizeof n, "%d", nprocs);
    if (MPI_Info_set(tmp, "maxprocs", n) != MPI_SUCCESS ||
        MPI_Info_set(tmp, "thread_level", level[thread_level]) != MPI_SUCCESS)
        mpi_fatal("MPI_Init", "no memory for MPI_INFO_ENV");
    struct minfo *t = slot(H_IDX(tmp), false);
    *m = *t;
    *t = (struct minfo){0};
}
