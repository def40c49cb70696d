/* The empty call the poll benchmark compares iap_poll to (baselines.h). */
#include "baselines.h"

void bl_empty_call(void) { __asm__ __volatile__("" ::: "memory"); }
