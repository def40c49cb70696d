/*
 * iap_demo_dir: the demos' and tests' scratch directory. Made with mkdtemp
 * under $TMPDIR (else /tmp) and removed, with everything in it, when the
 * process that made it exits (atexit: a normal return or exit(), also a
 * failed check; a forked child that exits does not remove its parent's
 * directory). Not part of the SDK: a game keeps its dataDir for good.
 */
#ifndef IAP_DEMO_DIR_H
#define IAP_DEMO_DIR_H
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char iap_demo_dir_path[PATH_MAX];
static pid_t iap_demo_dir_owner;

/* Removes path and everything under it (does not follow symbolic links). */
static void iap_demo_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
                char child[PATH_MAX];
                if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) < (int)sizeof child) iap_demo_remove_tree(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void iap_demo_dir_cleanup(void) {
    if (iap_demo_dir_path[0] && getpid() == iap_demo_dir_owner) iap_demo_remove_tree(iap_demo_dir_path);
}

/* Makes <$TMPDIR or /tmp>/<prefix>-XXXXXX; returns its path (static storage)
 * or NULL (errno set). Removed at exit. */
static const char *iap_demo_dir_make(const char *prefix) {
    const char *base = getenv("TMPDIR");
    if (!base || base[0] != '/') base = "/tmp";
    size_t len = strlen(base);
    while (len > 1 && base[len - 1] == '/') len--;
    snprintf(iap_demo_dir_path, sizeof iap_demo_dir_path, "%.*s/%s-XXXXXX", (int)len, base, prefix);
    if (!mkdtemp(iap_demo_dir_path)) { iap_demo_dir_path[0] = 0; return NULL; }
    iap_demo_dir_owner = getpid();
    atexit(iap_demo_dir_cleanup);
    return iap_demo_dir_path;
}
#endif
