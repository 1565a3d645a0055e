/*
 * MPICH-CX PiP: GOT slots of every object of a namespace, and a jump written
 * over a function's start (see cx_pip_got.h).
 * The objects are loaded and relocated, so their dynamic sections are read
 * in memory; glibc has already added the load base to the addresses in
 * them on most architectures, which the `abs` helper accounts for either way.
 */
#define _GNU_SOURCE
#include "cx_pip_got.h"
#include "cx_pip_err.h"
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define CX_R_GLOB_DAT R_X86_64_GLOB_DAT
#define CX_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#elif defined(__aarch64__)
#define CX_R_GLOB_DAT R_AARCH64_GLOB_DAT
#define CX_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#endif

/* The C library and the loader keep their own calls. */
static bool skip_object(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    return !strncmp(base, "libc.so", 7) || !strncmp(base, "ld-linux", 8) ||
        !strncmp(base, "ld64.so", 7) || !strncmp(base, "linux-vdso", 10);
}

/* A d_ptr as an address: adjusted in place by glibc, or still relative. */
static uintptr_t abs_addr(const struct link_map *lm, uintptr_t v)
{
    return v < lm->l_addr ? v + lm->l_addr : v;
}

/* The object's PT_GNU_RELRO range (read-only once relocated), from its
 * program headers, which the first PT_LOAD maps at the load base in every
 * ELF object the loader maps.  false when there is no ELF header there
 * (then the object is left alone). */
static bool relro_range(const struct link_map *lm, uintptr_t * start, uintptr_t * end)
{
    const ElfW(Ehdr) * eh = (const ElfW(Ehdr) *) lm->l_addr;
    *start = *end = 0;
    if (!lm->l_addr || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_phentsize != sizeof(ElfW(Phdr)))
        return false;
    const ElfW(Phdr) * ph = (const ElfW(Phdr) *) (lm->l_addr + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_GNU_RELRO) {
            *start = lm->l_addr + ph[i].p_vaddr;
            *end = *start + ph[i].p_memsz;
        }
    }
    return true;
}

/* Writes fn into one GOT slot, made writable for it when in RELRO.  -1
 * (errno) when that fails. */
static int got_write(void **slot, void *fn, uintptr_t relro_start, uintptr_t relro_end)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t) slot & ~(uintptr_t) (page - 1);
    bool relro = (uintptr_t) slot >= relro_start && (uintptr_t) slot < relro_end;
    if (relro && mprotect((void *) start, (size_t) page, PROT_READ | PROT_WRITE) != 0)
        return -1;
    *slot = fn;
    if (relro)
        mprotect((void *) start, (size_t) page, PROT_READ);
    return 0;
}

