/*
 * Attribute caching (MPI-3.1 6.7): keyvals, and the values a program (a
 * library, mostly) hangs on a communicator or a datatype under them.  One
 * machinery for both: an object is its handle, whose kind (H_KIND) says
 * where its list of attributes lives, and a keyval is made for one kind of
 * object.  Duplicating an object (MPI_Comm_dup, MPI_Type_dup) asks each
 * keyval's copy callback whether the duplicate gets the value; freeing it
 * (MPI_Comm_free, the last hold on a datatype) and delete_attr call its
 * delete callback; MPI_Finalize first deletes MPI_COMM_SELF's attributes
 * (what libraries use to clean up at the end).  The predefined attributes
 * (MPI_TAG_UB ...) are mpi_comm.c's.
 *
 * C's callbacks for communicators and datatypes have the same shape (both
 * handles are ints), so a keyval keeps them as MPI_Comm_*_attr_function.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define MAX_KEYVALS 256

static struct keyval {
    bool in_use, freed;
    int kind;                    /* K_COMM or K_TYPE: the objects it names */
    int copy_kind, del_kind;     /* CB_C, CB_FORTRAN, CB_FORTRAN_INT (mpi_impl.h) */
    int refs;                    /* attributes that hold it (it stays while freed) */
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
} keyvals[MAX_KEYVALS];

/* The Fortran callbacks' shapes: every argument by reference, the values
 * INTEGER(KIND=MPI_ADDRESS_KIND) (MPI-2) or INTEGER (MPI-1). */
typedef void fcopy_fn(MPI_Fint *obj, MPI_Fint *key, MPI_Aint *extra, MPI_Aint *in,
                      MPI_Aint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void fdel_fn(MPI_Fint *obj, MPI_Fint *key, MPI_Aint *val, MPI_Aint *extra,
                     MPI_Fint *ierr);
typedef void icopy_fn(MPI_Fint *obj, MPI_Fint *key, MPI_Fint *extra, MPI_Fint *in,
                      MPI_Fint *out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void idel_fn(MPI_Fint *obj, MPI_Fint *key, MPI_Fint *val, MPI_Fint *extra,
                     MPI_Fint *ierr);

static const char *kind_name(int kind) { return kind == K_TYPE ? "datatype" : "communicator"; }
static const char *maker(int kind)
{
    return kind == K_TYPE ? "MPI_Type_create_keyval" : "MPI_Comm_create_keyval";
}

/* Errors about a communicator's attributes go to its handler; a
 * datatype's to MPI_COMM_WORLD's (MPI-3.1 8.3). */
static MPI_Comm errcomm(int obj) { return H_KIND(obj) == K_COMM ? obj : MPI_COMM_NULL; }

/* The object's list; the caller checked the handle.  Looked up anew after
 * every callback: a callback may free or make objects. */
static struct attrs *list_of(int obj)
{
    if (H_KIND(obj) == K_COMM) {
        struct mcomm *c = mpi_comm_get(obj);
        return c ? &c->attrs : NULL;
    }
    struct mtype *t = mpi_type_get(obj);
    return t ? &t->attrs : NULL;
}

static struct attr *find(int obj, int keyval)
{
    struct attrs *l = list_of(obj);
    for (int i = 0; l && i < l->n; i++)
        if (l->a[i].keyval == keyval)
            return &l->a[i];
    return NULL;
}

int MPIR_Dup_fn(MPI_Comm comm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)comm, (void)keyval, (void)extra_state;
    memcpy(attribute_val_out, &attribute_val_in, sizeof attribute_val_in);
    *flag = 1;
    return MPI_SUCCESS;
}

int mpi_keyval_create(const char *call, int kind, MPI_Comm_copy_attr_function *copy,
                      int copy_kind, MPI_Comm_delete_attr_function *del, int del_kind,
                      int *keyval, void *extra)
{
    NEED_INIT(call);
    for (int k = FIRST_KEYVAL; k < MAX_KEYVALS; k++)
        if (!keyvals[k].in_use) {
            keyvals[k] = (struct keyval){.in_use = true, .kind = kind, .copy_kind = copy_kind,
                                         .del_kind = del_kind, .copy = copy, .del = del,
                                         .extra = extra};
            *keyval = k;
            return MPI_SUCCESS;
        }
    return mpi_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "all %d keyvals in use",
                     MAX_KEYVALS - FIRST_KEYVAL);
}

/* keyval, made for objects of kind; a freed one only where freed_ok (it
 * still names the attributes that hold it). */
static struct keyval *keyval_of(const char *call, MPI_Comm errc, int kind, int keyval,
                                bool freed_ok)
{
    if (keyval < FIRST_KEYVAL || keyval >= MAX_KEYVALS || !keyvals[keyval].in_use ||
        (keyvals[keyval].freed && !freed_ok)) {
        mpi_error(errc, MPI_ERR_KEYVAL, call, "keyval %d was not made by %s", keyval,
                  maker(kind));
        return NULL;
    }
    if (keyvals[keyval].kind != kind) {
        mpi_error(errc, MPI_ERR_KEYVAL, call, "keyval %d is a %s's, not a %s's", keyval,
                  kind_name(keyvals[keyval].kind), kind_name(kind));
        return NULL;
    }
    return &keyvals[keyval];
}

