/*
 * MPICH-CX PiP: checking a program and preparing its in-memory copy (see
 * cx_pip_elf.h).  The file is untrusted input: every offset is checked
 * against its size.
 */
#define _GNU_SOURCE
#include "cx_pip_elf.h"
#include "cx_pip_err.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define CX_EM EM_X86_64
#define CX_R_COPY R_X86_64_COPY
#elif defined(__aarch64__)
#define CX_EM EM_AARCH64
#define CX_R_COPY R_AARCH64_COPY
#else
#error "MPICH-CX PiP supports x86_64 and aarch64"
#endif

#define REBUILD "rebuild it with mpich-cx's mpicc (or compile with -fPIC and link with -pie -rdynamic)"

static bool in_file(const cx_pip_image_t * img, uint64_t off, uint64_t len)
{
    return off <= img->size && len <= img->size - off;
}

/* The file offset of virtual address `va` (inside a PT_LOAD's file part). */
static bool va_to_off(const cx_pip_image_t * img, const Elf64_Phdr * ph, int phnum, uint64_t va,
                      uint64_t len, uint64_t * off)
{
    for (int i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_LOAD || va < ph[i].p_vaddr)
            continue;
        uint64_t rel = va - ph[i].p_vaddr;
        if (rel <= ph[i].p_filesz && len <= ph[i].p_filesz - rel) {
            *off = ph[i].p_offset + rel;
            return in_file(img, *off, len);
        }
    }
    return false;
}

static int read_file(const char *path, cx_pip_image_t * img, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cx_pip_fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cx_pip_fail(err, errlen, "%s: not a regular file", path);
    }
    img->size = (size_t) st.st_size;
    img->data = malloc(img->size ? img->size : 1);
    if (!img->data) {
        close(fd);
        return cx_pip_fail(err, errlen, "%s: out of memory reading %zu bytes", path, img->size);
    }
    size_t got = 0;
    while (got < img->size) {
        ssize_t n = read(fd, img->data + got, img->size - got);
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            cx_pip_image_free(img);
            return cx_pip_fail(err, errlen, "%s: read failed: %s", path, strerror(e));
        }
        got += (size_t) n;
    }
    close(fd);
    return 0;
}

/* Is `main` among the exported dynamic symbols?  -1: no section headers to
 * tell (the loader's dlsym decides then). */
static int exports_main(const cx_pip_image_t * img, const Elf64_Ehdr * eh)
{
    if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(img, eh->e_shoff, (uint64_t) eh->e_shnum * sizeof(Elf64_Shdr)))
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *) (img->data + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum ||
            sh[i].sh_entsize != sizeof(Elf64_Sym) || !in_file(img, sh[i].sh_offset, sh[i].sh_size))
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (!in_file(img, str->sh_offset, str->sh_size))
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *) (img->data + sh[i].sh_offset);
        for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
            if (sym[k].st_name >= str->sh_size || sym[k].st_shndx == SHN_UNDEF)
                continue;
            const char *name = img->data + str->sh_offset + sym[k].st_name;
            if (str->sh_size - sym[k].st_name >= sizeof("main") &&
                !memcmp(name, "main", sizeof("main")) && ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC)
                return 1;
        }
        return 0;
    }
    return -1;
}

typedef struct {
    uint64_t symtab, strtab, strsz;
    uint64_t rela, relasz, jmprel, pltrelsz;
    int64_t pltrel;
    Elf64_Dyn *flags_1;
} dyninfo_t;

/* One relocation table: copy relocations refuse the program. */
static int scan_relocs(const char *path, cx_pip_image_t * img, const Elf64_Phdr * ph, int phnum,
                       const dyninfo_t * d, uint64_t va, uint64_t size, char *err, size_t errlen)
{
    uint64_t off, symoff, stroff;
    if (!size)
        return 0;
    if (!va_to_off(img, ph, phnum, va, size, &off))
        return cx_pip_fail(err, errlen, "%s: relocation table outside the file (corrupt ELF)",
                           path);
    const Elf64_Rela *r = (const Elf64_Rela *) (img->data + off);
    bool have_syms = d->symtab && d->strtab &&
        va_to_off(img, ph, phnum, d->strtab, d->strsz, &stroff) &&
        va_to_off(img, ph, phnum, d->symtab, sizeof(Elf64_Sym), &symoff);
    for (uint64_t i = 0; i < size / sizeof(Elf64_Rela); i++) {
        uint32_t type = ELF64_R_TYPE(r[i].r_info), symi = ELF64_R_SYM(r[i].r_info);
        if (type != CX_R_COPY)
            continue;
        const char *name = "?";
        if (have_syms && symi && in_file(img, symoff + (uint64_t) symi * sizeof(Elf64_Sym),
                                         sizeof(Elf64_Sym))) {
            const Elf64_Sym *s = (const Elf64_Sym *) (img->data + symoff) + symi;
            if (s->st_name < d->strsz)
                name = img->data + stroff + s->st_name;
        }
        return cx_pip_fail(err, errlen, "%s: has copy relocations (of '%s'): it was compiled "
                           "without -fPIC, so it would not see its own C library's data when "
                           "loaded as a PiP task; %s", path, name, REBUILD);
    }
    return 0;
}

