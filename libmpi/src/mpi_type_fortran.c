/*
 * Types by Fortran kind (MPI-3.1 17.1.9): MPI_Type_match_size, and the
 * parameterized types of MPI_Type_create_f90_real/_complex/_integer, which
 * name a kind by precision and range as SELECTED_REAL_KIND and
 * SELECTED_INT_KIND do (gfortran's kinds on x86-64: REAL 4, 8 and 10 (C's
 * long double), INTEGER 1, 2, 4, 8; Tern's MPI has no 16-byte REAL).
 */
#include "mpi_impl.h"

/* MPI-3.1 17.1.9: the predefined type of a Fortran variable of typeclass
 * and size bytes (a REAL of 16 bytes is C's long double: Tern's MPI has no
 * MPI_REAL16). */
int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const struct {
        int cls, size;
        MPI_Datatype type;
    } match[] = {
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},          {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_LONG_DOUBLE},   {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},    {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},    {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_C_LONG_DOUBLE_COMPLEX},
    };
    NEED_INIT("MPI_Type_match_size");
    if (typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_INTEGER &&
        typeclass != MPI_TYPECLASS_COMPLEX)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_match_size",
                         "%d is not a type class", typeclass);
    for (size_t i = 0; i < sizeof match / sizeof *match; i++)
        if (match[i].cls == typeclass && match[i].size == size) {
            *datatype = match[i].type;
            return MPI_SUCCESS;
        }
    return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_match_size",
                     "no %s of %d bytes", typeclass == MPI_TYPECLASS_REAL ? "REAL"
                                          : typeclass == MPI_TYPECLASS_INTEGER ? "INTEGER"
                                                                               : "COMPLEX",
                     size);
}

/* The kind SELECTED_REAL_KIND(p, r) picks: 0 for REAL(4), 1 for REAL(8),
 * 2 for REAL(10); -1 for none here.  MPI_UNDEFINED: any. */
static int real_kind(int p, int r)
{
    static const int prec[] = {6, 15, 18}, range[] = {37, 307, 4931};
    for (int k = 0; k < 3; k++)
        if ((p == MPI_UNDEFINED || p <= prec[k]) && (r == MPI_UNDEFINED || r <= range[k]))
            return k;
    return -1;
}

/* One type per (combiner, p, r), made on first use and kept: MPI says the
 * same arguments give the same handle, and the program never frees it. */
#define MAX_F90 64
static struct {
    int combiner, p, r;
    MPI_Datatype type;
} f90[MAX_F90];
static int nf90;

static int f90_type(const char *call, int combiner, int p, int r, MPI_Datatype base,
                    MPI_Datatype *newtype)
{
    for (int i = 0; i < nf90; i++)
        if (f90[i].combiner == combiner && f90[i].p == p && f90[i].r == r) {
            *newtype = f90[i].type;
            return MPI_SUCCESS;
        }
    if (nf90 == MAX_F90)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_INTERN, call, "%d parameterized types made",
                         MAX_F90);
    MPI_Datatype t;
    TRY(MPI_Type_contiguous(1, base, &t));
    TRY(MPI_Type_commit(&t));
    int ints[2] = {combiner == MPI_COMBINER_F90_INTEGER ? r : p, r};
    TRY(mpi_type_record(t, combiner, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2, ints, 0,
                        NULL, 0, NULL));
    mpi_type_hold(t); /* a stray MPI_Type_free of it leaves it working */
    f90[nf90].combiner = combiner;
    f90[nf90].p = p;
    f90[nf90].r = r;
    f90[nf90++].type = t;
    *newtype = t;
    return MPI_SUCCESS;
}

static int real_or_complex(const char *call, int combiner, int p, int r,
                           MPI_Datatype *newtype)
{
    NEED_INIT(call);
    static const MPI_Datatype reals[] = {MPI_REAL4, MPI_REAL8, MPI_LONG_DOUBLE},
                              complexes[] = {MPI_COMPLEX8, MPI_COMPLEX16,
                                             MPI_C_LONG_DOUBLE_COMPLEX};
    int k = p == MPI_UNDEFINED && r == MPI_UNDEFINED ? -1 : real_kind(p, r);
    if (k < 0)
        return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, call,
                         "no kind of precision %d and range %d here (REAL 4, 8 and 10)", p, r);
    return f90_type(call, combiner, p, r,
                    combiner == MPI_COMBINER_F90_REAL ? reals[k] : complexes[k], newtype);
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return real_or_complex("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, newtype);
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return real_or_complex("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r,
                           newtype);
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    NEED_INIT("MPI_Type_create_f90_integer");
    static const int range[] = {2, 4, 9, 18};
    static const MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                        MPI_INTEGER8};
    for (int k = 0; k < 4; k++)
        if (r <= range[k])
            return f90_type("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER,
                            MPI_UNDEFINED, r, ints[k], newtype);
    return mpi_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_create_f90_integer",
                     "no INTEGER kind of range %d here (at most 18)", r);
}
