/* scan_garbage_*: iap_open on an outbox full of garbage built to be
 * expensive: look-alike frame headers every 12 bytes, each claiming a payload
 * that runs almost to the end of the file (a plain scan checks each one's
 * payload: quadratic), then one real frame. Timed from iap_open to its
 * return, which includes reporting the damage (a copy of the file is kept)
 * and writing the clean file. Figures: MB/s over the file's size, at 1 and
 * 8 MB (linear: the rate holds). */
#define _GNU_SOURCE
#include "bench.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_garbage(const char *dir, long size) {
    char path[4200];
    make_dir(dir);
    snprintf(path, sizeof path, "%s/data", dir);
    make_dir(path);
    snprintf(path, sizeof path, "%s/data/outbox.log", dir);
    unsigned char *b = malloc((size_t)size);
    if (!b) die("out of memory");
    long n = 0;
    while (n + 12 <= size) {
        uint32_t rest = (uint32_t)(size - n - 12 - 64 > 0 ? size - n - 12 - 64 : 0);
        memcpy(b + n, "IAPr", 4);
        memcpy(b + n + 4, &rest, 4);
        memcpy(b + n + 8, "\xde\xad\xbe\xef", 4);
        n += 12;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, b, (size_t)n) != n) die("cannot write %s", path);
    close(fd);
    free(b);
}

static double open_seconds(const char *dir) {
    double t0 = now_us();
    iap_bridge *b = bridge_open(dir);
    double t = (now_us() - t0) / 1e6;
    bridge_close(b);
    return t;
}

void bench_scan(void) {
    long sizes[2] = {1L << 20, 8L << 20};
    const char *names[2] = {"scan_garbage_mb_per_s_1mb", "scan_garbage_mb_per_s_8mb"};
    double rate[2];
    for (int i = 0; i < 2; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/scan-%d", OPT.dir, i);
        write_garbage(dir, sizes[i]);
        double s = open_seconds(dir);
        rate[i] = (double)sizes[i] / (1 << 20) / s;
        figure(names[i], rate[i], "MB/s");
    }
    figure("scan_garbage_8mb_vs_1mb_rate", rate[1] / rate[0], "x");
}
