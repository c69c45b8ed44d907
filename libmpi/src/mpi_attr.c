/*
 * Attribute caching (MPI-3.1 6.7): keyvals, and the values a program (a
 * library, mostly) hangs on a communicator under them.  MPI_Comm_dup asks
 * each keyval's copy callback whether the duplicate gets the value,
 * MPI_Comm_free and MPI_Comm_delete_attr call its delete callback, and
 * MPI_Finalize first deletes MPI_COMM_SELF's attributes (what libraries
 * use to clean up at the end).  The predefined attributes (MPI_TAG_UB ...)
 * are mpi_comm.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define MAX_KEYVALS 256

static struct keyval {
    bool in_use, freed;
    int copy_kind, del_kind;     /* CB_C, CB_FORTRAN, CB_FORTRAN_INT (mpi_impl.h) */
    int refs;                    /* attributes that hold it (it stays while freed) */
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
} keyvals[MAX_KEYVALS];

/* The Fortran callbacks' shapes: every argument by reference, the values
 * INTEGER(KIND=MPI_ADDRESS_KIND) (MPI-2) or INTEGER (MPI-1). */
typedef void fcopy_fn(MPI_Fint *comm, MPI_Fint *key, MPI_Aint *extra, MPI_Aint *in,
                      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void fdel_fn(MPI_Fint *comm, MPI_Fint *key, MPI_Aint *val, MPI_Aint *extra,
                     MPI_Fint *ierr);
typedef void icopy_fn(MPI_Fint *comm, MPI_Fint *key, MPI_Fint *extra, MPI_Fint *in,
                      MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void idel_fn(MPI_Fint *comm, MPI_Fint *key, MPI_Fint *val, MPI_Fint *extra,
                     MPI_Fint *ierr);

int MPIR_Dup_fn(MPI_Comm comm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)comm, (void)keyval, (void)extra_state;
    memcpy(attribute_val_out, &attribute_val_in, sizeof attribute_val_in);
    *flag = 1;
    return MPI_SUCCESS;
}

int mpi_keyval_create(const char *call, MPI_Comm_copy_attr_function *copy, int copy_kind,
                      MPI_Comm_delete_attr_function *del, int del_kind, int *keyval,
                      void *extra)
{
    NEED_INIT(call);
    for (int k = FIRST_KEYVAL; k < MAX_KEYVALS; k++)
        if (!keyvals[k].in_use) {
            keyvals[k] = (struct keyval){.in_use = true, .copy_kind = copy_kind,
                                         .del_kind = del_kind, .copy = copy, .del = del,
                                         .extra = extra};
            *keyval = k;
            return MPI_SUCCESS;
        }
    return mpi_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "all %d keyvals in use",
                     MAX_KEYVALS - FIRST_KEYVAL);
}

static struct keyval *live(const char *call, MPI_Comm comm, int keyval)
{
    if (keyval < FIRST_KEYVAL || keyval >= MAX_KEYVALS || !keyvals[keyval].in_use ||
        keyvals[keyval].freed) {
        mpi_error(comm, MPI_ERR_KEYVAL, call, "keyval %d was not made by %s", keyval,
                  "MPI_Comm_create_keyval");
        return NULL;
    }
    return &keyvals[keyval];
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state)
{
    return mpi_keyval_create("MPI_Comm_create_keyval", comm_copy_attr_fn, CB_C,
                             comm_delete_attr_fn, CB_C, comm_keyval, extra_state);
}

int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state)
{
    return mpi_keyval_create("MPI_Keyval_create", copy_fn, CB_C, delete_fn, CB_C, keyval,
                             extra_state);
}

static void unref(int keyval)
{
    struct keyval *k = &keyvals[keyval];
    if (--k->refs == 0 && k->freed)
        *k = (struct keyval){0};
}

