/* CIAPFrame: the C ABI's entry points that run on the game's frame and are
 * written in C, not Swift (poll.c). Internal to the SDK: a game includes
 * include/iap_bridge.h, which declares the same functions; this header lets
 * the SDK's Swift tests call them. */
#ifndef CIAPFRAME_H
#define CIAPFRAME_H

struct iap_bridge;

/* iap_poll, as include/iap_bridge.h documents it. */
char *iap_poll(struct iap_bridge *bridge);

#endif
