/*
 * The Fortran bindings (mpif.h), in gfortran's calling convention: lower
 * case names with one trailing underscore, every argument by reference,
 * ierror last, CHARACTER lengths as hidden size_t arguments after all the
 * others.  Handles are the same integers as in C, and a Fortran status
 * (INTEGER status(MPI_STATUS_SIZE)) is the same five ints as C's
 * MPI_Status, so most bindings only dereference.  MPI_BOTTOM, MPI_IN_PLACE
 * MPI_STATUS(ES)_IGNORE, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are variables
 * of the common block TERNMPIF (mkmpif.py): their addresses become C's
 * values here.
 */
/* The bindings call the PMPI_ names, which take MPI_THREAD_MULTIPLE's
 * lock (mpi_pmpi_names.h, libmpi/mkpmpi.py). */
#define TERN_MPI_FORTRAN_BINDINGS
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

typedef MPI_Fint F;

/* The common block: defined here, so every program shares this one. */
struct ternmpif {
    F bottom, in_place;
    F status_ignore[5];
    F statuses_ignore[5];
    F unweighted, weights_empty;   /* after the others: older programs' block */
};
struct ternmpif ternmpif_;

void *mpi_f_buf(void *p)
{
    if (p == &ternmpif_.bottom)
        return MPI_BOTTOM;
    if (p == &ternmpif_.in_place)
        return MPI_IN_PLACE;
    return p;
}
#define B(p) mpi_f_buf(p)

static MPI_Status *st1(F *s)
{
    return (void *)s == (void *)ternmpif_.status_ignore ||
                   (void *)s == (void *)ternmpif_.statuses_ignore
               ? MPI_STATUS_IGNORE
               : (MPI_Status *)(void *)s;
}
#define ST(s) st1(s)

/* A distributed graph's weights argument. */
static int *weights_of(F *w)
{
    if (w == &ternmpif_.unweighted)
        return MPI_UNWEIGHTED;
    if (w == &ternmpif_.weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return w;
}
#define W(w) weights_of(w)

/* A C string into a blank-padded Fortran CHARACTER. */
static void to_fortran(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n > len)
        n = len;
    memcpy(dst, src, n);
    memset(dst + n, ' ', len - n);
}

/* A Fortran CHARACTER argument's length without its trailing blanks, which
 * are padding, not part of the string (leading blanks are kept). */
static size_t fortran_len(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    return len;
}

/* A CHARACTER argument as a C string (trailing blanks dropped): malloc'd,
 * or NULL when there is no memory. */
static char *c_string(const char *s, size_t len)
{
    size_t n = fortran_len(s, len);
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = 0;
    }
    return c;
}

/* ---- environment ---- */
void mpi_init_(F *ierr) { *ierr = MPI_Init(NULL, NULL); }
void mpi_init_thread_(F *required, F *provided, F *ierr)
{
    *ierr = MPI_Init_thread(NULL, NULL, *required, provided);
}
void mpi_initialized_(F *flag, F *ierr) { *ierr = MPI_Initialized(flag); }
void mpi_pcontrol_(F *level, F *ierr) { *ierr = MPI_Pcontrol(*level); }
void mpi_finalize_(F *ierr) { *ierr = MPI_Finalize(); }
void mpi_finalized_(F *flag, F *ierr) { *ierr = MPI_Finalized(flag); }
void mpi_abort_(F *comm, F *code, F *ierr) { *ierr = MPI_Abort(*comm, *code); }
void mpi_query_thread_(F *provided, F *ierr) { *ierr = MPI_Query_thread(provided); }
void mpi_is_thread_main_(F *flag, F *ierr) { *ierr = MPI_Is_thread_main(flag); }
double mpi_wtime_(void) { return MPI_Wtime(); }
double mpi_wtick_(void) { return MPI_Wtick(); }
void mpi_get_processor_name_(char *name, F *len, F *ierr, size_t name_len)
{
    char buf[MPI_MAX_PROCESSOR_NAME];
    *ierr = MPI_Get_processor_name(buf, len);
    to_fortran(name, name_len, buf);
    if ((size_t)*len > name_len)
        *len = (F)name_len;
}
void mpi_get_version_(F *v, F *sv, F *ierr) { *ierr = MPI_Get_version(v, sv); }
void mpi_get_library_version_(char *v, F *len, F *ierr, size_t vlen)
{
    char buf[MPI_MAX_LIBRARY_VERSION_STRING];
    *ierr = MPI_Get_library_version(buf, len);
    to_fortran(v, vlen, buf);
}

/* ---- errors ---- */
void mpi_error_string_(F *code, char *s, F *len, F *ierr, size_t slen)
{
    char buf[MPI_MAX_ERROR_STRING];
    *ierr = MPI_Error_string(*code, buf, len);
    to_fortran(s, slen, buf);
    if ((size_t)*len > slen)
        *len = (F)slen;
}
void mpi_error_class_(F *code, F *cls, F *ierr) { *ierr = MPI_Error_class(*code, cls); }
void mpi_add_error_class_(F *cls, F *ierr) { *ierr = MPI_Add_error_class(cls); }
void mpi_add_error_code_(F *cls, F *code, F *ierr) { *ierr = MPI_Add_error_code(*cls, code); }
void mpi_add_error_string_(F *code, char *s, F *ierr, size_t slen)
{
    char *c = c_string(s, slen);
    *ierr = c ? MPI_Add_error_string(*code, c) : MPI_ERR_NO_MEM;
    free(c);
}
void mpi_comm_set_errhandler_(F *comm, F *eh, F *ierr)
{
    *ierr = MPI_Comm_set_errhandler(*comm, *eh);
}
void mpi_comm_get_errhandler_(F *comm, F *eh, F *ierr)
{
    *ierr = MPI_Comm_get_errhandler(*comm, eh);
}
void mpi_errhandler_set_(F *comm, F *eh, F *ierr) { *ierr = MPI_Errhandler_set(*comm, *eh); }
void mpi_errhandler_get_(F *comm, F *eh, F *ierr) { *ierr = MPI_Errhandler_get(*comm, eh); }
void mpi_errhandler_free_(F *eh, F *ierr) { *ierr = MPI_Errhandler_free(eh); }
void mpi_errhandler_create_(MPI_Handler_function *fn, F *eh, F *ierr)
{
    *ierr = MPI_Errhandler_create(fn, eh);
}
void mpi_comm_create_errhandler_(MPI_Comm_errhandler_function *fn, F *eh, F *ierr)
{
    /* A Fortran subroutine (comm, error code), both INTEGERs by reference:
     * what the library passes a C handler (mpi_errors.c), so it is called
     * as it is.  gfortran's subroutines ignore C's variadic rest. */
    *ierr = MPI_Comm_create_errhandler(fn, eh);
}
void mpi_comm_call_errhandler_(F *comm, F *code, F *ierr)
{
    *ierr = MPI_Comm_call_errhandler(*comm, *code);
}

/* ---- communicators and groups ---- */
void mpi_comm_size_(F *comm, F *size, F *ierr) { *ierr = MPI_Comm_size(*comm, size); }
void mpi_comm_rank_(F *comm, F *rank, F *ierr) { *ierr = MPI_Comm_rank(*comm, rank); }
void mpi_comm_dup_(F *comm, F *nc, F *ierr) { *ierr = MPI_Comm_dup(*comm, nc); }
void mpi_comm_dup_with_info_(F *comm, F *info, F *nc, F *ierr)
{
    *ierr = MPI_Comm_dup_with_info(*comm, *info, nc);
}
void mpi_comm_idup_(F *comm, F *nc, F *req, F *ierr) { *ierr = MPI_Comm_idup(*comm, nc, req); }
void mpi_comm_idup_with_info_(F *comm, F *info, F *nc, F *req, F *ierr)
{
    *ierr = MPI_Comm_idup_with_info(*comm, *info, nc, req);
}
void mpi_comm_set_info_(F *comm, F *info, F *ierr) { *ierr = MPI_Comm_set_info(*comm, *info); }
void mpi_comm_get_info_(F *comm, F *info, F *ierr) { *ierr = MPI_Comm_get_info(*comm, info); }
void mpi_comm_split_(F *comm, F *color, F *key, F *nc, F *ierr)
{
    *ierr = MPI_Comm_split(*comm, *color, *key, nc);
}
void mpi_comm_create_(F *comm, F *g, F *nc, F *ierr) { *ierr = MPI_Comm_create(*comm, *g, nc); }
void mpi_comm_free_(F *comm, F *ierr) { *ierr = MPI_Comm_free(comm); }
void mpi_comm_compare_(F *a, F *b, F *res, F *ierr) { *ierr = MPI_Comm_compare(*a, *b, res); }
void mpi_comm_group_(F *comm, F *g, F *ierr) { *ierr = MPI_Comm_group(*comm, g); }
void mpi_comm_test_inter_(F *comm, F *flag, F *ierr) { *ierr = MPI_Comm_test_inter(*comm, flag); }
void mpi_intercomm_create_(F *local, F *lleader, F *peer, F *rleader, F *tag, F *newcomm, F *ierr)
{
    *ierr = MPI_Intercomm_create(*local, *lleader, *peer, *rleader, *tag, newcomm);
}
void mpi_intercomm_merge_(F *comm, F *high, F *newcomm, F *ierr)
{
    *ierr = MPI_Intercomm_merge(*comm, *high, newcomm);
}
void mpi_comm_create_group_(F *comm, F *g, F *tag, F *newcomm, F *ierr)
{
    *ierr = MPI_Comm_create_group(*comm, *g, *tag, newcomm);
}
void mpi_comm_remote_size_(F *comm, F *size, F *ierr) { *ierr = MPI_Comm_remote_size(*comm, size); }
void mpi_comm_remote_group_(F *comm, F *g, F *ierr) { *ierr = MPI_Comm_remote_group(*comm, g); }
/* Fortran names keep MPI_MAX_OBJECT_NAME characters, one more than C's
 * (which need the NUL): so neither goes through the C call's buffer. */
