/*
 * What a datatype was made of and what it is called: MPI_Type_get_envelope,
 * MPI_Type_get_contents (MPI-3.1 4.1.13), MPI_Type_set_name / get_name.
 *
 * A derived type's map is flattened when it is made (mpi_type.c), so the
 * map needs nothing of the types it was made from; only the record of its
 * constructor's arguments names them.  Those types are held (refs) while a
 * record names them, so MPI_Type_get_contents can hand them back after the
 * program freed its own handles, as MPI requires; the program frees what
 * it gets back, as it would any derived type.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

struct type_args {
    int ni, na, nt;
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types;
};

static void args_free(struct type_args *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->nt; i++) {
        struct mtype *t = mpi_type_get(a->types[i]);
        if (t && !t->predefined)
            mpi_type_unref(t);
    }
    free(a->ints);
    free(a->aints);
    free(a->types);
    free(a);
}

void mpi_type_unref(struct mtype *t)
{
    if (--t->refs > 0)
        return;
    /* The last hold on it was a record's or a request's: its attributes
     * go now (a callback's error is raised; there is no caller to return
     * it to). */
    t->refs = 1;   /* alive while the callbacks run */
    mpi_attrs_delete("MPI_Type_free", mpi_type_handle(t));
    t->refs = 0;
    free(t->attrs.a);
    struct type_args *a = t->args;
    free(t->blocks);
    free(t->uname);
    memset(t, 0, sizeof *t);
    args_free(a);   /* after: the types it names may be released in turn */
}

bool mpi_type_hold(MPI_Datatype h)
{
    struct mtype *t = mpi_type_get(h);
    if (!t || t->predefined)
        return false;
    t->refs++;
    return true;
}

void mpi_type_drop(MPI_Datatype h)
{
    struct mtype *t = mpi_type_get(h);
    if (t && !t->predefined)
        mpi_type_unref(t);
}

int mpi_type_record(MPI_Datatype newtype, int combiner, int ni, const int *ints, int na,
                    const MPI_Aint *aints, int nt, const MPI_Datatype *types)
{
    struct mtype *t = mpi_type_get(newtype);
    struct type_args *a = calloc(1, sizeof *a);
    if (a) {
        a->ints = malloc(sizeof(int) * (size_t)(ni ? ni : 1));
        a->aints = malloc(sizeof(MPI_Aint) * (size_t)(na ? na : 1));
        a->types = malloc(sizeof(MPI_Datatype) * (size_t)(nt ? nt : 1));
    }
    if (!a || !a->ints || !a->aints || !a->types) {
        args_free(a);
        MPI_Type_free(&newtype);
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI datatype constructor",
                         "no memory for the record of its arguments");
    }
    a->ni = ni;
    a->na = na;
    a->nt = nt;
    if (ni)
        memcpy(a->ints, ints, sizeof(int) * (size_t)ni);
    if (na)
        memcpy(a->aints, aints, sizeof(MPI_Aint) * (size_t)na);
    for (int i = 0; i < nt; i++) {
        a->types[i] = types[i];
        struct mtype *o = mpi_type_get(types[i]);
        if (o && !o->predefined)
            o->refs++;
    }
    args_free(t->args);
    t->args = a;
    t->combiner = combiner;
    return MPI_SUCCESS;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_get_envelope", datatype, &t));
    const struct type_args *a = t->args;
    *num_integers = a ? a->ni : 0;
    *num_addresses = a ? a->na : 0;
    *num_datatypes = a ? a->nt : 0;
    *combiner = t->predefined ? MPI_COMBINER_NAMED : t->combiner;
    return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[],
                          MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    const char *call = "MPI_Type_get_contents";
    struct mtype *t;
    TRY(mpi_check_type_any(call, datatype, &t));
    const struct type_args *a = t->args;
    if (t->predefined || !a)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_TYPE, call,
                         "%s is predefined: it has no contents", t->name ? t->name : "it");
    if (max_integers < a->ni || max_addresses < a->na || max_datatypes < a->nt)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                         "room for %d integers, %d addresses and %d datatypes where it has %d, "
                         "%d and %d", max_integers, max_addresses, max_datatypes, a->ni, a->na,
                         a->nt);
    if (a->ni)
        memcpy(array_of_integers, a->ints, sizeof(int) * (size_t)a->ni);
    if (a->na)
        memcpy(array_of_addresses, a->aints, sizeof(MPI_Aint) * (size_t)a->na);
    for (int i = 0; i < a->nt; i++) {
        array_of_datatypes[i] = a->types[i];
        struct mtype *o = mpi_type_get(a->types[i]);
        if (o && !o->predefined)
            o->refs++;   /* the program's new handle: it frees it */
    }
    return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_set_name", datatype, &t));
    char *n = strndup(type_name, MPI_MAX_OBJECT_NAME - 1);
    if (!n)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Type_set_name", "no memory");
    free(t->uname);
    t->uname = n;
    return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    struct mtype *t;
    TRY(mpi_check_type_any("MPI_Type_get_name", datatype, &t));
    const char *n = t->uname ? t->uname : t->predefined && t->name ? t->name : "";
    size_t len = strnlen(n, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, n, len);
    type_name[len] = 0;
    *resultlen = (int)len;
    return MPI_SUCCESS;
}
