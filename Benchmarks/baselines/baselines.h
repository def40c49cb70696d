/* What a developer would otherwise use to keep a purchase result durably:
 * the baselines iap-bench measures the SDK against, in the same run.
 *
 * Compiled by scripts/bench.sh (gcc, or the toolchain's clang) into
 * libiapbaselines.so, linked with Debian's -lsqlite3; never by `swift build`
 * (the package has no dependencies). iap-bench loads it with dlopen and
 * resolves these names with dlsym. Every function returns 0 on success and
 * -1 (errno set, or a message on stderr for SQLite) on failure. */
#ifndef IAP_BENCH_BASELINES_H
#define IAP_BENCH_BASELINES_H
#include <stddef.h>
#include <stdint.h>

/* The floor: one append of the record's bytes, then fdatasync, on a file
 * opened once (O_APPEND), as the outbox appends to its log. */
int bl_floor_open(const char *path);
/* An empty exported function, reached through dlopen + dlsym like iap_poll:
 * the baseline of the empty-poll figure (kept out of the SDK's library). */
void bl_empty_call(void);
int bl_floor_commit(int fd, const void *bytes, size_t n);

/* The handoff floor (handoff.c): bl_floor_commit made by a second thread the
 * caller wakes through a condition variable, the caller waiting for it. */
typedef struct bl_handoff bl_handoff;
bl_handoff *bl_handoff_open(int fd);
int bl_handoff_commit(bl_handoff *h, const void *bytes, size_t n);
void bl_handoff_close(bl_handoff *h);

/* The wake floor (wake.c): a job handed to a thread sleeping on a condition
 * variable, the caller returning at once (as a game-facing call posts its
 * job to the SDK's thread); the thread runs each job for job_us. */
typedef struct bl_wake bl_wake;
bl_wake *bl_wake_open(long job_us);
void bl_wake_post(bl_wake *w);
void bl_wake_close(bl_wake *w);

/* Writes all n bytes (retrying short writes and EINTR); 0 or -1. Shared by
 * the file baselines so each is the same write plus its own syncs. */
int bl_write_all(int fd, const void *bytes, size_t n);

/* SQLite, WAL journal, synchronous=FULL: one INSERT (its own transaction)
 * of the same record: key, kind, transaction ID, message. */
typedef struct bl_sqlite bl_sqlite;
bl_sqlite *bl_sqlite_open(const char *path);
int bl_sqlite_insert(bl_sqlite *db, int64_t key, int kind, const char *txn, const void *message, size_t n);
void bl_sqlite_close(bl_sqlite *db);

/* The seeds' approach: one file per record, written under a temporary name,
 * fsync'd, renamed to <dir>/<key>.rec, then the directory fsync'd (what it
 * takes for the rename to survive a power cut). */
int bl_atomic_file_commit(const char *dir, int64_t key, const void *bytes, size_t n);

#endif