void mpi_comm_set_name_(F *comm, char *name, F *ierr, size_t name_len)
{
    size_t n = fortran_len(name, name_len);
    *ierr = mpi_comm_name_set("MPI_Comm_set_name", *comm, name,
                              n < MPI_MAX_OBJECT_NAME ? n : MPI_MAX_OBJECT_NAME);
}
void mpi_comm_get_name_(F *comm, char *name, F *len, F *ierr, size_t name_len)
{
    struct mcomm *c;
    *ierr = mpi_check_comm("MPI_Comm_get_name", *comm, &c);
    /* On an error returned the name is empty (all blanks), as MPI says. */
    to_fortran(name, name_len, *ierr ? "" : c->name);
    size_t n = *ierr ? 0 : strlen(c->name);
    *len = (F)(n < name_len ? n : name_len);
}
/* A predefined attribute's C value points at the int; a program's own,
 * set from Fortran, is the INTEGER itself (MPI-3.1 18.2.7). */
void mpi_comm_get_attr_(F *comm, F *key, MPI_Aint *val, F *flag, F *ierr)
{
    int *p = NULL;
    *ierr = MPI_Comm_get_attr(*comm, *key, &p, flag);
    if (!*ierr && *flag)
        *val = *key >= FIRST_KEYVAL ? (MPI_Aint)p : *p;
}
void mpi_attr_get_(F *comm, F *key, F *val, F *flag, F *ierr)
{
    int *p = NULL;
    *ierr = MPI_Attr_get(*comm, *key, &p, flag);
    if (!*ierr && *flag)
        *val = *key >= FIRST_KEYVAL ? (F)(MPI_Aint)p : *p;
}

/* The predefined callbacks, as Fortran passes them: NULL_COPY gives no
 * copy, DUP the same value, NULL_DELETE does nothing.  A keyval made with
 * them keeps C's behaviour for them. */
