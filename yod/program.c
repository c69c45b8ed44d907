/* Reading an executable and checking, before any node is involved, that a
 * Tern node can run it: a static x86-64 ELF whose headers are whole.  The
 * node kernel checks again; this is for an early, clear message. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tern/sha256.h>
#include "yod.h"

static int bad(char *err, size_t errlen, const char *path, const char *why)
{
    snprintf(err, errlen, "%s: %s", path, why);
    return -1;
}

static int check_elf(const uint8_t *d, size_t len, const char *path, char *err, size_t errlen)
{
    if (len < 4 || memcmp(d, ELFMAG, SELFMAG))
        return bad(err, errlen, path, "not an executable (not an ELF file)");
    if (len < EI_NIDENT || d[EI_CLASS] != ELFCLASS64)
        return bad(err, errlen, path, "a 32-bit program; Tern nodes run x86-64 (64-bit) programs");
    if (len < sizeof(Elf64_Ehdr))
        return bad(err, errlen, path, "truncated ELF header");
    Elf64_Ehdr eh;
    memcpy(&eh, d, sizeof eh);
    if (eh.e_machine != EM_X86_64)
        return bad(err, errlen, path, "not an x86-64 program");
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
        return bad(err, errlen, path, "not an executable program (an object file or core?)");
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phoff > len ||
        (len - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum)
        return bad(err, errlen, path, "truncated or corrupt program headers");
    bool dynamic = false;
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, d + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_INTERP)
            return bad(err, errlen, path,
                       "dynamically linked; Tern nodes run static programs (link with -static, "
                       "or use lwkcc)");
        if (ph.p_type == PT_DYNAMIC)
            dynamic = true;
        if (ph.p_type == PT_LOAD && (ph.p_offset > len || len - ph.p_offset < ph.p_filesz))
            return bad(err, errlen, path, "truncated: a segment lies beyond the end of the file");
    }
    if (eh.e_type == ET_DYN && !dynamic)
        return bad(err, errlen, path, "a shared library, not a program");
    return 0;
}

int program_read(struct program *p, const char *path, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->path = strdup(path);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return bad(err, errlen, path, "not a regular file");
    }
    if (st.st_size == 0) {
        close(fd);
        return bad(err, errlen, path, "empty file");
    }
    p->len = (size_t)st.st_size;
    p->data = malloc(p->len);
    if (!p->data) {
        close(fd);
        return bad(err, errlen, path, "too big to read into memory");
    }
    size_t got = 0;
    while (got < p->len) {
        ssize_t n = read(fd, p->data + got, p->len - got);
        if (n <= 0) {
            close(fd);
            snprintf(err, errlen, "%s: read failed: %s", path, n ? strerror(errno) : "file shrank");
            return -1;
        }
        got += (size_t)n;
    }
    close(fd);
    if (check_elf(p->data, p->len, path, err, errlen))
        return -1;
    sha256(p->data, p->len, p->sha256);
    return 0;
}

/* Functions through which a program starts threads: POSIX and C11 threads
 * (glibc, musl; C++ std::thread and OpenMP runtimes go through them too),
 * the raw system call's wrappers, and Go's runtime, which starts its
 * threads itself. */
static const char *const thread_starters[] = {
    "pthread_create", "__pthread_create_2_1", "thrd_create", "clone", "__clone", "clone3",
    "__clone3", "__clone_internal", "runtime.newosproc", "runtime.clone", NULL,
};

/* Whether the symbol table names a thread starter; without a symbol table
 * (a stripped program) that is not known, and the answer is yes. */
bool program_may_start_threads(const struct program *p, const char **why)
{
    const uint8_t *d = p->data;
    size_t len = p->len;
    Elf64_Ehdr eh;
    memcpy(&eh, d, sizeof eh);           /* program_read checked the header is whole */
    *why = "it has no symbol table (stripped): it may start threads";
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
        (len - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
        return true;
    for (int i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, str;
        memcpy(&sh, d + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum ||
            sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_offset > len ||
            len - sh.sh_offset < sh.sh_size)
            continue;
        memcpy(&str, d + eh.e_shoff + (size_t)sh.sh_link * sizeof str, sizeof str);
        if (str.sh_offset > len || len - str.sh_offset < str.sh_size || !str.sh_size)
            continue;
        const char *names = (const char *)d + str.sh_offset;
        size_t n = sh.sh_size / sizeof(Elf64_Sym);
        for (size_t k = 0; k < n; k++) {
            Elf64_Sym s;
            memcpy(&s, d + sh.sh_offset + k * sizeof s, sizeof s);
            if (s.st_name >= str.sh_size || s.st_shndx == SHN_UNDEF)
                continue;
            const char *name = names + s.st_name;
            size_t max = str.sh_size - s.st_name;
            for (int t = 0; thread_starters[t]; t++)
                if (strnlen(name, max) < max && !strcmp(name, thread_starters[t])) {
                    *why = thread_starters[t];
                    return true;
                }
        }
        *why = NULL;
        return false;
    }
    return true;
}