static void unref(int keyval)
{
    struct keyval *k = &keyvals[keyval];
    if (--k->refs == 0 && k->freed)
        *k = (struct keyval){0};
}

/* A freed keyval stays while attributes hold it (MPI-3.1 6.7.2); freeing
 * it again meanwhile changes nothing (a delete callback that frees the
 * keyval it is called for runs once per attribute). */
int mpi_keyval_free(const char *call, int kind, int *keyval)
{
    NEED_INIT(call);
    struct keyval *k = keyval_of(call, MPI_COMM_WORLD, kind, *keyval, true);
    if (!k)
        return MPI_ERR_KEYVAL;
    if (!k->freed) {
        k->freed = true;
        k->refs++;
        unref(*keyval);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* Runs a's keyval's delete callback on the object's value; 0 or its error. */
static int run_delete(int obj, struct attr a)
{
    struct keyval *k = &keyvals[a.keyval];
    /* A window's attributes live on its private communicator (mpi_win.c):
     * the callback is given the window. */
    struct mcomm *c = H_KIND(obj) == K_COMM ? mpi_comm_get(obj) : NULL;
    if (c && c->attr_owner)
        obj = c->attr_owner;
    MPI_Fint fo = obj, fk = a.keyval, err = MPI_SUCCESS;
    if (!k->del)
        return MPI_SUCCESS;
    if (k->del_kind == CB_FORTRAN) {
        MPI_Aint v = (MPI_Aint)a.val, e = (MPI_Aint)k->extra;
        ((fdel_fn *)(void *)k->del)(&fo, &fk, &v, &e, &err);
        return err;
    }
    if (k->del_kind == CB_FORTRAN_INT) {
        MPI_Fint v = (MPI_Fint)(MPI_Aint)a.val, e = (MPI_Fint)(MPI_Aint)k->extra;
        ((idel_fn *)(void *)k->del)(&fo, &fk, &v, &e, &err);
        return err;
    }
    return k->del(obj, a.keyval, a.val, k->extra);
}

/* Delete keyval's attribute of obj: its callback, then it leaves the list
 * (it stays when the callback fails, MPI-3.1 6.7.2).  raise: report the
 * callback's error through the handler. */
static int remove_attr(const char *call, int obj, int keyval, bool raise)
{
    struct attr *a = find(obj, keyval);
    int rc = run_delete(obj, *a);
    if (rc)
        return raise ? mpi_error(errcomm(obj), rc, call,
                                 "the delete callback of keyval %d said %d", keyval, rc)
                     : rc;
    struct attrs *l = list_of(obj);
    a = find(obj, keyval);   /* the callback may have changed the list */
    if (a) {
        *a = l->a[--l->n];
        unref(keyval);
    }
    return MPI_SUCCESS;
}

/* Set keyval's value on obj; the keyval may have been freed since the
 * attribute it copies was set (a duplicate's). */
static int put(const char *call, int obj, int keyval, void *val)
{
    struct attr *a = find(obj, keyval);
    if (a) {
        /* The old value goes as a delete would take it. */
        int rc = run_delete(obj, *a);
        if (rc)
            return mpi_error(errcomm(obj), rc, call, "the delete callback of keyval %d said %d",
                             keyval, rc);
        a = find(obj, keyval);
        if (a) {
            a->val = val;
            return MPI_SUCCESS;
        }
    }
    struct attrs *l = list_of(obj);
    struct attr *v = realloc(l->a, (size_t)(l->n + 1) * sizeof *v);
    if (!v)
        return mpi_error(errcomm(obj), MPI_ERR_NO_MEM, call, "no memory");
    l->a = v;
    l->a[l->n++] = (struct attr){keyval, val};
    keyvals[keyval].refs++;
    return MPI_SUCCESS;
}

int mpi_attr_set(const char *call, int obj, int keyval, void *val)
{
    if (!keyval_of(call, errcomm(obj), H_KIND(obj), keyval, false))
        return MPI_ERR_KEYVAL;
    return put(call, obj, keyval, val);
}

int mpi_attr_get(const char *call, int obj, int keyval, void **val, int *flag)
{
    if (!keyval_of(call, errcomm(obj), H_KIND(obj), keyval, true))
        return MPI_ERR_KEYVAL;
    struct attr *a = find(obj, keyval);
    *flag = a != NULL;
    if (a)
        *val = a->val;
    return MPI_SUCCESS;
}

int mpi_attr_delete(const char *call, int obj, int keyval)
{
    /* A keyval freed while attributes hold it still names them. */
    if (!keyval_of(call, errcomm(obj), H_KIND(obj), keyval, true))
        return MPI_ERR_KEYVAL;
    if (!find(obj, keyval))
        return mpi_error(errcomm(obj), MPI_ERR_KEYVAL, call, "the %s has no attribute of keyval %d",
                         kind_name(H_KIND(obj)), keyval);
    return remove_attr(call, obj, keyval, true);
}

/* Ask one attribute's copy callback: 0 or its error; *flag and *out. */
static int run_copy(int from, struct attr a, void **out, int *flag)
{
    struct keyval *k = &keyvals[a.keyval];
    MPI_Fint fo = from, fk = a.keyval, ff = 0, err = MPI_SUCCESS;
    *flag = 0;
    if (!k->copy)
        return MPI_SUCCESS;          /* MPI_COMM_NULL_COPY_FN, MPI_TYPE_NULL_COPY_FN */
    if (k->copy_kind == CB_FORTRAN) {
        MPI_Aint e = (MPI_Aint)k->extra, in = (MPI_Aint)a.val, o = 0;
        ((fcopy_fn *)(void *)k->copy)(&fo, &fk, &e, &in, &o, &ff, &err);
        *out = (void *)o;
    } else if (k->copy_kind == CB_FORTRAN_INT) {
        MPI_Fint e = (MPI_Fint)(MPI_Aint)k->extra, in = (MPI_Fint)(MPI_Aint)a.val, o = 0;
        ((icopy_fn *)(void *)k->copy)(&fo, &fk, &e, &in, &o, &ff, &err);
        *out = (void *)(MPI_Aint)o;
    } else {
        return k->copy(from, a.keyval, k->extra, a.val, out, flag);
    }
    *flag = ff != 0;
    return err;
}

/* The duplicate to gets what each copy callback says.  A callback's error
 * leaves to with no attributes (those copied so far deleted, their
 * callbacks' errors not raised again): the caller frees it and returns the
 * null handle (MPI-3.1 6.7.2). */
int mpi_attrs_copy(const char *call, int from, int to)
{
    struct attrs *l = list_of(from);
    for (int i = 0; l && i < l->n; i++) {
        struct attr a = l->a[i];
        void *out = NULL;
        int flag = 0;
        int rc = run_copy(from, a, &out, &flag);
        if (rc)
            rc = mpi_error(errcomm(from), rc, call, "the copy callback of keyval %d said %d",
                           a.keyval, rc);
        else if (flag)
            rc = put(call, to, a.keyval, out);
        if (rc) {
            struct attrs *t = list_of(to);
            while (t && t->n > 0) {
                if (remove_attr(call, to, t->a[t->n - 1].keyval, false)) {
                    unref(t->a[t->n - 1].keyval);   /* dropped all the same */
                    t->n--;
                }
                t = list_of(to);
            }
            return rc;
        }
        l = list_of(from);
    }
    return MPI_SUCCESS;
}

int mpi_attrs_delete(const char *call, int obj)
{
    struct attrs *l = list_of(obj);
    while (l && l->n > 0) {
        TRY(remove_attr(call, obj, l->a[l->n - 1].keyval, true));
        l = list_of(obj);
    }
    if (l) {
        free(l->a);
        *l = (struct attrs){0};
    }
    return MPI_SUCCESS;
}

/* ---- communicators ---- */

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state)
{
    return mpi_keyval_create("MPI_Comm_create_keyval", K_COMM, comm_copy_attr_fn, CB_C,
                             comm_delete_attr_fn, CB_C, comm_keyval, extra_state);
}

int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state)
{
    return mpi_keyval_create("MPI_Keyval_create", K_COMM, copy_fn, CB_C, delete_fn, CB_C,
                             keyval, extra_state);
}