void mpi_comm_null_copy_fn_(F *comm, F *key, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                            F *flag, F *ierr)
{
    (void)comm, (void)key, (void)extra, (void)in, (void)out;
    *flag = 0;
    *ierr = MPI_SUCCESS;
}
void mpi_comm_dup_fn_(F *comm, F *key, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out, F *flag,
                      F *ierr)
{
    (void)comm, (void)key, (void)extra;
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void mpi_comm_null_delete_fn_(F *comm, F *key, MPI_Aint *val, MPI_Aint *extra, F *ierr)
{
    (void)comm, (void)key, (void)val, (void)extra;
    *ierr = MPI_SUCCESS;
}
void mpi_null_copy_fn_(F *comm, F *key, F *extra, F *in, F *out, F *flag, F *ierr)
{
    (void)comm, (void)key, (void)extra, (void)in, (void)out;
    *flag = 0;
    *ierr = MPI_SUCCESS;
}
void mpi_dup_fn_(F *comm, F *key, F *extra, F *in, F *out, F *flag, F *ierr)
{
    (void)comm, (void)key, (void)extra;
    *out = *in;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
void mpi_null_delete_fn_(F *comm, F *key, F *val, F *extra, F *ierr)
{
    (void)comm, (void)key, (void)val, (void)extra;
    *ierr = MPI_SUCCESS;
}

/* Datatypes' predefined callbacks have the communicators' shape. */
void mpi_type_null_copy_fn_(F *type, F *key, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                            F *flag, F *ierr)
{
    mpi_comm_null_copy_fn_(type, key, extra, in, out, flag, ierr);
}
void mpi_type_dup_fn_(F *type, F *key, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out, F *flag,
                      F *ierr)
{
    mpi_comm_dup_fn_(type, key, extra, in, out, flag, ierr);
}
void mpi_type_null_delete_fn_(F *type, F *key, MPI_Aint *val, MPI_Aint *extra, F *ierr)
{
    mpi_comm_null_delete_fn_(type, key, val, extra, ierr);
}

/* A Fortran callback as a keyval keeps it: the predefined ones as C's. */
static void keyval_fortran(const char *call, int obj_kind, void *copy, void *del, F *keyval,
                           void *extra, int kind, F *ierr)
{
    bool mpi1 = kind == CB_FORTRAN_INT, type = obj_kind == K_TYPE;
    void *nc = mpi1 ? (void *)mpi_null_copy_fn_
               : type ? (void *)mpi_type_null_copy_fn_ : (void *)mpi_comm_null_copy_fn_;
    void *dc = mpi1 ? (void *)mpi_dup_fn_
               : type ? (void *)mpi_type_dup_fn_ : (void *)mpi_comm_dup_fn_;
    void *nd = mpi1 ? (void *)mpi_null_delete_fn_
               : type ? (void *)mpi_type_null_delete_fn_ : (void *)mpi_comm_null_delete_fn_;
    MPI_Comm_copy_attr_function *c = (MPI_Comm_copy_attr_function *)copy;
    if (copy == nc || copy == dc)
        c = copy == nc ? NULL : MPIR_Dup_fn;
    *ierr = mpi_keyval_create(call, obj_kind, c, copy == nc || copy == dc ? CB_C : kind,
                              del == nd ? NULL : (MPI_Comm_delete_attr_function *)del,
                              del == nd ? CB_C : kind, keyval, extra);
}
void mpi_comm_create_keyval_(void *copy, void *del, F *keyval, MPI_Aint *extra, F *ierr)
{
    keyval_fortran("MPI_Comm_create_keyval", K_COMM, copy, del, keyval, (void *)*extra,
                   CB_FORTRAN, ierr);
}
void mpi_keyval_create_(void *copy, void *del, F *keyval, F *extra, F *ierr)
{
    keyval_fortran("MPI_Keyval_create", K_COMM, copy, del, keyval, (void *)(MPI_Aint)*extra,
                   CB_FORTRAN_INT, ierr);
}
void mpi_type_create_keyval_(void *copy, void *del, F *keyval, MPI_Aint *extra, F *ierr)
{
    keyval_fortran("MPI_Type_create_keyval", K_TYPE, copy, del, keyval, (void *)*extra,
                   CB_FORTRAN, ierr);
}
void mpi_type_free_keyval_(F *keyval, F *ierr) { *ierr = MPI_Type_free_keyval(keyval); }
void mpi_type_set_attr_(F *type, F *key, MPI_Aint *val, F *ierr)
{
    *ierr = MPI_Type_set_attr(*type, *key, (void *)*val);
}
void mpi_type_get_attr_(F *type, F *key, MPI_Aint *val, F *flag, F *ierr)
{
    void *p = NULL;
    *ierr = MPI_Type_get_attr(*type, *key, &p, flag);
    if (!*ierr && *flag)
        *val = (MPI_Aint)p;
}
void mpi_type_delete_attr_(F *type, F *key, F *ierr) { *ierr = MPI_Type_delete_attr(*type, *key); }
void mpi_comm_free_keyval_(F *keyval, F *ierr) { *ierr = MPI_Comm_free_keyval(keyval); }
void mpi_keyval_free_(F *keyval, F *ierr) { *ierr = MPI_Keyval_free(keyval); }
void mpi_comm_set_attr_(F *comm, F *key, MPI_Aint *val, F *ierr)
{
    *ierr = MPI_Comm_set_attr(*comm, *key, (void *)*val);
}
void mpi_attr_put_(F *comm, F *key, F *val, F *ierr)
{
    *ierr = MPI_Attr_put(*comm, *key, (void *)(MPI_Aint)*val);
}
void mpi_comm_delete_attr_(F *comm, F *key, F *ierr) { *ierr = MPI_Comm_delete_attr(*comm, *key); }
void mpi_attr_delete_(F *comm, F *key, F *ierr) { *ierr = MPI_Attr_delete(*comm, *key); }
void mpi_group_size_(F *g, F *size, F *ierr) { *ierr = MPI_Group_size(*g, size); }
void mpi_group_rank_(F *g, F *rank, F *ierr) { *ierr = MPI_Group_rank(*g, rank); }
void mpi_group_incl_(F *g, F *n, F *ranks, F *ng, F *ierr)
{
    *ierr = MPI_Group_incl(*g, *n, ranks, ng);
}
void mpi_group_excl_(F *g, F *n, F *ranks, F *ng, F *ierr)
{
    *ierr = MPI_Group_excl(*g, *n, ranks, ng);
}
void mpi_group_range_incl_(F *g, F *n, F *ranges, F *ng, F *ierr)
{
    *ierr = MPI_Group_range_incl(*g, *n, (int(*)[3])ranges, ng);
}
void mpi_group_range_excl_(F *g, F *n, F *ranges, F *ng, F *ierr)
{
    *ierr = MPI_Group_range_excl(*g, *n, (int(*)[3])ranges, ng);
}
void mpi_group_union_(F *a, F *b, F *ng, F *ierr) { *ierr = MPI_Group_union(*a, *b, ng); }
void mpi_group_intersection_(F *a, F *b, F *ng, F *ierr)
{
    *ierr = MPI_Group_intersection(*a, *b, ng);
}
void mpi_group_difference_(F *a, F *b, F *ng, F *ierr)
{
    *ierr = MPI_Group_difference(*a, *b, ng);
}
void mpi_group_translate_ranks_(F *g1, F *n, F *r1, F *g2, F *r2, F *ierr)
{
    *ierr = MPI_Group_translate_ranks(*g1, *n, r1, *g2, r2);
}
void mpi_group_compare_(F *a, F *b, F *res, F *ierr) { *ierr = MPI_Group_compare(*a, *b, res); }
void mpi_group_free_(F *g, F *ierr) { *ierr = MPI_Group_free(g); }

/* ---- topologies ---- */
void mpi_cart_create_(F *comm, F *nd, F *dims, F *periods, F *reorder, F *nc, F *ierr)
{
    *ierr = MPI_Cart_create(*comm, *nd, dims, periods, *reorder, nc);
}
void mpi_cart_coords_(F *comm, F *rank, F *maxd, F *coords, F *ierr)
{
    *ierr = MPI_Cart_coords(*comm, *rank, *maxd, coords);
}
void mpi_cart_rank_(F *comm, F *coords, F *rank, F *ierr)
{
    *ierr = MPI_Cart_rank(*comm, coords, rank);
}
void mpi_cart_shift_(F *comm, F *dir, F *disp, F *src, F *dst, F *ierr)
{
    *ierr = MPI_Cart_shift(*comm, *dir, *disp, src, dst);
}
void mpi_cart_sub_(F *comm, F *remain, F *nc, F *ierr) { *ierr = MPI_Cart_sub(*comm, remain, nc); }
void mpi_cart_get_(F *comm, F *maxd, F *dims, F *periods, F *coords, F *ierr)
{
    *ierr = MPI_Cart_get(*comm, *maxd, dims, periods, coords);
}
void mpi_cartdim_get_(F *comm, F *nd, F *ierr) { *ierr = MPI_Cartdim_get(*comm, nd); }
void mpi_dims_create_(F *nn, F *nd, F *dims, F *ierr) { *ierr = MPI_Dims_create(*nn, *nd, dims); }
void mpi_topo_test_(F *comm, F *status, F *ierr) { *ierr = MPI_Topo_test(*comm, status); }
void mpi_cart_map_(F *comm, F *nd, F *dims, F *periods, F *newrank, F *ierr)
{
    *ierr = MPI_Cart_map(*comm, *nd, dims, periods, newrank);
}
void mpi_graph_create_(F *comm, F *nnodes, F *index, F *edges, F *reorder, F *nc, F *ierr)
{
    *ierr = MPI_Graph_create(*comm, *nnodes, index, edges, *reorder, nc);
}
void mpi_graphdims_get_(F *comm, F *nnodes, F *nedges, F *ierr)
{
    *ierr = MPI_Graphdims_get(*comm, nnodes, nedges);
}
void mpi_graph_get_(F *comm, F *maxindex, F *maxedges, F *index, F *edges, F *ierr)
{
    *ierr = MPI_Graph_get(*comm, *maxindex, *maxedges, index, edges);
}
void mpi_graph_neighbors_count_(F *comm, F *rank, F *n, F *ierr)
{
    *ierr = MPI_Graph_neighbors_count(*comm, *rank, n);
}
void mpi_graph_neighbors_(F *comm, F *rank, F *max, F *nb, F *ierr)
{
    *ierr = MPI_Graph_neighbors(*comm, *rank, *max, nb);
}
void mpi_graph_map_(F *comm, F *nnodes, F *index, F *edges, F *newrank, F *ierr)
{
    *ierr = MPI_Graph_map(*comm, *nnodes, index, edges, newrank);
}
void mpi_dist_graph_create_adjacent_(F *comm, F *indeg, F *src, F *srcw, F *outdeg, F *dst,
                                     F *dstw, F *info, F *reorder, F *nc, F *ierr)
{
    *ierr = MPI_Dist_graph_create_adjacent(*comm, *indeg, src, W(srcw), *outdeg, dst, W(dstw),
                                           *info, *reorder, nc);
}
void mpi_dist_graph_create_(F *comm, F *n, F *src, F *deg, F *dst, F *w, F *info, F *reorder,
                            F *nc, F *ierr)
{
    *ierr = MPI_Dist_graph_create(*comm, *n, src, deg, dst, W(w), *info, *reorder, nc);
}
void mpi_dist_graph_neighbors_count_(F *comm, F *indeg, F *outdeg, F *weighted, F *ierr)
{
    /* weighted is a LOGICAL: gfortran's .TRUE. is 1, C's true too. */
    *ierr = MPI_Dist_graph_neighbors_count(*comm, indeg, outdeg, weighted);
}
void mpi_dist_graph_neighbors_(F *comm, F *maxin, F *src, F *srcw, F *maxout, F *dst, F *dstw,
                               F *ierr)
{
    *ierr = MPI_Dist_graph_neighbors(*comm, *maxin, src, W(srcw), *maxout, dst, W(dstw));
}

/* ---- point to point ---- */
#define SEND(name, cname)                                                               \
    void name(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)          \
    {                                                                                   \
        *ierr = cname(B(buf), *count, *type, *dest, *tag, *comm);                       \
    }
SEND(mpi_send_, MPI_Send)
SEND(mpi_ssend_, MPI_Ssend)
SEND(mpi_rsend_, MPI_Rsend)
SEND(mpi_bsend_, MPI_Bsend)
#define ISEND(name, cname)                                                              \
    void name(void *buf, F *count, F *type, F *peer, F *tag, F *comm, F *req, F *ierr)  \
    {                                                                                   \
        *ierr = cname(B(buf), *count, *type, *peer, *tag, *comm, req);                  \
    }
ISEND(mpi_isend_, MPI_Isend)
ISEND(mpi_issend_, MPI_Issend)
ISEND(mpi_irsend_, MPI_Irsend)
ISEND(mpi_ibsend_, MPI_Ibsend)
ISEND(mpi_irecv_, MPI_Irecv)
ISEND(mpi_send_init_, MPI_Send_init)
ISEND(mpi_ssend_init_, MPI_Ssend_init)
ISEND(mpi_rsend_init_, MPI_Rsend_init)
ISEND(mpi_bsend_init_, MPI_Bsend_init)
ISEND(mpi_recv_init_, MPI_Recv_init)

void mpi_recv_(void *buf, F *count, F *type, F *src, F *tag, F *comm, F *status, F *ierr)
{
    *ierr = MPI_Recv(B(buf), *count, *type, *src, *tag, *comm, ST(status));
}
void mpi_buffer_attach_(void *buf, F *size, F *ierr) { *ierr = MPI_Buffer_attach(buf, *size); }
void mpi_buffer_detach_(void *buf, F *size, F *ierr)
{
    void *p; /* Fortran gets nothing back but the size */
    (void)buf;
    *ierr = MPI_Buffer_detach(&p, size);
}
void mpi_sendrecv_(void *sb, F *sc, F *st, F *dest, F *stag, void *rb, F *rc, F *rt, F *src,
                   F *rtag, F *comm, F *status, F *ierr)
{
    *ierr = MPI_Sendrecv(B(sb), *sc, *st, *dest, *stag, B(rb), *rc, *rt, *src, *rtag, *comm,
                         ST(status));
}
void mpi_sendrecv_replace_(void *buf, F *count, F *type, F *dest, F *stag, F *src, F *rtag,
                           F *comm, F *status, F *ierr)
{
    *ierr = MPI_Sendrecv_replace(B(buf), *count, *type, *dest, *stag, *src, *rtag, *comm,
                                 ST(status));
}
void mpi_probe_(F *src, F *tag, F *comm, F *status, F *ierr)
{
    *ierr = MPI_Probe(*src, *tag, *comm, ST(status));
}
void mpi_iprobe_(F *src, F *tag, F *comm, F *flag, F *status, F *ierr)
{
    *ierr = MPI_Iprobe(*src, *tag, *comm, flag, ST(status));
}
void mpi_isendrecv_(void *sb, F *sc, F *st, F *dest, F *stag, void *rb, F *rc, F *rt, F *src,
                    F *rtag, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Isendrecv(B(sb), *sc, *st, *dest, *stag, B(rb), *rc, *rt, *src, *rtag, *comm,
                          req);
}
void mpi_isendrecv_replace_(void *buf, F *count, F *type, F *dest, F *stag, F *src, F *rtag,
                            F *comm, F *req, F *ierr)
{
    *ierr = MPI_Isendrecv_replace(B(buf), *count, *type, *dest, *stag, *src, *rtag, *comm, req);
}
void mpi_mprobe_(F *src, F *tag, F *comm, F *message, F *status, F *ierr)
{
    *ierr = MPI_Mprobe(*src, *tag, *comm, message, ST(status));
}
void mpi_improbe_(F *src, F *tag, F *comm, F *flag, F *message, F *status, F *ierr)
{
    *ierr = MPI_Improbe(*src, *tag, *comm, flag, message, ST(status));
}
void mpi_mrecv_(void *buf, F *count, F *type, F *message, F *status, F *ierr)
{
    *ierr = MPI_Mrecv(B(buf), *count, *type, message, ST(status));
}
void mpi_imrecv_(void *buf, F *count, F *type, F *message, F *req, F *ierr)
{
    *ierr = MPI_Imrecv(B(buf), *count, *type, message, req);
}
void mpi_start_(F *req, F *ierr) { *ierr = MPI_Start(req); }
void mpi_startall_(F *n, F *reqs, F *ierr) { *ierr = MPI_Startall(*n, reqs); }

/* ---- requests ---- */
static MPI_Status *stv(F *s)
{
    return (void *)s == (void *)ternmpif_.statuses_ignore ||
                   (void *)s == (void *)ternmpif_.status_ignore
               ? MPI_STATUSES_IGNORE
               : (MPI_Status *)(void *)s;
}
/* Fortran indices start at 1. */
static void to_f_index(F *i)
{
    if (*i != MPI_UNDEFINED)
        (*i)++;
}
void mpi_wait_(F *req, F *status, F *ierr) { *ierr = MPI_Wait(req, ST(status)); }
void mpi_waitall_(F *n, F *reqs, F *statuses, F *ierr)
{
    *ierr = MPI_Waitall(*n, reqs, stv(statuses));
}
void mpi_waitany_(F *n, F *reqs, F *index, F *status, F *ierr)
{
    *ierr = MPI_Waitany(*n, reqs, index, ST(status));
    to_f_index(index);
}
void mpi_waitsome_(F *n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr)
{
    *ierr = MPI_Waitsome(*n, reqs, outcount, indices, stv(statuses));
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        indices[i]++;
}
void mpi_test_(F *req, F *flag, F *status, F *ierr) { *ierr = MPI_Test(req, flag, ST(status)); }
void mpi_testall_(F *n, F *reqs, F *flag, F *statuses, F *ierr)
{
    *ierr = MPI_Testall(*n, reqs, flag, stv(statuses));
}
void mpi_testany_(F *n, F *reqs, F *index, F *flag, F *status, F *ierr)
{
    *ierr = MPI_Testany(*n, reqs, index, flag, ST(status));
    to_f_index(index);
}
void mpi_testsome_(F *n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr)
{
    *ierr = MPI_Testsome(*n, reqs, outcount, indices, stv(statuses));
    for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)
        indices[i]++;
}
void mpi_request_free_(F *req, F *ierr) { *ierr = MPI_Request_free(req); }
void mpi_request_get_status_(F *req, F *flag, F *status, F *ierr)
{
    *ierr = MPI_Request_get_status(*req, flag, ST(status));
}
void mpi_cancel_(F *req, F *ierr) { *ierr = MPI_Cancel(req); }
void mpi_test_cancelled_(F *status, F *flag, F *ierr)
{
    *ierr = MPI_Test_cancelled((MPI_Status *)(void *)status, flag);
}
void mpi_get_count_(F *status, F *type, F *count, F *ierr)
{
    *ierr = MPI_Get_count((MPI_Status *)(void *)status, *type, count);
}
void mpi_get_elements_(F *status, F *type, F *count, F *ierr)
{
    *ierr = MPI_Get_elements((MPI_Status *)(void *)status, *type, count);
}
void mpi_get_elements_x_(F *status, F *type, MPI_Count *count, F *ierr)
{
    *ierr = MPI_Get_elements_x((MPI_Status *)(void *)status, *type, count);
}
void mpi_status_set_elements_(F *status, F *type, F *count, F *ierr)
{
    *ierr = MPI_Status_set_elements((MPI_Status *)(void *)status, *type, *count);
}
void mpi_status_set_elements_x_(F *status, F *type, MPI_Count *count, F *ierr)
{
    *ierr = MPI_Status_set_elements_x((MPI_Status *)(void *)status, *type, *count);
}
void mpi_status_set_cancelled_(F *status, F *flag, F *ierr)
{
    *ierr = MPI_Status_set_cancelled((MPI_Status *)(void *)status, *flag);
}
/* The three functions are Fortran subroutines (mpi_greq.c calls them so). */
typedef void greq_query(MPI_Aint *extra, F *status, F *ierr);
typedef void greq_free(MPI_Aint *extra, F *ierr);
typedef void greq_cancel(MPI_Aint *extra, F *complete, F *ierr);
void mpi_grequest_start_(greq_query *query, greq_free *free_fn, greq_cancel *cancel,
                         MPI_Aint *extra, F *req, F *ierr)
{
    struct mpi_greq_fortran f = {query, free_fn, cancel, *extra};
    *ierr = mpi_greq_start_fortran(&f, req);
}
void mpi_grequest_complete_(F *req, F *ierr) { *ierr = MPI_Grequest_complete(*req); }

/* ---- datatypes ---- */
void mpi_type_contiguous_(F *count, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_contiguous(*count, *old, nt);
}
void mpi_type_vector_(F *count, F *bl, F *stride, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_vector(*count, *bl, *stride, *old, nt);
}
void mpi_type_create_hvector_(F *count, F *bl, MPI_Aint *stride, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_hvector(*count, *bl, *stride, *old, nt);
}
/* MPI-1's hvector, hindexed, struct, extent and address take default
 * INTEGERs where MPI-2's take INTEGER(KIND=MPI_ADDRESS_KIND). */
void mpi_type_hvector_(F *count, F *bl, F *stride, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_hvector(*count, *bl, *stride, *old, nt);
}
void mpi_type_indexed_(F *count, F *bls, F *disps, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_indexed(*count, bls, disps, *old, nt);
}
void mpi_type_create_indexed_block_(F *count, F *bl, F *disps, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_indexed_block(*count, *bl, disps, *old, nt);
}
void mpi_type_create_hindexed_(F *count, F *bls, MPI_Aint *disps, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_hindexed(*count, bls, disps, *old, nt);
}
void mpi_type_create_hindexed_block_(F *count, F *bl, MPI_Aint *disps, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_hindexed_block(*count, *bl, disps, *old, nt);
}
void mpi_type_get_envelope_(F *t, F *ni, F *na, F *nt, F *comb, F *ierr)
{
    *ierr = MPI_Type_get_envelope(*t, ni, na, nt, comb);
}
void mpi_type_get_contents_(F *t, F *mi, F *ma, F *mt, F *ints, MPI_Aint *aints, F *types,
                            F *ierr)
{
    *ierr = MPI_Type_get_contents(*t, *mi, *ma, *mt, ints, aints, types);
}
void mpi_type_set_name_(F *t, char *name, F *ierr, size_t name_len)
{
    char n[MPI_MAX_OBJECT_NAME];
    size_t len = fortran_len(name, name_len);
    len = len < sizeof n - 1 ? len : sizeof n - 1;
    memcpy(n, name, len);
    n[len] = 0;
    *ierr = MPI_Type_set_name(*t, n);
}
void mpi_type_get_name_(F *t, char *name, F *len, F *ierr, size_t name_len)
{
    char n[MPI_MAX_OBJECT_NAME];
    int l = 0;
    *ierr = MPI_Type_get_name(*t, n, &l);
    to_fortran(name, name_len, *ierr ? "" : n);
    *len = (F)((size_t)l < name_len ? (size_t)l : name_len);
}
static MPI_Aint *widen(const F *v, F n)
{
    MPI_Aint *w = malloc(sizeof *w * ((size_t)(n > 0 ? n : 0) + 1));
    for (F i = 0; w && i < n; i++)
        w[i] = v[i];
    return w;
}
void mpi_type_hindexed_(F *count, F *bls, F *disps, F *old, F *nt, F *ierr)
{
    MPI_Aint *w = widen(disps, *count);
    *ierr = w ? MPI_Type_create_hindexed(*count, bls, w, *old, nt) : MPI_ERR_NO_MEM;
    free(w);
}
void mpi_type_create_struct_(F *count, F *bls, MPI_Aint *disps, F *types, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_struct(*count, bls, disps, types, nt);
}
void mpi_type_struct_(F *count, F *bls, F *disps, F *types, F *nt, F *ierr)
{
    MPI_Aint *w = widen(disps, *count);
    *ierr = w ? MPI_Type_create_struct(*count, bls, w, types, nt) : MPI_ERR_NO_MEM;
    free(w);
}
void mpi_type_create_resized_(F *old, MPI_Aint *lb, MPI_Aint *ext, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_resized(*old, *lb, *ext, nt);
}
void mpi_type_dup_(F *old, F *nt, F *ierr) { *ierr = MPI_Type_dup(*old, nt); }
void mpi_type_commit_(F *t, F *ierr) { *ierr = MPI_Type_commit(t); }
void mpi_type_free_(F *t, F *ierr) { *ierr = MPI_Type_free(t); }
void mpi_type_size_(F *t, F *size, F *ierr) { *ierr = MPI_Type_size(*t, size); }
void mpi_type_match_size_(F *cls, F *size, F *type, F *ierr)
{
    *ierr = MPI_Type_match_size(*cls, *size, type);
}
void mpi_type_create_f90_real_(F *p, F *r, F *type, F *ierr)
{
    *ierr = MPI_Type_create_f90_real(*p, *r, type);
}
void mpi_type_create_f90_complex_(F *p, F *r, F *type, F *ierr)
{
    *ierr = MPI_Type_create_f90_complex(*p, *r, type);
}
void mpi_type_create_f90_integer_(F *r, F *type, F *ierr)
{
    *ierr = MPI_Type_create_f90_integer(*r, type);
}
void mpi_type_extent_(F *t, F *ext, F *ierr)
{
    MPI_Aint e = 0;
    *ierr = MPI_Type_extent(*t, &e);
    *ext = (F)e;
}
void mpi_type_lb_(F *t, F *lb, F *ierr)
{
    MPI_Aint a = 0;
    *ierr = MPI_Type_lb(*t, &a);
    *lb = (F)a;
}
void mpi_type_ub_(F *t, F *ub, F *ierr)
{
    MPI_Aint a = 0;
    *ierr = MPI_Type_ub(*t, &a);
    *ub = (F)a;
}
/* INTEGER(KIND=MPI_COUNT_KIND) is C's MPI_Count. */
_Static_assert(sizeof(MPI_Count) == 8, "mkmpif.py makes MPI_COUNT_KIND 8");
void mpi_type_size_x_(F *t, MPI_Count *size, F *ierr) { *ierr = MPI_Type_size_x(*t, size); }
void mpi_type_get_extent_(F *t, MPI_Aint *lb, MPI_Aint *ext, F *ierr)
{
    *ierr = MPI_Type_get_extent(*t, lb, ext);
}
void mpi_type_get_true_extent_(F *t, MPI_Aint *lb, MPI_Aint *ext, F *ierr)
{
    *ierr = MPI_Type_get_true_extent(*t, lb, ext);
}
void mpi_type_get_extent_x_(F *t, MPI_Count *lb, MPI_Count *ext, F *ierr)
{
    *ierr = MPI_Type_get_extent_x(*t, lb, ext);
}
void mpi_type_get_true_extent_x_(F *t, MPI_Count *lb, MPI_Count *ext, F *ierr)
{
    *ierr = MPI_Type_get_true_extent_x(*t, lb, ext);
}
void mpi_get_address_(void *loc, MPI_Aint *addr, F *ierr)
{
    *ierr = MPI_Get_address(B(loc), addr);
}
MPI_Aint mpi_aint_add_(MPI_Aint *base, MPI_Aint *disp)
{
    return MPI_Aint_add(*base, *disp);
}

MPI_Aint mpi_aint_diff_(MPI_Aint *a1, MPI_Aint *a2)
{
    return MPI_Aint_diff(*a1, *a2);
}
void mpi_address_(void *loc, F *addr, F *ierr)
{
    MPI_Aint a = 0;
    *ierr = MPI_Get_address(B(loc), &a);
    *addr = (F)a;
}
void mpi_pack_(void *in, F *count, F *type, void *out, F *outsize, F *pos, F *comm, F *ierr)
{
    *ierr = MPI_Pack(B(in), *count, *type, out, *outsize, pos, *comm);
}
void mpi_unpack_(void *in, F *insize, F *pos, void *out, F *count, F *type, F *comm, F *ierr)
{
    *ierr = MPI_Unpack(in, *insize, pos, B(out), *count, *type, *comm);
}
void mpi_pack_size_(F *count, F *type, F *comm, F *size, F *ierr)
{
    *ierr = MPI_Pack_size(*count, *type, *comm, size);
}

/* ---- collectives ---- */
void mpi_barrier_(F *comm, F *ierr) { *ierr = MPI_Barrier(*comm); }
void mpi_bcast_(void *buf, F *count, F *type, F *root, F *comm, F *ierr)
{
    *ierr = MPI_Bcast(B(buf), *count, *type, *root, *comm);
}
void mpi_reduce_(void *sb, void *rb, F *count, F *type, F *op, F *root, F *comm, F *ierr)
{
    *ierr = MPI_Reduce(B(sb), B(rb), *count, *type, *op, *root, *comm);
}
void mpi_allreduce_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *ierr)
{
    *ierr = MPI_Allreduce(B(sb), B(rb), *count, *type, *op, *comm);
}
void mpi_gather_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr)
{
    *ierr = MPI_Gather(B(sb), *sc, *st, B(rb), *rc, *rt, *root, *comm);
}
void mpi_gatherv_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt, F *root, F *comm,
                  F *ierr)
{
    *ierr = MPI_Gatherv(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *root, *comm);
}
void mpi_scatter_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr)
{
    *ierr = MPI_Scatter(B(sb), *sc, *st, B(rb), *rc, *rt, *root, *comm);
}
void mpi_scatterv_(void *sb, F *scs, F *displs, F *st, void *rb, F *rc, F *rt, F *root,
                   F *comm, F *ierr)
{
    *ierr = MPI_Scatterv(B(sb), scs, displs, *st, B(rb), *rc, *rt, *root, *comm);
}
void mpi_allgather_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr)
{
    *ierr = MPI_Allgather(B(sb), *sc, *st, B(rb), *rc, *rt, *comm);
}
void mpi_allgatherv_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt, F *comm,
                     F *ierr)
{
    *ierr = MPI_Allgatherv(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *comm);
}
void mpi_alltoall_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr)
{
    *ierr = MPI_Alltoall(B(sb), *sc, *st, B(rb), *rc, *rt, *comm);
}
void mpi_alltoallv_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt, F *comm,
                    F *ierr)
{
    *ierr = MPI_Alltoallv(B(sb), scs, sd, *st, B(rb), rcs, rd, *rt, *comm);
}
/* Nonblocking collectives: the request is a default INTEGER, as any. */
void mpi_ibarrier_(F *comm, F *req, F *ierr) { *ierr = MPI_Ibarrier(*comm, req); }
void mpi_ibcast_(void *b, F *count, F *type, F *root, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Ibcast(B(b), *count, *type, *root, *comm, req);
}
void mpi_ireduce_(void *sb, void *rb, F *count, F *type, F *op, F *root, F *comm, F *req,
                  F *ierr)
{
    *ierr = MPI_Ireduce(B(sb), B(rb), *count, *type, *op, *root, *comm, req);
}
void mpi_iallreduce_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Iallreduce(B(sb), B(rb), *count, *type, *op, *comm, req);
}
void mpi_ireduce_scatter_(void *sb, void *rb, F *rcs, F *type, F *op, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Ireduce_scatter(B(sb), B(rb), rcs, *type, *op, *comm, req);
}
void mpi_ireduce_scatter_block_(void *sb, void *rb, F *rc, F *type, F *op, F *comm, F *req,
                                F *ierr)
{
    *ierr = MPI_Ireduce_scatter_block(B(sb), B(rb), *rc, *type, *op, *comm, req);
}
void mpi_iscan_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Iscan(B(sb), B(rb), *count, *type, *op, *comm, req);
}
void mpi_iexscan_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Iexscan(B(sb), B(rb), *count, *type, *op, *comm, req);
}
void mpi_igather_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *req,
                  F *ierr)
{
    *ierr = MPI_Igather(B(sb), *sc, *st, B(rb), *rc, *rt, *root, *comm, req);
}
void mpi_igatherv_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt, F *root,
                   F *comm, F *req, F *ierr)
{
    *ierr = MPI_Igatherv(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *root, *comm, req);
}
void mpi_iscatter_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *req,
                   F *ierr)
{
    *ierr = MPI_Iscatter(B(sb), *sc, *st, B(rb), *rc, *rt, *root, *comm, req);
}
void mpi_iscatterv_(void *sb, F *scs, F *displs, F *st, void *rb, F *rc, F *rt, F *root,
                    F *comm, F *req, F *ierr)
{
    *ierr = MPI_Iscatterv(B(sb), scs, displs, *st, B(rb), *rc, *rt, *root, *comm, req);
}
void mpi_iallgather_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Iallgather(B(sb), *sc, *st, B(rb), *rc, *rt, *comm, req);
}
void mpi_iallgatherv_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt, F *comm,
                      F *req, F *ierr)
{
    *ierr = MPI_Iallgatherv(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *comm, req);
}
void mpi_ialltoall_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Ialltoall(B(sb), *sc, *st, B(rb), *rc, *rt, *comm, req);
}
void mpi_ialltoallv_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt, F *comm,
                     F *req, F *ierr)
{
    *ierr = MPI_Ialltoallv(B(sb), scs, sd, *st, B(rb), rcs, rd, *rt, *comm, req);
}
void mpi_ialltoallw_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt, F *comm,
                     F *req, F *ierr)
{
    *ierr = MPI_Ialltoallw(B(sb), scs, sd, st, B(rb), rcs, rd, rt, *comm, req);
}
void mpi_alltoallw_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt, F *comm,
                    F *ierr)
{
    *ierr = MPI_Alltoallw(B(sb), scs, sd, st, B(rb), rcs, rd, rt, *comm);
}
/* Persistent collectives: the nonblocking ones' arguments and an info. */
void mpi_barrier_init_(F *comm, F *info, F *req, F *ierr)
{
    *ierr = MPI_Barrier_init(*comm, *info, req);
}
void mpi_bcast_init_(void *b, F *count, F *type, F *root, F *comm, F *info, F *req, F *ierr)
{
    *ierr = MPI_Bcast_init(B(b), *count, *type, *root, *comm, *info, req);
}
void mpi_reduce_init_(void *sb, void *rb, F *count, F *type, F *op, F *root, F *comm, F *info,
                      F *req, F *ierr)
{
    *ierr = MPI_Reduce_init(B(sb), B(rb), *count, *type, *op, *root, *comm, *info, req);
}
void mpi_allreduce_init_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *info, F *req,
                         F *ierr)
{
    *ierr = MPI_Allreduce_init(B(sb), B(rb), *count, *type, *op, *comm, *info, req);
}
void mpi_reduce_scatter_init_(void *sb, void *rb, F *rcs, F *type, F *op, F *comm, F *info, F *req,
                              F *ierr)
{
    *ierr = MPI_Reduce_scatter_init(B(sb), B(rb), rcs, *type, *op, *comm, *info, req);
}
void mpi_reduce_scatter_block_init_(void *sb, void *rb, F *rc, F *type, F *op, F *comm, F *info,
                                    F *req, F *ierr)
{
    *ierr = MPI_Reduce_scatter_block_init(B(sb), B(rb), *rc, *type, *op, *comm, *info, req);
}
void mpi_scan_init_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *info, F *req, F *ierr)
{
    *ierr = MPI_Scan_init(B(sb), B(rb), *count, *type, *op, *comm, *info, req);
}
void mpi_exscan_init_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *info, F *req,
                      F *ierr)
{
    *ierr = MPI_Exscan_init(B(sb), B(rb), *count, *type, *op, *comm, *info, req);
}
void mpi_gather_init_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *info,
                      F *req, F *ierr)
{
    *ierr = MPI_Gather_init(B(sb), *sc, *st, B(rb), *rc, *rt, *root, *comm, *info, req);
}
void mpi_gatherv_init_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt, F *root,
                       F *comm, F *info, F *req, F *ierr)
{
    *ierr = MPI_Gatherv_init(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *root, *comm, *info, req);
}
void mpi_scatter_init_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *info,
                       F *req, F *ierr)
{
    *ierr = MPI_Scatter_init(B(sb), *sc, *st, B(rb), *rc, *rt, *root, *comm, *info, req);
}
void mpi_scatterv_init_(void *sb, F *scs, F *displs, F *st, void *rb, F *rc, F *rt, F *root,
                        F *comm, F *info, F *req, F *ierr)
{
    *ierr = MPI_Scatterv_init(B(sb), scs, displs, *st, B(rb), *rc, *rt, *root, *comm, *info, req);
}
void mpi_allgather_init_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *info, F *req,
                         F *ierr)
{
    *ierr = MPI_Allgather_init(B(sb), *sc, *st, B(rb), *rc, *rt, *comm, *info, req);
}
void mpi_allgatherv_init_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt, F *comm,
                          F *info, F *req, F *ierr)
{
    *ierr = MPI_Allgatherv_init(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *comm, *info, req);
}
void mpi_alltoall_init_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *info, F *req,
                        F *ierr)
{
    *ierr = MPI_Alltoall_init(B(sb), *sc, *st, B(rb), *rc, *rt, *comm, *info, req);
}
void mpi_alltoallv_init_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt, F *comm,
                         F *info, F *req, F *ierr)
{
    *ierr = MPI_Alltoallv_init(B(sb), scs, sd, *st, B(rb), rcs, rd, *rt, *comm, *info, req);
}
void mpi_alltoallw_init_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt, F *comm,
                         F *info, F *req, F *ierr)
{
    *ierr = MPI_Alltoallw_init(B(sb), scs, sd, st, B(rb), rcs, rd, rt, *comm, *info, req);
}
/* Neighborhood collectives; Alltoallw's displacements are
 * INTEGER(KIND=MPI_ADDRESS_KIND), C's MPI_Aint. */
