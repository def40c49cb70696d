/* The floor: durability cannot cost less than one write plus one data sync. */
#define _GNU_SOURCE
#include "baselines.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int bl_floor_open(const char *path) {
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0600);
}

int bl_write_all(int fd, const void *bytes, size_t n) {
    const char *p = bytes;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int bl_floor_commit(int fd, const void *bytes, size_t n) {
    if (bl_write_all(fd, bytes, n) != 0) return -1;
    return fdatasync(fd);
}
