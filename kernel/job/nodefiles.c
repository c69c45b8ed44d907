/* Files the node answers itself instead of a file server: the ones that
 * describe the machine rather than hold data, where a forwarded answer
 * would describe the service node.  /sys/devices/system/cpu: glibc's
 * get_nprocs and get_nprocs_conf (sysconf(_SC_NPROCESSORS_ONLN and _CONF),
 * std::thread::hardware_concurrency) read its `online` and `possible`;
 * forwarded, a job on a 4-CPU node was told the service node's count.
 * /proc/cpuinfo and /proc/meminfo: what programs that count processors or
 * size themselves to memory parse (their text: procinfo.c).  /proc/self/
 * status, statm, maps, cmdline and environ (and /proc/PID/ with the
 * caller's pid): the calling process's (procself.c); forwarded, they
 * described yod.  The rest of /proc is still yod's.  files_route sends these paths here
 * (FILES_SRV_NODE); fio_call answers with nodefiles_call what a server
 * would (fio_proto.h ops), so descriptors, stat and getdents work as for
 * any file.  Read-only, as sysfs and procfs are to a program: every change
 * is EACCES.  /dev/null and /dev/zero are here too: every program may write
 * to them, and forwarded, each write was a round trip to yod (an MPI code
 * that points its other ranks' stdout at /dev/null paid it per line); they
 * behave as Linux's character devices 1:3 and 1:5.  /dev/random and
 * /dev/urandom (1:8, 1:9) too: a file server opens no device.  Each running CPU N has
 * cpuN/topology: OpenMP runtimes read it for OMP_PLACES=cores or sockets
 * (libgomp: thread_siblings_list, core_siblings_list; missing, it printed
 * "Error reading core/socket topology" in every rank).  A node's CPUs are
 * one package of single-thread cores, as QEMU gives them. */
#include "errno.h"
#include "files.h"
#include "kernel.h"
#include "procinfo.h"
#include "random.h"
#include "process.h"
#include "smp.h"
#include "uaccess.h"

#define O_ACCMODE 3
#define O_CREAT 0100
#define O_EXCL 0200
#define O_TRUNC 01000
#define O_DIRECTORY 0200000
#define W_OK 2
#define NODE_DEV 0x16            /* st_dev of these files (sysfs's is anonymous too) */
#define MAX_OPEN 64              /* of these files at once: /dev/null is opened freely */
#define CPU_DIR FILES_NODE_PREFIX

/* The node's files by absolute path; [E_DIR] is the one directory, whose
 * entries are those named under it. */
enum { E_DIR, E_ONLINE, E_POSSIBLE, E_PRESENT, E_CPUINFO, E_MEMINFO, E_NULL, E_ZERO,
       E_RANDOM, E_URANDOM, E_SELF_STATUS, E_SELF_STATM, E_SELF_MAPS, E_SELF_CMDLINE,
       E_SELF_ENVIRON, N_ENTRIES };
static const char *const paths[N_ENTRIES] = {
    CPU_DIR, CPU_DIR "/online", CPU_DIR "/possible", CPU_DIR "/present", "/proc/cpuinfo",
    "/proc/meminfo", "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom",
    "/proc/self/status", "/proc/self/statm", "/proc/self/maps", "/proc/self/cmdline",
    "/proc/self/environ",
};
/* The character devices: writable, no content to seek in, st_rdev as
 * Linux's (mem 1:N).  /dev/random and /dev/urandom read the kernel's
 * generator (getrandom's); the file servers open no devices. */
#define IS_DEVICE(e) ((e) == E_NULL || (e) == E_ZERO || (e) == E_RANDOM || (e) == E_URANDOM)
static const uint16_t device_rdev[N_ENTRIES] = {
    [E_NULL] = 0x103, [E_ZERO] = 0x105, [E_RANDOM] = 0x108, [E_URANDOM] = 0x109,
};
#define DIR_FIRST E_ONLINE       /* the directory's files: E_ONLINE .. E_PRESENT */
#define DIR_END E_CPUINFO

/* CPU N's entries: TOPO_BASE + N * T_KINDS + kind; cpuN and cpuN/topology
 * are directories, the rest that directory's files. */
enum { T_CPU_DIR, T_TOPO_DIR, T_THREAD_SIBS, T_CORE_SIBS, T_CORE_CPUS, T_PACKAGE_CPUS, T_CORE_ID,
       T_PACKAGE_ID, T_KINDS };
static const char *const topo_names[T_KINDS] = {
    "", "topology", "thread_siblings_list", "core_siblings_list", "core_cpus_list",
    "package_cpus_list", "core_id", "physical_package_id",
};
#define TOPO_BASE 64
#define TOPO_CPU(e) (((e) - TOPO_BASE) / T_KINDS)
#define TOPO_KIND(e) (((e) - TOPO_BASE) % T_KINDS)
#define IS_TOPO(e) ((e) >= TOPO_BASE)
#define IS_DIR(e) ((e) == E_DIR || (IS_TOPO(e) && TOPO_KIND(e) <= T_TOPO_DIR))