void mpi_neighbor_allgather_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm,
                             F *ierr)
{
    *ierr = MPI_Neighbor_allgather(B(sb), *sc, *st, B(rb), *rc, *rt, *comm);
}
void mpi_neighbor_allgatherv_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt,
                              F *comm, F *ierr)
{
    *ierr = MPI_Neighbor_allgatherv(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *comm);
}
void mpi_neighbor_alltoall_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr)
{
    *ierr = MPI_Neighbor_alltoall(B(sb), *sc, *st, B(rb), *rc, *rt, *comm);
}
void mpi_neighbor_alltoallv_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt,
                             F *comm, F *ierr)
{
    *ierr = MPI_Neighbor_alltoallv(B(sb), scs, sd, *st, B(rb), rcs, rd, *rt, *comm);
}
void mpi_neighbor_alltoallw_(void *sb, F *scs, MPI_Aint *sd, F *st, void *rb, F *rcs,
                             MPI_Aint *rd, F *rt, F *comm, F *ierr)
{
    *ierr = MPI_Neighbor_alltoallw(B(sb), scs, sd, st, B(rb), rcs, rd, rt, *comm);
}
void mpi_ineighbor_allgather_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm,
                              F *req, F *ierr)
{
    *ierr = MPI_Ineighbor_allgather(B(sb), *sc, *st, B(rb), *rc, *rt, *comm, req);
}
void mpi_ineighbor_allgatherv_(void *sb, F *sc, F *st, void *rb, F *rcs, F *displs, F *rt,
                               F *comm, F *req, F *ierr)
{
    *ierr = MPI_Ineighbor_allgatherv(B(sb), *sc, *st, B(rb), rcs, displs, *rt, *comm, req);
}
void mpi_ineighbor_alltoall_(void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *req,
                             F *ierr)
{
    *ierr = MPI_Ineighbor_alltoall(B(sb), *sc, *st, B(rb), *rc, *rt, *comm, req);
}
void mpi_ineighbor_alltoallv_(void *sb, F *scs, F *sd, F *st, void *rb, F *rcs, F *rd, F *rt,
                              F *comm, F *req, F *ierr)
{
    *ierr = MPI_Ineighbor_alltoallv(B(sb), scs, sd, *st, B(rb), rcs, rd, *rt, *comm, req);
}
void mpi_ineighbor_alltoallw_(void *sb, F *scs, MPI_Aint *sd, F *st, void *rb, F *rcs,
                              MPI_Aint *rd, F *rt, F *comm, F *req, F *ierr)
{
    *ierr = MPI_Ineighbor_alltoallw(B(sb), scs, sd, st, B(rb), rcs, rd, rt, *comm, req);
}
void mpi_reduce_scatter_(void *sb, void *rb, F *rcs, F *type, F *op, F *comm, F *ierr)
{
    *ierr = MPI_Reduce_scatter(B(sb), B(rb), rcs, *type, *op, *comm);
}
void mpi_reduce_scatter_block_(void *sb, void *rb, F *rc, F *type, F *op, F *comm, F *ierr)
{
    *ierr = MPI_Reduce_scatter_block(B(sb), B(rb), *rc, *type, *op, *comm);
}
void mpi_scan_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *ierr)
{
    *ierr = MPI_Scan(B(sb), B(rb), *count, *type, *op, *comm);
}
void mpi_exscan_(void *sb, void *rb, F *count, F *type, F *op, F *comm, F *ierr)
{
    *ierr = MPI_Exscan(B(sb), B(rb), *count, *type, *op, *comm);
}
void mpi_op_create_(MPI_User_function *fn, F *commute, F *op, F *ierr)
{
    /* A Fortran function (invec, inoutvec, len, datatype), all by
     * reference: the C signature exactly.  LOGICAL commute: 0 or 1. */
    *ierr = MPI_Op_create(fn, *commute, op);
}
void mpi_op_free_(F *op, F *ierr) { *ierr = MPI_Op_free(op); }
void mpi_op_commutative_(F *op, F *commute, F *ierr)
{
    /* A LOGICAL: gfortran's .TRUE. is 1, .FALSE. 0. */
    int c = 0;
    *ierr = MPI_Op_commutative(*op, &c);
    if (*ierr == MPI_SUCCESS)
        *commute = c ? 1 : 0;
}
void mpi_reduce_local_(void *in, void *inout, F *count, F *type, F *op, F *ierr)
{
    *ierr = MPI_Reduce_local(B(in), B(inout), *count, *type, *op);
}