static int redirect_in(struct link_map *lm, const char *symbol, void *fn, char *err, size_t errlen)
{
    const ElfW(Sym) * symtab = NULL;
    const char *strtab = NULL;
    uintptr_t rela = 0, jmprel = 0;
    size_t relasz = 0, pltrelsz = 0, strsz = 0;
    for (const ElfW(Dyn) * d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
            case DT_SYMTAB:
                symtab = (const ElfW(Sym) *) abs_addr(lm, d->d_un.d_ptr);
                break;
            case DT_STRTAB:
                strtab = (const char *) abs_addr(lm, d->d_un.d_ptr);
                break;
            case DT_STRSZ:
                strsz = d->d_un.d_val;
                break;
            case DT_RELA:
                rela = abs_addr(lm, d->d_un.d_ptr);
                break;
            case DT_RELASZ:
                relasz = d->d_un.d_val;
                break;
            case DT_JMPREL:
                jmprel = abs_addr(lm, d->d_un.d_ptr);
                break;
            case DT_PLTRELSZ:
                pltrelsz = d->d_un.d_val;
                break;
            default:
                break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    uintptr_t relro_start, relro_end;
    if (!relro_range(lm, &relro_start, &relro_end))
        return 0;
    int n = 0;
    const struct {
        uintptr_t at;
        size_t size;
    } tables[2] = { {rela, relasz}, {jmprel, pltrelsz} };
    for (int t = 0; t < 2; t++) {
        const ElfW(Rela) * r = (const ElfW(Rela) *) tables[t].at;
        for (size_t i = 0; r && i < tables[t].size / sizeof(*r); i++) {
            uint32_t type = ELF64_R_TYPE(r[i].r_info), symi = ELF64_R_SYM(r[i].r_info);
            if ((type != CX_R_JUMP_SLOT && type != CX_R_GLOB_DAT) || !symi ||
                symtab[symi].st_name >= strsz || strcmp(strtab + symtab[symi].st_name, symbol))
                continue;
            if (got_write((void **) (lm->l_addr + r[i].r_offset), fn, relro_start, relro_end))
                return cx_pip_fail(err, errlen, "%s: cannot redirect its %s: %s", lm->l_name,
                                   symbol, strerror(errno));
            n++;
        }
    }
    return n;
}

int cx_pip_got_redirect(void *handle, const char *symbol, void *fn, char *err, size_t errlen)
{
    struct link_map *lm;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0)
        return cx_pip_fail(err, errlen, "dlinfo: %s", dlerror());
    while (lm->l_prev)  /* the namespace's first object */
        lm = lm->l_prev;
    int total = 0;
    for (; lm; lm = lm->l_next) {
        if (skip_object(lm->l_name))
            continue;
        int n = redirect_in(lm, symbol, fn, err, errlen);
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}

/* ---- a jump over a function's start ------------------------------------ */

#if defined(__x86_64__)
/* movabs $hook, %r11; jmp *%r11 */
#define CX_STUB_SIZE 13
static void make_stub(unsigned char *s, void *hook)
{
    uint64_t a = (uintptr_t) hook;
    s[0] = 0x49, s[1] = 0xbb;
    memcpy(s + 2, &a, 8);
    s[10] = 0x41, s[11] = 0xff, s[12] = 0xe3;
}
#elif defined(__aarch64__)
/* ldr x16, 8; br x16; .quad hook */
#define CX_STUB_SIZE 16
static void make_stub(unsigned char *s, void *hook)
{
    const uint32_t ldr = 0x58000050, br = 0xd61f0200;
    uint64_t a = (uintptr_t) hook;
    memcpy(s, &ldr, 4);
    memcpy(s + 4, &br, 4);
    memcpy(s + 8, &a, 8);
}
#endif

int cx_pip_code_divert(void *fn, void *hook, char *err, size_t errlen)
{
    Dl_info info;
    const ElfW(Sym) * sym = NULL;
    if (!dladdr1(fn, &info, (void **) &sym, RTLD_DL_SYMENT) || !sym || info.dli_saddr != fn)
        return cx_pip_fail(err, errlen, "no symbol at %p", fn);
    if (sym->st_size < CX_STUB_SIZE)
        return cx_pip_fail(err, errlen, "%s in %s: %zu bytes, too short for a jump",
                           info.dli_sname, info.dli_fname, (size_t) sym->st_size);
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t) fn & ~(uintptr_t) (page - 1);
    size_t len = ((uintptr_t) fn + CX_STUB_SIZE - start + (size_t) page - 1) & ~(size_t) (page - 1);
    /* writable and still executable: no other thread may run this code now,
     * but refusing W+X (SELinux execmem) leaves it untouched */
    if (mprotect((void *) start, len, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return cx_pip_fail(err, errlen, "%s in %s: mprotect: %s", info.dli_sname, info.dli_fname,
                           strerror(errno));
    unsigned char stub[CX_STUB_SIZE];
    make_stub(stub, hook);
    memcpy(fn, stub, CX_STUB_SIZE);
    __builtin___clear_cache((char *) fn, (char *) fn + CX_STUB_SIZE);
    mprotect((void *) start, len, PROT_READ | PROT_EXEC);       /* stays W+X if refused */
    return 0;
}
