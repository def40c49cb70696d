/* Clocks, medians, memory readings and the one output format:
 * `name value unit`, one figure per line; notes start with "# ". */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

double cpu_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

double thread_cpu_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double median(double *v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    long size = 0, resident = 0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

long heap_kb(void) {
    struct mallinfo2 m = mallinfo2();
    return (long)((m.uordblks + m.hblkhd) / 1024);
}

/* Every figure printed, for the goal check at the end. */
enum { max_figures = 256 };
static struct { char name[64]; double value; } figures[max_figures];
static int figure_count;

static void remember(const char *name, double value) {
    if (figure_count == max_figures) die("too many figures");
    snprintf(figures[figure_count].name, sizeof figures[0].name, "%s", name);
    figures[figure_count++].value = value;
}

int figure_value(const char *name, double *out) {
    for (int i = 0; i < figure_count; i++)
        if (strcmp(figures[i].name, name) == 0) { *out = figures[i].value; return 1; }
    return 0;
}

void figure(const char *name, double value, const char *unit) {
    remember(name, value);
    if (value >= 100) printf("%s %.0f %s\n", name, value, unit);
    else if (value >= 10) printf("%s %.1f %s\n", name, value, unit);
    else printf("%s %.2f %s\n", name, value, unit);
    fflush(stdout);
}

void figure_int(const char *name, long value, const char *unit) {
    remember(name, (double)value);
    printf("%s %ld %s\n", name, value, unit);
    fflush(stdout);
}

void note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "iap-bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

void make_dir(const char *path) {
    if (mkdir(path, 0700) != 0 && errno != EEXIST) die("cannot create %s", path);
}

void sync_dir_fs(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) die("cannot open %s", path);
    syncfs(fd);
    close(fd);
}