/* ---- info objects, subarrays, files ---- */

void mpi_info_create_(F *info, F *ierr) { *ierr = MPI_Info_create(info); }
void mpi_info_free_(F *info, F *ierr) { *ierr = MPI_Info_free(info); }
/* Fortran's buflen counts characters, with no NUL (MPI-4.0 9.4). */
void mpi_info_get_string_(F *info, char *key, F *buflen, char *value, F *flag, F *ierr,
                          size_t klen, size_t vlen)
{
    char *k = c_string(key, klen), *v = malloc(MPI_MAX_INFO_VAL + 1);
    int f = 0, len = MPI_MAX_INFO_VAL + 1;
    *ierr = !k || !v ? MPI_ERR_NO_MEM
            : *buflen < 0 ? MPI_Info_get_string(*info, k, buflen, v, &f) /* the error */
                          : MPI_Info_get_string(*info, k, &len, v, &f);
    if (*ierr == MPI_SUCCESS) {
        *flag = f ? 1 : 0;
        if (f && *buflen > 0) {
            size_t n = (size_t)*buflen < vlen ? (size_t)*buflen : vlen;
            v[n < strlen(v) ? n : strlen(v)] = 0;
            to_fortran(value, vlen, v);
        }
        if (f)
            *buflen = len - 1;
    }
    free(k);
    free(v);
}
void mpi_info_create_env_(F *info, F *ierr) { *ierr = MPI_Info_create_env(0, NULL, info); }
void mpi_info_set_(F *info, char *key, char *value, F *ierr, size_t klen, size_t vlen)
{
    char *k = c_string(key, klen), *v = c_string(value, vlen);
    *ierr = k && v ? MPI_Info_set(*info, k, v) : MPI_ERR_NO_MEM;
    free(k);
    free(v);
}
void mpi_info_get_(F *info, char *key, F *valuelen, char *value, F *flag, F *ierr, size_t klen,
                   size_t vlen)
{
    char *k = c_string(key, klen), *v = malloc(MPI_MAX_INFO_VAL + 1);
    int f = 0;
    *ierr = k && v ? MPI_Info_get(*info, k, *valuelen, v, &f) : MPI_ERR_NO_MEM;
    if (*ierr == MPI_SUCCESS) {
        *flag = f ? 1 : 0;
        if (f)
            to_fortran(value, vlen, v);
    }
    free(k);
    free(v);
}
void mpi_info_delete_(F *info, char *key, F *ierr, size_t klen)
{
    char *k = c_string(key, klen);
    *ierr = k ? MPI_Info_delete(*info, k) : MPI_ERR_NO_MEM;
    free(k);
}
void mpi_info_get_nkeys_(F *info, F *n, F *ierr) { *ierr = MPI_Info_get_nkeys(*info, n); }
void mpi_info_dup_(F *info, F *nw, F *ierr) { *ierr = MPI_Info_dup(*info, nw); }

