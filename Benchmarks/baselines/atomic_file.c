/* The seeds' approach: a file per record, made durable the careful way
 * (write a temporary, fsync it, rename it into place, fsync the directory). */
#define _GNU_SOURCE
#include "baselines.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int bl_atomic_file_commit(const char *dir, int64_t key, const void *bytes, size_t n) {
    char tmp[PATH_MAX], final[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/%" PRId64 ".tmp", dir, key);
    snprintf(final, sizeof final, "%s/%" PRId64 ".rec", dir, key);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    if (bl_write_all(fd, bytes, n) != 0 || fsync(fd) != 0) {
        close(fd);
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, final) != 0) return -1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    int rc = fsync(dfd);
    close(dfd);
    return rc;
}