static struct handle { bool used; int entry; int64_t pos; } open_files[MAX_OPEN];

/* CPU_DIR "/cpuN[/topology[/FILE]]" of a running CPU N, else -1. */
static int topo_entry_of(const char *path)
{
    size_t n = sizeof CPU_DIR - 1;
    if (strncmp(path, CPU_DIR "/cpu", n + 4))
        return -1;
    const char *p = path + n + 4;
    const char *num = p;
    int cpu = 0;
    while (*p >= '0' && *p <= '9' && p - num < 4)
        cpu = cpu * 10 + (*p++ - '0');
    /* "cpu01" is no name sysfs has: no leading zeros */
    if (p == num || (p - num > 1 && *num == '0') || cpu >= (int)smp_ncpus())
        return -1;
    int base = TOPO_BASE + cpu * T_KINDS;
    if (!*p)
        return base + T_CPU_DIR;
    if (strncmp(p, "/topology", 9))
        return -1;
    p += 9;
    if (!*p)
        return base + T_TOPO_DIR;
    for (int k = T_THREAD_SIBS; k < T_KINDS; k++)
        if (*p == '/' && !strcmp(p + 1, topo_names[k]))
            return base + k;
    return -1;
}

/* "/proc/PID/FILE" with the caller's own pid: as "/proc/self/FILE". */
static int own_pid_entry_of(const char *path)
{
    if (strncmp(path, "/proc/", 6))
        return -1;
    const char *p = path + 6;
    uint64_t pid = 0;
    while (*p >= '0' && *p <= '9' && pid < 1u << 22)
        pid = pid * 10 + (uint64_t)(*p++ - '0');
    if (p == path + 6 || path[6] == '0' || pid != proc.pid || *p != '/')
        return -1;
    if (!strcmp(p, "/status"))
        return E_SELF_STATUS;
    if (!strcmp(p, "/statm"))
        return E_SELF_STATM;
    if (!strcmp(p, "/maps"))
        return E_SELF_MAPS;
    if (!strcmp(p, "/cmdline"))
        return E_SELF_CMDLINE;
    if (!strcmp(p, "/environ"))
        return E_SELF_ENVIRON;
    return -1;
}

static int entry_of(const char *path)
{
    for (int e = 0; e < N_ENTRIES; e++)
        if (!strcmp(path, paths[e]))
            return e;
    int e = own_pid_entry_of(path);
    return e >= 0 ? e : topo_entry_of(path);
}

/* Directory d's i-th entry (after "." and ".."): its name in name[32], its
 * entry; -1 past the last. */
static int child(int d, int64_t i, char name[32])
{
    if (d == E_DIR) {
        if (i < DIR_END - DIR_FIRST) {
            strlcpy(name, paths[DIR_FIRST + i] + sizeof CPU_DIR, 32);
            return DIR_FIRST + (int)i;
        }
        i -= DIR_END - DIR_FIRST;
        if (i >= (int64_t)smp_ncpus())
            return -1;
        snprintf(name, 32, "cpu%u", (unsigned)i);
        return TOPO_BASE + (int)i * T_KINDS + T_CPU_DIR;
    }
    int kind = TOPO_KIND(d), first = TOPO_BASE + TOPO_CPU(d) * T_KINDS;
    if (kind == T_CPU_DIR && i == 0) {
        strlcpy(name, topo_names[T_TOPO_DIR], 32);
        return first + T_TOPO_DIR;
    }
    if (kind == T_TOPO_DIR && i < T_KINDS - T_THREAD_SIBS) {
        strlcpy(name, topo_names[T_THREAD_SIBS + i], 32);
        return first + T_THREAD_SIBS + (int)i;
    }
    return -1;
}

/* A node is one memory node: it has no /sys/devices/system/node, as a
 * Linux built without NUMA has none (and says ENOSYS to get_mempolicy, as
 * this kernel does).  Forwarded, hwloc and libnuma read the service node's
 * NUMA nodes there, with CPUs the node does not have. */
#define NUMA_DIR "/sys/devices/system/node"

static bool in_subtree(const char *abs, const char *top, size_t n)
{
    return !strncmp(abs, top, n) && (abs[n] == 0 || abs[n] == '/');
}

bool nodefiles_owns(const char *abs)
{
    /* The whole subtrees: what is not listed is ENOENT. */
    if (in_subtree(abs, CPU_DIR, sizeof CPU_DIR - 1) || in_subtree(abs, NUMA_DIR, sizeof NUMA_DIR - 1))
        return true;
    return entry_of(abs) >= 0;
}

