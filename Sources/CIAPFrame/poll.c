/* iap_poll's per-frame path, in C. Most games call iap_poll every frame and
 * nearly always find nothing queued; in Swift the exported function was a
 * thunk jumping to the Swift body: this is the body itself (the empty poll
 * at ~1.4x an empty call into another library, where the goal is 1.5x;
 * BENCHMARKS.md). Everything but that path is iapc_poll_slow, in Swift
 * (IAPBridge's CABI.swift): bad handles, closed bridges, messages. */
#include "CIAPFrame.h"
#include "CIAPSupport.h"

#include <stdint.h>

char *iapc_poll_slow(struct iap_bridge *bridge); /* CABI.swift */

/* A handle is (marker | check | generation | slot) (Registry.swift): one
 * compare of the whole value with the slot's live handle checks all four,
 * and the marker test (the top bit but one) keeps NULL, -1 and stray
 * pointers away from the table. Then one load of the slot's message count.
 * Both loads are lock-free (the registry writes them with release stores). */
__attribute__((visibility("default"))) char *iap_poll(struct iap_bridge *bridge) {
    uintptr_t v = (uintptr_t)bridge;
    uintptr_t slot = v & (IAPC_REGISTRY_SLOTS - 1);
    if ((v >> (sizeof(uintptr_t) * 8 - 2)) == 1
        && iapc_atomic_load_i64(&iapc_registry_storage[2 * slot]) == (int64_t)(uint64_t)v
        && iapc_atomic_load_i64(&iapc_registry_storage[2 * slot + 1]) == 0) {
        return NULL;
    }
    return iapc_poll_slow(bridge);
}