/* A freed keyval stays while attributes hold it (MPI-3.1 6.7.2). */
int MPI_Comm_free_keyval(int *comm_keyval)
{
    NEED_INIT("MPI_Comm_free_keyval");
    struct keyval *k = live("MPI_Comm_free_keyval", MPI_COMM_WORLD, *comm_keyval);
    if (!k)
        return MPI_ERR_KEYVAL;
    k->freed = true;
    k->refs++;
    unref(*comm_keyval);
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int MPI_Keyval_free(int *keyval) { return MPI_Comm_free_keyval(keyval); }

static struct attr *find(struct mcomm *c, int keyval)
{
    for (int i = 0; i < c->nattrs; i++)
        if (c->attrs[i].keyval == keyval)
            return &c->attrs[i];
    return NULL;
}

/* Runs keyval's delete callback on c's value; 0 or its error. */
static int run_delete(MPI_Comm comm, struct attr *a)
{
    struct keyval *k = &keyvals[a->keyval];
    struct mcomm *c = mpi_comm_get(comm);
    if (c && c->attr_owner)
        comm = c->attr_owner;
    MPI_Fint fc = comm, fk = a->keyval, err = MPI_SUCCESS;
    if (!k->del)
        return MPI_SUCCESS;
    if (k->del_kind == CB_FORTRAN) {
        MPI_Aint v = (MPI_Aint)a->val, e = (MPI_Aint)k->extra;
        ((fdel_fn *)(void *)k->del)(&fc, &fk, &v, &e, &err);
        return err;
    }
    if (k->del_kind == CB_FORTRAN_INT) {
        MPI_Fint v = (MPI_Fint)(MPI_Aint)a->val, e = (MPI_Fint)(MPI_Aint)k->extra;
        ((idel_fn *)(void *)k->del)(&fc, &fk, &v, &e, &err);
        return err;
    }
    return k->del(comm, a->keyval, a->val, k->extra);
}

static int remove_attr(const char *call, MPI_Comm comm, struct mcomm *c, struct attr *a)
{
    int rc = run_delete(comm, a);
    if (rc)
        return mpi_error(comm, rc, call, "the delete callback of keyval %d said %d",
                         a->keyval, rc);
    int key = a->keyval;
    *a = c->attrs[--c->nattrs];
    unref(key);
    return MPI_SUCCESS;
}

/* Set keyval's value on c; the keyval may have been freed since the
 * attribute it copies was set (MPI_Comm_dup). */
static int put(const char *call, MPI_Comm comm, struct mcomm *c, int keyval, void *val)
{
    struct attr *a = find(c, keyval);
    if (a) {
        /* The old value goes as a delete would take it. */
        int rc = run_delete(comm, a);
        if (rc)
            return mpi_error(comm, rc, call, "the delete callback of keyval %d said %d",
                             keyval, rc);
        a->val = val;
        return MPI_SUCCESS;
    }
    struct attr *v = realloc(c->attrs, (size_t)(c->nattrs + 1) * sizeof *v);
    if (!v)
        return mpi_error(comm, MPI_ERR_NO_MEM, call, "no memory");
    c->attrs = v;
    c->attrs[c->nattrs++] = (struct attr){keyval, val};
    keyvals[keyval].refs++;
    return MPI_SUCCESS;
}

int mpi_attr_set(const char *call, MPI_Comm comm, int keyval, void *val)
{
    struct mcomm *c;
    TRY(mpi_check_comm(call, comm, &c));
    if (!live(call, comm, keyval))
        return MPI_ERR_KEYVAL;
    return put(call, comm, c, keyval, val);
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return mpi_attr_set("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return mpi_attr_set("MPI_Attr_put", comm, keyval, attribute_val);
}

int mpi_attr_get(MPI_Comm comm, int keyval, void **val, int *flag)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_get_attr", comm, &c));
    if (keyval < FIRST_KEYVAL || keyval >= MAX_KEYVALS || !keyvals[keyval].in_use)
        return mpi_error(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "keyval %d", keyval);
    struct attr *a = find(c, keyval);
    *flag = a != NULL;
    if (a)
        *val = a->val;
    return MPI_SUCCESS;
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_delete_attr", comm, &c));
    /* A keyval freed while attributes hold it still names them. */
    if (comm_keyval < FIRST_KEYVAL || comm_keyval >= MAX_KEYVALS ||
        !keyvals[comm_keyval].in_use)
        return mpi_error(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr",
                         "keyval %d was not made by MPI_Comm_create_keyval", comm_keyval);
    struct attr *a = find(c, comm_keyval);
    if (!a)
        return mpi_error(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr",
                         "the communicator has no attribute of keyval %d", comm_keyval);
    return remove_attr("MPI_Comm_delete_attr", comm, c, a);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval) { return MPI_Comm_delete_attr(comm, keyval); }

int mpi_attrs_copy(MPI_Comm from, MPI_Comm to)
{
    struct mcomm *c = mpi_comm_get(from);
    for (int i = 0; c && i < c->nattrs; i++) {
        struct attr a = c->attrs[i];
        struct keyval *k = &keyvals[a.keyval];
        if (!k->copy)
            continue;               /* MPI_COMM_NULL_COPY_FN */
        void *out = NULL;
        int flag = 0, rc;
        MPI_Fint fc = from, fk = a.keyval, ff = 0, err = MPI_SUCCESS;
        if (k->copy_kind == CB_FORTRAN) {
            MPI_Aint e = (MPI_Aint)k->extra, in = (MPI_Aint)a.val, o = 0;
            ((fcopy_fn *)(void *)k->copy)(&fc, &fk, &e, &in, &o, &ff, &err);
            out = (void *)o;
        } else if (k->copy_kind == CB_FORTRAN_INT) {
            MPI_Fint e = (MPI_Fint)(MPI_Aint)k->extra, in = (MPI_Fint)(MPI_Aint)a.val, o = 0;
            ((icopy_fn *)(void *)k->copy)(&fc, &fk, &e, &in, &o, &ff, &err);
            out = (void *)(MPI_Aint)o;
        }
        if (k->copy_kind == CB_C)
            rc = k->copy(from, a.keyval, k->extra, a.val, &out, &flag);
        else
            rc = err, flag = ff != 0;
        if (rc)
            return mpi_error(from, rc, "MPI_Comm_dup", "the copy callback of keyval %d said %d",
                             a.keyval, rc);
        if (flag)
            TRY(put("MPI_Comm_dup", to, mpi_comm_get(to), a.keyval, out));
        c = mpi_comm_get(from);     /* the table may have moved */
    }
    return MPI_SUCCESS;
}

int mpi_attrs_delete(MPI_Comm comm)
{
    struct mcomm *c = mpi_comm_get(comm);
    while (c && c->nattrs > 0) {
        TRY(remove_attr("MPI_Comm_free", comm, c, &c->attrs[c->nattrs - 1]));
        c = mpi_comm_get(comm);
    }
    if (c) {
        free(c->attrs);
        c->attrs = NULL;
    }
    return MPI_SUCCESS;
}
