/* lib_size_kb and links_icu: the size of the release libIAPBridge.so, and
 * whether loading it brings in Foundation or its ICU data (~40 MB) on Linux:
 * read from the library's own DT_NEEDED entries and from what is actually
 * mapped in this process after dlopen (which follows NEEDED transitively). */
#define _GNU_SOURCE
#include "bench.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int contains_any(const char *s, const char *const *needles) {
    for (; *needles; needles++)
        if (strstr(s, *needles)) return 1;
    return 0;
}

static const char *const icu_names[] = {"icu", "ICU", NULL};
static const char *const foundation_names[] = {"Foundation", NULL};

/* 1 when a DT_NEEDED entry of the ELF file matches. */
static int needed_matches(const char *path, const char *const *needles) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *img = malloc((size_t)size);
    if (!img || fread(img, 1, (size_t)size, f) != (size_t)size) die("cannot read %s", path);
    fclose(f);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) die("%s is not a 64-bit ELF file", path);
    Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
    int found = 0;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNAMIC) continue;
        const char *strtab = (const char *)(img + sh[sh[i].sh_link].sh_offset);
        Elf64_Dyn *d = (Elf64_Dyn *)(img + sh[i].sh_offset);
        for (; d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_NEEDED && contains_any(strtab + d->d_un.d_val, needles)) found = 1;
    }
    free(img);
    return found;
}

/* 1 when a library matching is mapped into this process. */
static int mapped_matches(const char *const *needles) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[8192];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        const char *slash = strrchr(line, '/');
        if (slash && strstr(slash, ".so") && contains_any(slash, needles)) found = 1;
    }
    fclose(f);
    return found;
}

void bench_library(void) {
    struct stat st;
    if (stat(OPT.lib, &st) != 0) die("cannot stat %s", OPT.lib);
    figure_int("lib_size_kb", (long)(st.st_size / 1024), "kB");
    figure_int("links_icu", needed_matches(OPT.lib, icu_names) || mapped_matches(icu_names), "bool");
    figure_int("links_foundation", needed_matches(OPT.lib, foundation_names) || mapped_matches(foundation_names), "bool");
}
