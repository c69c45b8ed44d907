/*
 * Info objects: ordered (key, value) lists.  Tern's MPI reads no hint from
 * them (an MPI may ignore any), but a program sets and reads them back, and
 * passes them to MPI_File_open and MPI_File_set_view.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define MAX_INFOS 256

struct pair {
    char *key, *value;
};
static struct minfo {
    bool in_use;
    int n;
    struct pair *v;
} infos[MAX_INFOS];

static int bad_info(const char *call, MPI_Info h, struct minfo **out)
{
    int i = H_IDX(h);
    if (H_KIND(h) != K_INFO || i <= 0 || i >= MAX_INFOS || !infos[i].in_use)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_INFO, call, "%#x is not an info object", h);
    *out = &infos[i];
    return MPI_SUCCESS;
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
    for (int i = 1; i < MAX_INFOS; i++)
        if (!infos[i].in_use) {
            infos[i] = (struct minfo){.in_use = true};
            *info = H_MAKE(K_INFO, i);
            return MPI_SUCCESS;
        }
    return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_create", "%d info objects in use",
                     MAX_INFOS - 1);
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    struct minfo *m = NULL;
    int rc = bad_info("MPI_Info_set", info, &m);
    if (rc || (rc = bad_key("MPI_Info_set", key)))
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
    if (rc || (rc = bad_key("MPI_Info_delete", key)))
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
    if (rc)
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
