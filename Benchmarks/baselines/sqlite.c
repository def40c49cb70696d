/* SQLite as a developer would configure it for purchases: WAL journal with
 * synchronous=FULL (each commit syncs the WAL), one prepared INSERT per
 * record in its own transaction. */
#include "baselines.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

struct bl_sqlite {
    sqlite3 *db;
    sqlite3_stmt *insert;
};

static int fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "sqlite baseline: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    return -1;
}

bl_sqlite *bl_sqlite_open(const char *path) {
    bl_sqlite *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (sqlite3_open(path, &s->db) != SQLITE_OK) {
        fail(s->db, "open");
        bl_sqlite_close(s);
        return NULL;
    }
    const char *setup =
        "PRAGMA journal_mode=WAL;"
        "PRAGMA synchronous=FULL;"
        "CREATE TABLE IF NOT EXISTS outbox("
        " key INTEGER PRIMARY KEY, kind INTEGER NOT NULL, txn TEXT NOT NULL, message BLOB NOT NULL);";
    if (sqlite3_exec(s->db, setup, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT INTO outbox(key, kind, txn, message) VALUES (?, ?, ?, ?)", -1,
                           &s->insert, NULL) != SQLITE_OK) {
        fail(s->db, "setup");
        bl_sqlite_close(s);
        return NULL;
    }
    return s;
}

int bl_sqlite_insert(bl_sqlite *s, int64_t key, int kind, const char *txn, const void *message, size_t n) {
    sqlite3_bind_int64(s->insert, 1, key);
    sqlite3_bind_int(s->insert, 2, kind);
    sqlite3_bind_text(s->insert, 3, txn, -1, SQLITE_STATIC);
    sqlite3_bind_blob(s->insert, 4, message, (int)n, SQLITE_STATIC);
    int rc = sqlite3_step(s->insert);
    sqlite3_reset(s->insert);
    return rc == SQLITE_DONE ? 0 : fail(s->db, "insert");
}

void bl_sqlite_close(bl_sqlite *s) {
    if (!s) return;
    sqlite3_finalize(s->insert);
    sqlite3_close(s->db);
    free(s);
}
