/* The floor for an SDK that keeps the disk off the game's thread (C10): the
 * same append + fdatasync as floor.c, done by a second thread that sleeps on
 * a condition variable until the caller hands it the record, while the
 * caller waits for it to finish (as the game waits for its "7"). What this
 * adds to the floor is the cost of waking a sleeping thread and of the sync's
 * completion reaching it: a few microseconds on bare metal, tens to a hundred
 * on a virtual machine whose idle cores halt. */
#include "baselines.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

struct bl_handoff {
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int fd;
    const void *bytes;
    size_t n;
    int has_job, stop;
    atomic_int done;
    int result;
};

static void *worker(void *arg) {
    bl_handoff *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->mutex);
        while (!h->has_job && !h->stop) pthread_cond_wait(&h->cond, &h->mutex);
        if (h->stop) { pthread_mutex_unlock(&h->mutex); return NULL; }
        h->has_job = 0;
        pthread_mutex_unlock(&h->mutex);
        h->result = bl_floor_commit(h->fd, h->bytes, h->n);
        atomic_store(&h->done, 1);
    }
}

bl_handoff *bl_handoff_open(int fd) {
    bl_handoff *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->fd = fd;
    pthread_mutex_init(&h->mutex, NULL);
    pthread_cond_init(&h->cond, NULL);
    if (pthread_create(&h->thread, NULL, worker, h) != 0) { free(h); return NULL; }
    return h;
}

int bl_handoff_commit(bl_handoff *h, const void *bytes, size_t n) {
    atomic_store(&h->done, 0);
    pthread_mutex_lock(&h->mutex);
    h->bytes = bytes;
    h->n = n;
    h->has_job = 1;
    pthread_mutex_unlock(&h->mutex);
    pthread_cond_signal(&h->cond);
    while (!atomic_load(&h->done)) {}
    return h->result;
}

void bl_handoff_close(bl_handoff *h) {
    pthread_mutex_lock(&h->mutex);
    h->stop = 1;
    pthread_mutex_unlock(&h->mutex);
    pthread_cond_signal(&h->cond);
    pthread_join(h->thread, NULL);
    free(h);
}