int MPI_Comm_free_keyval(int *comm_keyval)
{
    return mpi_keyval_free("MPI_Comm_free_keyval", K_COMM, comm_keyval);
}

int MPI_Keyval_free(int *keyval) { return mpi_keyval_free("MPI_Keyval_free", K_COMM, keyval); }

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_set_attr", comm, &c));
    return mpi_attr_set("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Attr_put", comm, &c));
    return mpi_attr_set("MPI_Attr_put", comm, keyval, attribute_val);
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    struct mcomm *c;
    TRY(mpi_check_comm("MPI_Comm_delete_attr", comm, &c));
    return mpi_attr_delete("MPI_Comm_delete_attr", comm, comm_keyval);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval) { return MPI_Comm_delete_attr(comm, keyval); }

/* ---- datatypes (MPI-3.1 6.7.4) ---- */

int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                           MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                           void *extra_state)
{
    return mpi_keyval_create("MPI_Type_create_keyval", K_TYPE, type_copy_attr_fn, CB_C,
                             type_delete_attr_fn, CB_C, type_keyval, extra_state);
}

int MPI_Type_free_keyval(int *type_keyval)
{
    return mpi_keyval_free("MPI_Type_free_keyval", K_TYPE, type_keyval);
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_set_attr", datatype, &t));
    return mpi_attr_set("MPI_Type_set_attr", datatype, type_keyval, attribute_val);
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_get_attr", datatype, &t));
    return mpi_attr_get("MPI_Type_get_attr", datatype, type_keyval, attribute_val, flag);
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_delete_attr", datatype, &t));
    return mpi_attr_delete("MPI_Type_delete_attr", datatype, type_keyval);
}
