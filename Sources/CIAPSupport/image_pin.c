/* The shared library pins itself in memory when it is loaded, so that a
 * host's dlclose leaves it mapped.
 *
 * Why: the Swift runtime records every image it sees at load time (its
 * protocol conformances, type metadata, and caches filled from them) and
 * never forgets one. When the Swift runtime is a separate library that
 * outlives ours (a debug build, or a host that links Swift itself), a
 * dlclose that really unmapped us would leave the runtime pointing into
 * freed pages, and the next type lookup after a dlopen crashes (seen in
 * CI's unload loop; swiftlang/swift#75889 is the compiler avoiding the same
 * dlclose). So the constructor below marks the image RTLD_NODELETE: dlclose
 * succeeds and does nothing, a later dlopen gets the same image back, with
 * every bridge closed and no SDK thread running (C8, docs/CONTRACT.md).
 *
 * Darwin's dyld never unloads an image with Swift metadata, so this is for
 * ELF systems only. In a static link (libIAPBridge.a in an executable) the
 * image is the executable, which is never unloaded: pinning it is harmless. */
#if defined(__linux__) && !defined(__ANDROID__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#endif
#include "CIAPSupport.h"

#if defined(__linux__) && !defined(__ANDROID__)

__attribute__((constructor)) static void iapc_pin_image(void) {
    Dl_info info;
    if (dladdr((const void *)&iapc_pin_image, &info) == 0 || info.dli_fname == NULL) return;
    /* RTLD_NOLOAD: only the image already loaded (ourselves); RTLD_NODELETE
     * marks it never to be unmapped. The extra reference is given back at
     * once; the mark stays. */
    void *self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (self != NULL) dlclose(self);
}
#endif