/* An entry's text (o->ubuf 0: only its size, in o->pos). */
static void content(int entry, struct text_out *o)
{
    if (IS_TOPO(entry)) {
        unsigned cpu = (unsigned)TOPO_CPU(entry);
        switch (TOPO_KIND(entry)) {
        case T_THREAD_SIBS: case T_CORE_CPUS: case T_CORE_ID:
            text_printf(o, "%u\n", cpu);      /* a core of one thread */
            break;
        case T_CORE_SIBS: case T_PACKAGE_CPUS:
            procinfo_cpulist(o, true);        /* one package: every running CPU */
            break;
        case T_PACKAGE_ID:
            text_printf(o, "0\n");
            break;
        default:
            break;
        }
        return;
    }
    switch (entry) {
    case E_ONLINE: procinfo_cpulist(o, true); break;
    case E_POSSIBLE:
    case E_PRESENT: procinfo_cpulist(o, false); break;
    case E_CPUINFO: procinfo_cpuinfo(o); break;
    case E_MEMINFO: procinfo_meminfo(o); break;
    case E_SELF_STATUS: procinfo_self_status(o); break;
    case E_SELF_STATM: procinfo_self_statm(o); break;
    case E_SELF_MAPS: procinfo_self_maps(o); break;
    case E_SELF_CMDLINE: procinfo_self_cmdline(o); break;
    case E_SELF_ENVIRON: procinfo_self_environ(o); break;
    default: break;
    }
}

static uint64_t size_of(int entry)
{
    struct text_out o = {0, 0, 0, 0};
    content(entry, &o);
    return o.pos;
}

static void stat_of(int entry, struct fio_stat *st)
{
    memset(st, 0, sizeof *st);
    st->dev = NODE_DEV;
    st->ino = 1 + (uint64_t)entry;
    st->blksize = 4096;
    if (IS_DIR(entry)) {
        st->mode = 040755;
        st->nlink = 2;
    } else if (IS_DEVICE(entry)) {
        st->mode = 020666;
        st->nlink = 1;
        st->rdev = device_rdev[entry];
    } else {
        st->mode = 0100444;
        st->nlink = 1;
        /* What sysfs says of every attribute; procfs says 0 */
        st->size = entry < DIR_END || IS_TOPO(entry) ? 4096 : 0;
    }
}

static struct handle *handle_of(uint64_t h)
{
    if (h == 0 || h > MAX_OPEN || !open_files[h - 1].used)
        return NULL;
    return &open_files[h - 1];
}

static long do_open(const struct fio_req *req, int entry, struct fio_reply *rep)
{
    if (entry >= 0 && (req->flags & O_CREAT) && (req->flags & O_EXCL))
        return -EEXIST;
    if (!IS_DEVICE(entry) && ((req->flags & O_ACCMODE) != 0 || (req->flags & (O_CREAT | O_TRUNC))))
        return -EACCES;
    if (entry < 0)
        return -ENOENT;
    if (!IS_DIR(entry) && (req->flags & O_DIRECTORY))
        return -ENOTDIR;
    for (int i = 0; i < MAX_OPEN; i++)
        if (!open_files[i].used) {
            open_files[i] = (struct handle){true, entry, 0};
            rep->handle = (uint64_t)i + 1;
            rep->is_dir = IS_DIR(entry);
            return 0;
        }
    return -ENFILE;
}

static long do_read(struct handle *h, const struct fio_req *req, uint64_t ubuf)
{
    if (h->entry == E_NULL)
        return 0;
    if (h->entry == E_ZERO) {
        memset((void *)ubuf, 0, req->len);
        return (long)req->len;
    }
    if (h->entry == E_RANDOM || h->entry == E_URANDOM) {
        random_bytes((void *)ubuf, req->len);
        return (long)req->len;
    }
    int64_t off = req->offset < 0 ? h->pos : req->offset;
    struct text_out o = {(uint64_t)off, req->len, ubuf, 0};
    content(h->entry, &o);
    uint64_t n = text_got(&o);
    if (req->offset < 0)
        h->pos += (int64_t)n;
    return (long)n;
}

static long do_lseek(struct handle *h, const struct fio_req *req)
{
    if (IS_DEVICE(h->entry))
        return h->pos = 0;      /* as Linux's: every seek succeeds, to 0 */
    int64_t size = 0;
    char name[32];
    if (IS_DIR(h->entry))
        while (child(h->entry, size, name) >= 0)
            size++;
    size = IS_DIR(h->entry) ? size + 2 : (int64_t)size_of(h->entry);
    int64_t to;
    switch (req->flags) {
    case 0: to = req->offset; break;
    case 1: to = h->pos + req->offset; break;
    case 2: to = size + req->offset; break;
    case 3: if (req->offset >= size) return -ENXIO; to = req->offset; break;  /* SEEK_DATA */
    default: if (req->offset >= size) return -ENXIO; to = size; break;        /* SEEK_HOLE */
    }
    if (to < 0)
        return -EINVAL;
    h->pos = to;
    return (long)to;
}