void mpi_type_create_subarray_(F *ndims, F *sizes, F *subsizes, F *starts, F *order, F *old,
                               F *nt, F *ierr)
{
    *ierr = MPI_Type_create_subarray(*ndims, sizes, subsizes, starts, *order, *old, nt);
}
void mpi_type_create_darray_(F *size, F *rank, F *ndims, F *gsizes, F *distribs, F *dargs,
                             F *psizes, F *order, F *old, F *nt, F *ierr)
{
    *ierr = MPI_Type_create_darray(*size, *rank, *ndims, gsizes, distribs, dargs, psizes, *order,
                                   *old, nt);
}
/* The data representation is a CHARACTER argument. */
void mpi_pack_external_(char *rep, void *in, F *count, F *type, void *out, MPI_Aint *outsize,
                        MPI_Aint *pos, F *ierr, size_t rlen)
{
    char *r = c_string(rep, rlen);
    *ierr = r ? MPI_Pack_external(r, B(in), *count, *type, out, *outsize, pos)
              : mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Pack_external", "no memory");
    free(r);
}
void mpi_unpack_external_(char *rep, void *in, MPI_Aint *insize, MPI_Aint *pos, void *out,
                          F *count, F *type, F *ierr, size_t rlen)
{
    char *r = c_string(rep, rlen);
    *ierr = r ? MPI_Unpack_external(r, in, *insize, pos, B(out), *count, *type)
              : mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Unpack_external", "no memory");
    free(r);
}
void mpi_pack_external_size_(char *rep, F *count, F *type, MPI_Aint *size, F *ierr, size_t rlen)
{
    char *r = c_string(rep, rlen);
    *ierr = r ? MPI_Pack_external_size(r, *count, *type, size)
              : mpi_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Pack_external_size", "no memory");
    free(r);
}

void mpi_file_open_(F *comm, char *name, F *amode, F *info, F *fh, F *ierr, size_t nlen)
{
    char *n = c_string(name, nlen);
    *ierr = n ? MPI_File_open(*comm, n, *amode, *info, fh) : MPI_ERR_NO_MEM;
    free(n);
}
void mpi_file_close_(F *fh, F *ierr) { *ierr = MPI_File_close(fh); }
void mpi_file_delete_(char *name, F *info, F *ierr, size_t nlen)
{
    char *n = c_string(name, nlen);
    *ierr = n ? MPI_File_delete(n, *info) : MPI_ERR_NO_MEM;
    free(n);
}
void mpi_file_set_view_(F *fh, MPI_Offset *disp, F *etype, F *ftype, char *rep, F *info,
                        F *ierr, size_t rlen)
{
    char *r = c_string(rep, rlen);
    *ierr = r ? MPI_File_set_view(*fh, *disp, *etype, *ftype, r, *info) : MPI_ERR_NO_MEM;
    free(r);
}
void mpi_file_get_view_(F *fh, MPI_Offset *disp, F *etype, F *ftype, char *rep, F *ierr,
                        size_t rlen)
{
    char r[MPI_MAX_DATAREP_STRING];
    *ierr = MPI_File_get_view(*fh, disp, etype, ftype, r);
    if (*ierr == MPI_SUCCESS)
        to_fortran(rep, rlen, r);
}
#define FILEAT(name, cname)                                                            \
    void name(F *fh, MPI_Offset *off, void *buf, F *count, F *type, F *st, F *ierr)  \
    {                                                                                \
        *ierr = cname(*fh, *off, B(buf), *count, *type, ST(st));                     \
    }
FILEAT(mpi_file_read_at_, MPI_File_read_at)
FILEAT(mpi_file_write_at_, MPI_File_write_at)
FILEAT(mpi_file_read_at_all_, MPI_File_read_at_all)
FILEAT(mpi_file_write_at_all_, MPI_File_write_at_all)
#define FILEPTR(name, cname)                                                           \
    void name(F *fh, void *buf, F *count, F *type, F *st, F *ierr)                   \
    {                                                                                \
        *ierr = cname(*fh, B(buf), *count, *type, ST(st));                           \
    }
