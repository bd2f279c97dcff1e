/* hook_sender — delivers the webhook outbox (webhook_events, hook_outbox.h): [webhooks]
 * senders threads (4), each with its own database connection and its own libcurl handle, so
 * a slow or dead receiver never holds up the payment poller or the API, nor, with a few of
 * them, every other merchant's webhooks.
 *
 * Each round of a thread claims the most overdue events, up to 16, with one statement
 * (bl_hook_claim: FOR UPDATE SKIP LOCKED, and a lease that moves their next attempt past
 * this attempt's deadline), so no two threads or replicas send one event at once; a sender
 * killed mid-attempt leaves the event due again when its lease ends (at least once). Of the
 * claim it sends the first event whose destination takes it now (hook_dest.h: fewer than
 * [webhooks] per_destination attempts under way there on this replica, its breaker not
 * open) and puts the others back in one statement (bl_hook_release, no attempt counted):
 * due again at once when only this thread's turn was taken, in 1 s when their destination
 * is busy, when the breaker half-opens when it is open. The breakers and the counts in
 * flight are this replica's, in memory (hook_dest.h says why), one entry per destination
 * in use or with a breaker not at rest. The
 * attempt is a POST of the stored body with Content-Type: application/json,
 * Xmrgate-Event-Id and Xmrgate-Signature (hook_sign.h), within [webhooks] timeout; the
 * address connected to is checked by hook_ssrf in libcurl's open-socket callback (after
 * resolution: DNS rebinding cannot slip past), redirects are not followed, proxies from the
 * environment are ignored, at most [webhooks] max_response bytes of the answer are read.
 * The outcome is written back (hook_retry.h decides the next attempt or giving up). When
 * nothing is due the thread sleeps [webhooks] poll_interval. */
#ifndef HOOK_SENDER_H
#define HOOK_SENDER_H

#include "hooks/hook_dest.h"
#include "hooks/hook_retry.h"
#include "hooks/hook_sign.h"
#include "xg_proxy_addr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hook_sender_options {
    const char *conninfo;               /* copied                        */
    const struct xg_proxy_trust *allow; /* copied; [webhooks] allow      */
    uint8_t key[HOOK_SIGN_KEY_LEN];     /* copied; hook_sign.h's K       */
    struct hook_retry_policy retry;
    int64_t timeout_ms, max_response, interval_ms;
    int64_t senders;                    /* threads; < 1: 1 */
    int64_t per_destination;            /* attempts to one destination at once; < 1: 1 */
    struct hook_breaker_policy breaker; /* threshold < 1: 5, 30 s, 30 min */
};

struct hook_sender;

/* NULL when out of memory. */
struct hook_sender *hook_sender_new(const struct hook_sender_options *opt);

/* Starts the threads. False if one cannot start (hook_sender_free stops the others). */
__attribute__((warn_unused_result)) bool hook_sender_start(struct hook_sender *s);

/* The attempts that failed on this instance so far, by reason (hook_retry.h's
 * hook_failure; one failed attempt counts once, whether it is retried or given up). */
void hook_sender_failures(struct hook_sender *s, uint64_t out[HOOK_FAILURE_COUNT]);

/* The destinations this replica keeps an entry for, by their breaker's state (in
 * hook_breaker_state_names' order). Thread-safe. */
void hook_sender_breakers(struct hook_sender *s, uint64_t out[HOOK_BREAKER_NSTATES]);

/* Stops the threads (after the attempts under way) and frees everything. */
void hook_sender_free(struct hook_sender *s);

#endif