/* linux_dirent64 records from position pos: ".", "..", then the files. */
static long do_getdents(struct handle *h, const struct fio_req *req, uint64_t ubuf)
{
    uint64_t used = 0;
    for (;; h->pos++) {
        char name[32];
        uint64_t ino = 1 + (uint64_t)h->entry;
        int e = h->entry;
        if (h->pos == 0) {
            strlcpy(name, ".", sizeof name);
        } else if (h->pos == 1) {
            strlcpy(name, "..", sizeof name);
            ino = 1;  /* what lies above is not ours to number */
        } else if ((e = child(h->entry, h->pos - 2, name)) >= 0) {
            ino = 1 + (uint64_t)e;
        } else {
            break;
        }
        uint64_t nlen = strlen(name);
        uint64_t reclen = (19 + nlen + 1 + 7) & ~7ULL;
        if (used + reclen > req->len)
            return used ? (long)used : -EINVAL;
        uint8_t rec[64];
        memset(rec, 0, sizeof rec);
        int64_t next = h->pos + 1;
        uint16_t rl = (uint16_t)reclen;
        memcpy(rec, &ino, 8);
        memcpy(rec + 8, &next, 8);
        memcpy(rec + 16, &rl, 2);
        rec[18] = h->pos < 2 || IS_DIR(e) ? 4 /* DT_DIR */ : 8 /* DT_REG */;
        memcpy(rec + 19, name, nlen);
        if (copy_to_user(ubuf + used, rec, reclen))
            return -EFAULT;
        used += reclen;
    }
    return (long)used;
}

long nodefiles_call(const struct fio_req *req, const char *spath, uint64_t ubuf,
                    struct fio_reply *rep)
{
    static struct fio_reply scratch;
    if (!rep)
        rep = &scratch;
    memset(rep, 0, offsetof(struct fio_reply, data));
    int entry = spath ? entry_of(spath) : -1;
    struct handle *h = NULL;
    switch (req->op) {
    case FIO_OPEN:
        return do_open(req, entry, rep);
    case FIO_STAT:
    case FIO_LSTAT:
        if (entry < 0)
            return -ENOENT;
        stat_of(entry, &rep->st);
        return 0;
    case FIO_ACCESS:
        if (entry < 0)
            return -ENOENT;
        return req->mode & W_OK && !IS_DEVICE(entry) ? -EACCES : 0;
    case FIO_CHDIR:
        return entry < 0 ? -ENOENT : IS_DIR(entry) ? 0 : -ENOTDIR;
    case FIO_READLINK:
        return entry < 0 ? -ENOENT : -EINVAL;
    case FIO_UNLINK:
    case FIO_RMDIR:
    case FIO_MKDIR:
    case FIO_RENAME:
    case FIO_SYMLINK:
    case FIO_LINK:
        return -EACCES;
    case FIO_CHMOD:
    case FIO_CHOWN:
    case FIO_UTIMENS:
        return entry < 0 ? -ENOENT : -EPERM;    /* the node's files are not the job's */
    case FIO_TRUNCATE:
        return IS_DEVICE(entry) ? -EINVAL : -EACCES;
    default:
        break;
    }
    h = handle_of(req->handle);
    if (!h)
        return -EBADF;
    switch (req->op) {
    case FIO_CLOSE:
        h->used = false;
        return 0;
    case FIO_READ:
        return do_read(h, req, ubuf);
    case FIO_LSEEK:
        return do_lseek(h, req);
    case FIO_FSTAT:
        stat_of(h->entry, &rep->st);
        return 0;
    case FIO_GETDENTS:
        return IS_DIR(h->entry) ? do_getdents(h, req, ubuf) : -ENOTDIR;
    case FIO_SETFL:
        return 0;
    case FIO_FSYNC:
    case FIO_FDATASYNC:
        return -EINVAL;
    case FIO_SYNCFS:
        return 0;                              /* nothing of the node's to flush */
    case FIO_WRITE:
        return IS_DEVICE(h->entry) ? (long)req->len : -EACCES;   /* taken, and dropped */
    case FIO_FTRUNCATE:
        return IS_DEVICE(h->entry) ? -EINVAL : -EACCES;
    case FIO_FCHMOD:
    case FIO_FCHOWN:
    case FIO_FUTIMENS:
        return -EPERM;
    default:
        return -EACCES;
    }
}

void nodefiles_reset(void)
{
    memset(open_files, 0, sizeof open_files);
}