int cx_pip_image_load(const char *path, cx_pip_image_t * img, char *err, size_t errlen)
{
    memset(img, 0, sizeof(*img));
    if (read_file(path, img, err, errlen))
        return -1;
    int rc = -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *) img->data;
    if (img->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
        cx_pip_fail(err, errlen, "%s: not an ELF executable", path);
        goto out;
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != CX_EM) {
        cx_pip_fail(err, errlen, "%s: built for another architecture than this host", path);
        goto out;
    }
    if ((eh->e_type != ET_DYN && eh->e_type != ET_EXEC) || eh->e_phentsize != sizeof(Elf64_Phdr)
        || !in_file(img, eh->e_phoff, (uint64_t) eh->e_phnum * sizeof(Elf64_Phdr))) {
        cx_pip_fail(err, errlen, "%s: not an ELF executable", path);
        goto out;
    }
    const Elf64_Phdr *ph = (const Elf64_Phdr *) (img->data + eh->e_phoff);
    const Elf64_Phdr *dyn = NULL;
    bool interp = false;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = &ph[i];
        else if (ph[i].p_type == PT_INTERP)
            interp = true;
    }
    if (!dyn || !in_file(img, dyn->p_offset, dyn->p_filesz)) {
        cx_pip_fail(err, errlen, "%s: statically linked; PiP loads every rank with the dynamic "
                    "loader, so link it dynamically (mpich-cx's mpicc without -static)", path);
        goto out;
    }
    if (eh->e_type == ET_EXEC) {
        cx_pip_fail(err, errlen, "%s: not a position-independent executable (linked without -pie), "
                    "so it cannot share an address space with other ranks; %s", path, REBUILD);
        goto out;
    }
    dyninfo_t d = {.pltrel = DT_RELA };
    Elf64_Dyn *dy = (Elf64_Dyn *) (img->data + dyn->p_offset);
    for (uint64_t i = 0; i < dyn->p_filesz / sizeof(Elf64_Dyn) && dy[i].d_tag != DT_NULL; i++) {
        switch (dy[i].d_tag) {
            case DT_FLAGS_1:
                d.flags_1 = &dy[i];
                break;
            case DT_SYMTAB:
                d.symtab = dy[i].d_un.d_ptr;
                break;
            case DT_STRTAB:
                d.strtab = dy[i].d_un.d_ptr;
                break;
            case DT_STRSZ:
                d.strsz = dy[i].d_un.d_val;
                break;
            case DT_RELA:
                d.rela = dy[i].d_un.d_ptr;
                break;
            case DT_RELASZ:
                d.relasz = dy[i].d_un.d_val;
                break;
            case DT_JMPREL:
                d.jmprel = dy[i].d_un.d_ptr;
                break;
            case DT_PLTRELSZ:
                d.pltrelsz = dy[i].d_un.d_val;
                break;
            case DT_PLTREL:
                d.pltrel = (int64_t) dy[i].d_un.d_val;
                break;
            default:
                break;
        }
    }
    bool pie_flag = d.flags_1 && (d.flags_1->d_un.d_val & DF_1_PIE);
    if (!interp) {
        if (pie_flag)
            cx_pip_fail(err, errlen,
                        "%s: statically linked (static-pie); PiP loads every rank with "
                        "the dynamic loader, so link it dynamically (mpich-cx's mpicc without "
                        "-static-pie)", path);
        else
            cx_pip_fail(err, errlen, "%s: a shared library, not a program", path);
        goto out;
    }
    if (d.pltrel != DT_RELA) {
        cx_pip_fail(err, errlen, "%s: unsupported relocation format (DT_REL)", path);
        goto out;
    }
    if (scan_relocs(path, img, ph, eh->e_phnum, &d, d.rela, d.relasz, err, errlen) ||
        scan_relocs(path, img, ph, eh->e_phnum, &d, d.jmprel, d.pltrelsz, err, errlen))
        goto out;
    if (exports_main(img, eh) == 0) {
        cx_pip_fail(err, errlen, "%s: does not export 'main' (linked without -rdynamic); %s", path,
                    REBUILD);
        goto out;
    }
    if (pie_flag)       /* what makes glibc's dlopen refuse an executable */
        d.flags_1->d_un.d_val &= ~(uint64_t) DF_1_PIE;
    rc = 0;
  out:
    if (rc)
        cx_pip_image_free(img);
    return rc;
}

void cx_pip_image_free(cx_pip_image_t * img)
{
    free(img->data);
    memset(img, 0, sizeof(*img));
}