FILEPTR(mpi_file_read_, MPI_File_read)
FILEPTR(mpi_file_write_, MPI_File_write)
FILEPTR(mpi_file_read_all_, MPI_File_read_all)
FILEPTR(mpi_file_write_all_, MPI_File_write_all)
FILEPTR(mpi_file_read_shared_, MPI_File_read_shared)
FILEPTR(mpi_file_write_shared_, MPI_File_write_shared)
FILEPTR(mpi_file_read_ordered_, MPI_File_read_ordered)
FILEPTR(mpi_file_write_ordered_, MPI_File_write_ordered)
void mpi_file_iread_at_(F *fh, MPI_Offset *off, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iread_at(*fh, *off, B(buf), *count, *type, req);
}
void mpi_file_iwrite_at_(F *fh, MPI_Offset *off, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iwrite_at(*fh, *off, B(buf), *count, *type, req);
}
void mpi_file_iread_(F *fh, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iread(*fh, B(buf), *count, *type, req);
}
void mpi_file_iwrite_(F *fh, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iwrite(*fh, B(buf), *count, *type, req);
}
void mpi_file_iread_at_all_(F *fh, MPI_Offset *off, void *buf, F *count, F *type, F *req,
                            F *ierr)
{
    *ierr = MPI_File_iread_at_all(*fh, *off, B(buf), *count, *type, req);
}
void mpi_file_iwrite_at_all_(F *fh, MPI_Offset *off, void *buf, F *count, F *type, F *req,
                             F *ierr)
{
    *ierr = MPI_File_iwrite_at_all(*fh, *off, B(buf), *count, *type, req);
}
void mpi_file_iread_all_(F *fh, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iread_all(*fh, B(buf), *count, *type, req);
}
void mpi_file_iwrite_all_(F *fh, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iwrite_all(*fh, B(buf), *count, *type, req);
}
void mpi_file_read_at_all_begin_(F *fh, MPI_Offset *off, void *buf, F *count, F *type, F *ierr)
{
    *ierr = MPI_File_read_at_all_begin(*fh, *off, B(buf), *count, *type);
}
void mpi_file_write_at_all_begin_(F *fh, MPI_Offset *off, void *buf, F *count, F *type,
                                  F *ierr)
{
    *ierr = MPI_File_write_at_all_begin(*fh, *off, B(buf), *count, *type);
}
#define FILEBEGIN(name, cname)                                                         \
    void name(F *fh, void *buf, F *count, F *type, F *ierr)                          \
    {                                                                                \
        *ierr = cname(*fh, B(buf), *count, *type);                                   \
    }
FILEBEGIN(mpi_file_read_all_begin_, MPI_File_read_all_begin)
FILEBEGIN(mpi_file_write_all_begin_, MPI_File_write_all_begin)
FILEBEGIN(mpi_file_read_ordered_begin_, MPI_File_read_ordered_begin)
FILEBEGIN(mpi_file_write_ordered_begin_, MPI_File_write_ordered_begin)
#define FILEEND(name, cname)                                                           \
    void name(F *fh, void *buf, F *st, F *ierr) { *ierr = cname(*fh, B(buf), ST(st)); }
FILEEND(mpi_file_read_at_all_end_, MPI_File_read_at_all_end)
FILEEND(mpi_file_write_at_all_end_, MPI_File_write_at_all_end)
FILEEND(mpi_file_read_all_end_, MPI_File_read_all_end)
FILEEND(mpi_file_write_all_end_, MPI_File_write_all_end)
FILEEND(mpi_file_read_ordered_end_, MPI_File_read_ordered_end)
FILEEND(mpi_file_write_ordered_end_, MPI_File_write_ordered_end)
void mpi_file_iread_shared_(F *fh, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iread_shared(*fh, B(buf), *count, *type, req);
}
void mpi_file_iwrite_shared_(F *fh, void *buf, F *count, F *type, F *req, F *ierr)
{
    *ierr = MPI_File_iwrite_shared(*fh, B(buf), *count, *type, req);
}
void mpi_file_seek_(F *fh, MPI_Offset *off, F *whence, F *ierr)
{
    *ierr = MPI_File_seek(*fh, *off, *whence);
}
void mpi_file_seek_shared_(F *fh, MPI_Offset *off, F *whence, F *ierr)
{
    *ierr = MPI_File_seek_shared(*fh, *off, *whence);
}
void mpi_file_get_position_shared_(F *fh, MPI_Offset *off, F *ierr)
{
    *ierr = MPI_File_get_position_shared(*fh, off);
}
void mpi_file_get_position_(F *fh, MPI_Offset *off, F *ierr)
{
    *ierr = MPI_File_get_position(*fh, off);
}
void mpi_file_get_byte_offset_(F *fh, MPI_Offset *off, MPI_Offset *disp, F *ierr)
{
    *ierr = MPI_File_get_byte_offset(*fh, *off, disp);
}
void mpi_file_get_size_(F *fh, MPI_Offset *size, F *ierr) { *ierr = MPI_File_get_size(*fh, size); }
void mpi_file_set_size_(F *fh, MPI_Offset *size, F *ierr) { *ierr = MPI_File_set_size(*fh, *size); }
void mpi_file_preallocate_(F *fh, MPI_Offset *size, F *ierr)
{
    *ierr = MPI_File_preallocate(*fh, *size);
}
void mpi_file_sync_(F *fh, F *ierr) { *ierr = MPI_File_sync(*fh); }
void mpi_file_get_amode_(F *fh, F *amode, F *ierr) { *ierr = MPI_File_get_amode(*fh, amode); }
void mpi_file_set_atomicity_(F *fh, F *flag, F *ierr)
{
    *ierr = MPI_File_set_atomicity(*fh, *flag);
}
void mpi_file_get_atomicity_(F *fh, F *flag, F *ierr)
{
    int f = 0;
    *ierr = MPI_File_get_atomicity(*fh, &f);
    if (*ierr == MPI_SUCCESS)
        *flag = f ? 1 : 0;
}
void mpi_file_set_errhandler_(F *fh, F *e, F *ierr) { *ierr = MPI_File_set_errhandler(*fh, *e); }
void mpi_file_get_errhandler_(F *fh, F *e, F *ierr) { *ierr = MPI_File_get_errhandler(*fh, e); }
void mpi_file_create_errhandler_(MPI_File_errhandler_function *fn, F *eh, F *ierr)
{
    /* As MPI_COMM_CREATE_ERRHANDLER's: (file, error code) by reference. */
    *ierr = MPI_File_create_errhandler(fn, eh);
}
void mpi_file_call_errhandler_(F *fh, F *code, F *ierr)
{
    *ierr = MPI_File_call_errhandler(*fh, *code);
}
void mpi_file_get_group_(F *fh, F *group, F *ierr) { *ierr = MPI_File_get_group(*fh, group); }
void mpi_file_get_info_(F *fh, F *info, F *ierr) { *ierr = MPI_File_get_info(*fh, info); }
void mpi_file_set_info_(F *fh, F *info, F *ierr) { *ierr = MPI_File_set_info(*fh, *info); }
void mpi_file_get_type_extent_(F *fh, F *type, MPI_Aint *extent, F *ierr)
{
    *ierr = MPI_File_get_type_extent(*fh, *type, extent);
}
void mpi_info_get_nthkey_(F *info, F *n, char *key, F *ierr, size_t klen)
{
    char k[MPI_MAX_INFO_KEY + 1];
    *ierr = MPI_Info_get_nthkey(*info, *n, k);
    if (*ierr == MPI_SUCCESS)
        to_fortran(key, klen, k);
}
void mpi_info_get_valuelen_(F *info, char *key, F *valuelen, F *flag, F *ierr, size_t klen)
{
    char *k = c_string(key, klen);
    int f = 0;
    *ierr = k ? MPI_Info_get_valuelen(*info, k, valuelen, &f) : MPI_ERR_NO_MEM;
    if (*ierr == MPI_SUCCESS)
        *flag = f ? 1 : 0;
    free(k);
}
void mpi_comm_split_type_(F *comm, F *type, F *key, F *info, F *nc, F *ierr)
{
    *ierr = MPI_Comm_split_type(*comm, *type, *key, *info, nc);
}
/* baseptr: an INTEGER(KIND=MPI_ADDRESS_KIND) that gets the address (a Cray
 * pointer's, or C_F_POINTER's after TRANSFER), as MPICH's binding does. */
