/* poll_empty_*: what the per-frame iap_poll costs when nothing is queued,
 * against a call to an empty exported C function of another dlopen'ed library
 * (the baselines': the SDK ships no test hook for it), both
 * through a dlsym'd pointer. Samples alternate between the two. */
#include "bench.h"

#include <stdio.h>

void bench_poll(void) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/poll", OPT.dir);
    iap_bridge *b = bridge_open(dir);
    bridge_drain(b);

    const long calls = OPT.quick ? 200000 : 2000000;
    enum { max_samples = 31 };
    const int samples = OPT.quick ? 5 : max_samples;
    double poll_ns[max_samples], call_ns[max_samples];
    char *(*poll)(iap_bridge *) = SDK.poll;
    void (*empty)(void) = BL.empty_call;

    for (long i = 0; i < calls; i++) { empty(); if (poll(b)) die("poll returned a message on an empty queue"); }

    long allocs = 0;
    for (int s = 0; s < samples; s++) {
        double t0 = now_us();
        for (long i = 0; i < calls; i++) empty();
        double t1 = now_us();
        call_ns[s] = (t1 - t0) * 1000 / (double)calls;

        long a0 = bench_thread_allocs();
        t0 = now_us();
        for (long i = 0; i < calls; i++) {
            if (poll(b)) die("poll returned a message on an empty queue");
        }
        t1 = now_us();
        allocs += bench_thread_allocs() - a0;
        poll_ns[s] = (t1 - t0) * 1000 / (double)calls;
    }
    bridge_close(b);

    double p = median(poll_ns, samples), c = median(call_ns, samples);
    figure("poll_empty_ns", p, "ns");
    figure("poll_empty_call_ns", c, "ns");
    figure("poll_empty_vs_call", p / c, "x");
    figure_int("poll_empty_allocs", allocs, "allocs");
    figure_int("poll_empty_calls", calls * samples, "calls");
    figure_int("poll_empty_samples", samples, "samples");
}
