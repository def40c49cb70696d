/* The floor of a game-facing call that hands its work to a sleeping thread
 * (C10: iap_request_products posts a job to the SDK's thread and returns):
 * the caller takes a mutex, queues a job, unlocks and signals a condition
 * variable; a second thread wakes and runs the job (a fixed stretch of
 * work, about what the SDK's thread spends on a products request). The
 * caller's cost is the wake: a few microseconds when the other thread is
 * awake, tens when the signal must wake a halted idle core (on a virtual
 * machine, an inter-processor interrupt and a VM exit). iap-bench times
 * bl_wake_post in the same rounds as iap_request_products. */
#define _GNU_SOURCE
#include "baselines.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct bl_wake {
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int jobs, stop;
    long job_ns;
};

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *worker(void *arg) {
    bl_wake *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mutex);
        while (!w->jobs && !w->stop) pthread_cond_wait(&w->cond, &w->mutex);
        if (w->stop) { pthread_mutex_unlock(&w->mutex); return NULL; }
        w->jobs--;
        pthread_mutex_unlock(&w->mutex);
        for (long long end = now_ns() + w->job_ns; now_ns() < end;) {}
    }
}

bl_wake *bl_wake_open(long job_us) {
    bl_wake *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->job_ns = job_us * 1000;
    pthread_mutex_init(&w->mutex, NULL);
    pthread_cond_init(&w->cond, NULL);
    if (pthread_create(&w->thread, NULL, worker, w) != 0) { free(w); return NULL; }
    return w;
}

void bl_wake_post(bl_wake *w) {
    pthread_mutex_lock(&w->mutex);
    w->jobs++;
    pthread_mutex_unlock(&w->mutex);
    pthread_cond_signal(&w->cond);
}

void bl_wake_close(bl_wake *w) {
    pthread_mutex_lock(&w->mutex);
    w->stop = 1;
    pthread_mutex_unlock(&w->mutex);
    pthread_cond_signal(&w->cond);
    pthread_join(w->thread, NULL);
    free(w);
}
