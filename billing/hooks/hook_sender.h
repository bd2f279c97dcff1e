/* hook_sender — delivers the webhook outbox (webhook_events, hook_outbox.h): a thread of its
 * own, with its own database connection and its own libcurl handle, so a slow or dead
 * receiver never holds up the payment poller or the API.
 *
 * Each round claims the most overdue event with one statement (bl_hook_claim: FOR UPDATE
 * SKIP LOCKED, and a lease that moves its next attempt past this attempt's deadline), so
 * every billing replica runs a sender and none sends an event another is sending; a sender
 * killed mid-attempt leaves the event due again when its lease ends (at least once). The
 * attempt is a POST of the stored body with Content-Type: application/json,
 * Xmrgate-Event-Id and Xmrgate-Signature (hook_sign.h), within [webhooks] timeout; the
 * address connected to is checked by hook_ssrf in libcurl's open-socket callback (after
 * resolution: DNS rebinding cannot slip past), redirects are not followed, proxies from the
 * environment are ignored, at most [webhooks] max_response bytes of the answer are read.
 * The outcome is written back (hook_retry.h decides the next attempt or giving up). When
 * nothing is due the thread sleeps [webhooks] poll_interval. */
#ifndef HOOK_SENDER_H
#define HOOK_SENDER_H

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
};

struct hook_sender;

/* NULL when out of memory. */
struct hook_sender *hook_sender_new(const struct hook_sender_options *opt);

/* Starts the thread. False if it cannot start. */
__attribute__((warn_unused_result)) bool hook_sender_start(struct hook_sender *s);

/* The attempts that failed on this instance so far, by reason (hook_retry.h's
 * hook_failure; one failed attempt counts once, whether it is retried or given up). */
void hook_sender_failures(struct hook_sender *s, uint64_t out[HOOK_FAILURE_COUNT]);

/* Stops the thread (after the attempt under way) and frees everything. */
void hook_sender_free(struct hook_sender *s);

#endif