void mpi_alloc_mem_(MPI_Aint *size, F *info, MPI_Aint *baseptr, F *ierr)
{
    void *p = NULL;
    *ierr = MPI_Alloc_mem(*size, *info, &p);
    if (*ierr == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}
void mpi_free_mem_(void *base, F *ierr) { *ierr = MPI_Free_mem(base); }

/* ---- one-sided communication ---- */
void mpi_win_create_(void *base, MPI_Aint *size, F *unit, F *info, F *comm, F *win, F *ierr)
{
    *ierr = MPI_Win_create(B(base), *size, *unit, *info, *comm, win);
}
void mpi_win_create_dynamic_(F *info, F *comm, F *win, F *ierr)
{
    *ierr = MPI_Win_create_dynamic(*info, *comm, win);
}
void mpi_win_attach_(F *win, void *base, MPI_Aint *size, F *ierr)
{
    *ierr = MPI_Win_attach(*win, B(base), *size);
}
void mpi_win_detach_(F *win, void *base, F *ierr) { *ierr = MPI_Win_detach(*win, B(base)); }
/* baseptr: an INTEGER(KIND=MPI_ADDRESS_KIND), as for MPI_ALLOC_MEM. */
void mpi_win_allocate_(MPI_Aint *size, F *unit, F *info, F *comm, MPI_Aint *baseptr, F *win,
                       F *ierr)
{
    void *p = NULL;
    *ierr = MPI_Win_allocate(*size, *unit, *info, *comm, &p, win);
    if (*ierr == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}
void mpi_win_allocate_shared_(MPI_Aint *size, F *unit, F *info, F *comm, MPI_Aint *baseptr,
                              F *win, F *ierr)
{
    void *p = NULL;
    *ierr = MPI_Win_allocate_shared(*size, *unit, *info, *comm, &p, win);
    if (*ierr == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}
void mpi_win_shared_query_(F *win, F *rank, MPI_Aint *size, F *unit, MPI_Aint *baseptr, F *ierr)
{
    void *p = NULL;
    *ierr = MPI_Win_shared_query(*win, *rank, size, unit, &p);
    if (*ierr == MPI_SUCCESS)
        *baseptr = (MPI_Aint)p;
}
void mpi_win_free_(F *win, F *ierr) { *ierr = MPI_Win_free(win); }
void mpi_win_get_group_(F *win, F *g, F *ierr) { *ierr = MPI_Win_get_group(*win, g); }
/* MPI_WIN_BASE is the address; the others their values (MPI-3.1 11.2.6). */
void mpi_win_get_attr_(F *win, F *key, MPI_Aint *val, F *flag, F *ierr)
{
    void *p = NULL;
    *ierr = MPI_Win_get_attr(*win, *key, &p, flag);
    if (*ierr || !*flag)
        return;
    if (*key == MPI_WIN_BASE)
        *val = (MPI_Aint)p;
    else if (*key == MPI_WIN_SIZE)
        *val = *(MPI_Aint *)p;
    else
        *val = *(int *)p;
}
void mpi_win_create_keyval_(void *copy, void *del, F *keyval, MPI_Aint *extra, F *ierr)
{
    keyval_fortran("MPI_Win_create_keyval", K_COMM, copy, del, keyval, (void *)*extra,
                   CB_FORTRAN, ierr);
}
void mpi_win_free_keyval_(F *keyval, F *ierr) { *ierr = MPI_Win_free_keyval(keyval); }
void mpi_win_set_attr_(F *win, F *key, MPI_Aint *val, F *ierr)
{
    *ierr = MPI_Win_set_attr(*win, *key, (void *)*val);
}
void mpi_win_delete_attr_(F *win, F *key, F *ierr) { *ierr = MPI_Win_delete_attr(*win, *key); }
void mpi_win_set_name_(F *win, char *name, F *ierr, size_t name_len)
{
    char *n = c_string(name, name_len);
    *ierr = n ? MPI_Win_set_name(*win, n) : MPI_ERR_NO_MEM;
    free(n);
}
void mpi_win_get_name_(F *win, char *name, F *len, F *ierr, size_t name_len)
{
    char buf[MPI_MAX_OBJECT_NAME];
    int n = 0;
    *ierr = MPI_Win_get_name(*win, buf, &n);
    to_fortran(name, name_len, *ierr ? "" : buf);
    *len = *ierr ? 0 : (F)((size_t)n < name_len ? (size_t)n : name_len);
}
void mpi_win_create_errhandler_(MPI_Win_errhandler_function *fn, F *eh, F *ierr)
{
    /* As MPI_COMM_CREATE_ERRHANDLER's: (window, error code) by reference. */
    *ierr = MPI_Win_create_errhandler(fn, eh);
}
void mpi_win_set_errhandler_(F *win, F *eh, F *ierr) { *ierr = MPI_Win_set_errhandler(*win, *eh); }
void mpi_win_get_errhandler_(F *win, F *eh, F *ierr) { *ierr = MPI_Win_get_errhandler(*win, eh); }
void mpi_win_call_errhandler_(F *win, F *code, F *ierr)
{
    *ierr = MPI_Win_call_errhandler(*win, *code);
}
void mpi_win_set_info_(F *win, F *info, F *ierr) { *ierr = MPI_Win_set_info(*win, *info); }
void mpi_win_get_info_(F *win, F *info, F *ierr) { *ierr = MPI_Win_get_info(*win, info); }
void mpi_win_fence_(F *assert, F *win, F *ierr) { *ierr = MPI_Win_fence(*assert, *win); }
void mpi_win_lock_(F *type, F *rank, F *assert, F *win, F *ierr)
{
    *ierr = MPI_Win_lock(*type, *rank, *assert, *win);
}
void mpi_win_unlock_(F *rank, F *win, F *ierr) { *ierr = MPI_Win_unlock(*rank, *win); }
void mpi_win_lock_all_(F *assert, F *win, F *ierr) { *ierr = MPI_Win_lock_all(*assert, *win); }
void mpi_win_unlock_all_(F *win, F *ierr) { *ierr = MPI_Win_unlock_all(*win); }
void mpi_win_flush_(F *rank, F *win, F *ierr) { *ierr = MPI_Win_flush(*rank, *win); }
void mpi_win_flush_all_(F *win, F *ierr) { *ierr = MPI_Win_flush_all(*win); }
void mpi_win_flush_local_(F *rank, F *win, F *ierr) { *ierr = MPI_Win_flush_local(*rank, *win); }
void mpi_win_flush_local_all_(F *win, F *ierr) { *ierr = MPI_Win_flush_local_all(*win); }
void mpi_win_sync_(F *win, F *ierr) { *ierr = MPI_Win_sync(*win); }
void mpi_win_post_(F *g, F *assert, F *win, F *ierr) { *ierr = MPI_Win_post(*g, *assert, *win); }
void mpi_win_start_(F *g, F *assert, F *win, F *ierr)
{
    *ierr = MPI_Win_start(*g, *assert, *win);
}
void mpi_win_complete_(F *win, F *ierr) { *ierr = MPI_Win_complete(*win); }
void mpi_win_wait_(F *win, F *ierr) { *ierr = MPI_Win_wait(*win); }
void mpi_win_test_(F *win, F *flag, F *ierr)
{
    int f = 0;
    *ierr = MPI_Win_test(*win, &f);
    if (*ierr == MPI_SUCCESS)
        *flag = f ? 1 : 0;
}
void mpi_put_(void *o, F *oc, F *ot, F *rank, MPI_Aint *disp, F *tc, F *tt, F *win, F *ierr)
{
    *ierr = MPI_Put(B(o), *oc, *ot, *rank, *disp, *tc, *tt, *win);
}
void mpi_get_(void *o, F *oc, F *ot, F *rank, MPI_Aint *disp, F *tc, F *tt, F *win, F *ierr)
{
    *ierr = MPI_Get(B(o), *oc, *ot, *rank, *disp, *tc, *tt, *win);
}
void mpi_accumulate_(void *o, F *oc, F *ot, F *rank, MPI_Aint *disp, F *tc, F *tt, F *op,
                     F *win, F *ierr)
{
    *ierr = MPI_Accumulate(B(o), *oc, *ot, *rank, *disp, *tc, *tt, *op, *win);
}
void mpi_get_accumulate_(void *o, F *oc, F *ot, void *r, F *rc, F *rt, F *rank, MPI_Aint *disp,
                         F *tc, F *tt, F *op, F *win, F *ierr)
{
    *ierr = MPI_Get_accumulate(B(o), *oc, *ot, B(r), *rc, *rt, *rank, *disp, *tc, *tt, *op,
                               *win);
}
void mpi_fetch_and_op_(void *o, void *r, F *type, F *rank, MPI_Aint *disp, F *op, F *win,
                       F *ierr)
{
    *ierr = MPI_Fetch_and_op(B(o), B(r), *type, *rank, *disp, *op, *win);
}
void mpi_compare_and_swap_(void *o, void *c, void *r, F *type, F *rank, MPI_Aint *disp,
                           F *win, F *ierr)
{
    *ierr = MPI_Compare_and_swap(B(o), B(c), B(r), *type, *rank, *disp, *win);
}
void mpi_rput_(void *o, F *oc, F *ot, F *rank, MPI_Aint *disp, F *tc, F *tt, F *win, F *req,
               F *ierr)
{
    *ierr = MPI_Rput(B(o), *oc, *ot, *rank, *disp, *tc, *tt, *win, req);
}
void mpi_rget_(void *o, F *oc, F *ot, F *rank, MPI_Aint *disp, F *tc, F *tt, F *win, F *req,
               F *ierr)
{
    *ierr = MPI_Rget(B(o), *oc, *ot, *rank, *disp, *tc, *tt, *win, req);
}
void mpi_raccumulate_(void *o, F *oc, F *ot, F *rank, MPI_Aint *disp, F *tc, F *tt, F *op,
                      F *win, F *req, F *ierr)
{
    *ierr = MPI_Raccumulate(B(o), *oc, *ot, *rank, *disp, *tc, *tt, *op, *win, req);
}
void mpi_rget_accumulate_(void *o, F *oc, F *ot, void *r, F *rc, F *rt, F *rank,
                          MPI_Aint *disp, F *tc, F *tt, F *op, F *win, F *req, F *ierr)
{
    *ierr = MPI_Rget_accumulate(B(o), *oc, *ot, B(r), *rc, *rt, *rank, *disp, *tc, *tt, *op,
                                *win, req);
}

/* ---- sessions (MPI-4.0 11.3) ---- */
void mpi_session_init_(F *info, F *eh, F *session, F *ierr)
{
    *ierr = MPI_Session_init(*info, *eh, session);
}
void mpi_session_finalize_(F *session, F *ierr) { *ierr = MPI_Session_finalize(session); }
void mpi_session_get_info_(F *session, F *info, F *ierr)
{
    *ierr = MPI_Session_get_info(*session, info);
}
void mpi_session_get_num_psets_(F *session, F *info, F *n, F *ierr)
{
    *ierr = MPI_Session_get_num_psets(*session, *info, n);
}
/* PSETLEN 0 asks for the name's length; else the name, blank-padded. */
void mpi_session_get_nth_pset_(F *session, F *info, F *n, F *psetlen, char *name, F *ierr,
                               size_t nlen)
{
    char c[MPI_MAX_PSET_NAME_LEN];
    int len = *psetlen == 0 ? 0 : MPI_MAX_PSET_NAME_LEN;
    *ierr = MPI_Session_get_nth_pset(*session, *info, *n, &len, *psetlen ? c : NULL);
    if (*ierr == MPI_SUCCESS && *psetlen)
        to_fortran(name, nlen < (size_t)*psetlen ? nlen : (size_t)*psetlen, c);
    if (*ierr == MPI_SUCCESS)
        *psetlen = len - 1; /* Fortran's lengths leave out C's terminating zero */
}
void mpi_session_get_pset_info_(F *session, char *name, F *info, F *ierr, size_t nlen)
{
    char *c = c_string(name, nlen);
    *ierr = c ? MPI_Session_get_pset_info(*session, c, info) : MPI_ERR_NO_MEM;
    free(c);
}
void mpi_group_from_session_pset_(F *session, char *name, F *group, F *ierr, size_t nlen)
{
    char *c = c_string(name, nlen);
    *ierr = c ? MPI_Group_from_session_pset(*session, c, group) : MPI_ERR_NO_MEM;
    free(c);
}
void mpi_comm_create_from_group_(F *group, char *tag, F *info, F *eh, F *comm, F *ierr,
                                 size_t tlen)
{
    char *c = c_string(tag, tlen);
    *ierr = c ? MPI_Comm_create_from_group(*group, c, *info, *eh, comm) : MPI_ERR_NO_MEM;
    free(c);
}
void mpi_session_create_errhandler_(MPI_Session_errhandler_function *fn, F *eh, F *ierr)
{
    /* As MPI_COMM_CREATE_ERRHANDLER's: (session, error code) by reference. */
    *ierr = MPI_Session_create_errhandler(fn, eh);
}
void mpi_session_set_errhandler_(F *session, F *eh, F *ierr)
{
    *ierr = MPI_Session_set_errhandler(*session, *eh);
}
void mpi_session_get_errhandler_(F *session, F *eh, F *ierr)
{
    *ierr = MPI_Session_get_errhandler(*session, eh);
}
void mpi_session_call_errhandler_(F *session, F *code, F *ierr)
{
    *ierr = MPI_Session_call_errhandler(*session, *code);
}
