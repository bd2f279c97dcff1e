/* hook_retry — the webhook retry schedule, pure.
 *
 * After the n-th failed attempt (n >= 1) the next one waits min(base · 2^(n−1), cap): with
 * the defaults ([webhooks] retry_base 10s, retry_cap 1h) 10 s, 20 s, 40 s … 1 h, 1 h, ….
 * An event is given up (failed) when its next attempt would come later than retry_for
 * (24 h by default) after the event was written. A delivery counts when the receiver
 * answers 2xx; any other status, a timeout, a refused address or a broken connection is a
 * failure to retry. */
#ifndef HOOK_RETRY_H
#define HOOK_RETRY_H

#include <stdbool.h>
#include <stdint.h>

struct hook_retry_policy {
    int64_t base_ms, cap_ms, give_up_ms; /* > 0 */
};

/* The pause after `attempts` failed attempts (attempts >= 1), never above cap. */
int64_t hook_retry_delay_ms(const struct hook_retry_policy *p, int64_t attempts);

/* True when an event age_ms old, after `attempts` failed attempts, gets another one. */
bool hook_retry_again(const struct hook_retry_policy *p, int64_t attempts, int64_t age_ms);

/* True when an HTTP status means delivered. */
bool hook_retry_delivered(long status);

/* Why an attempt failed, a small fixed set (the metrics' `reason` label, in this order:
 * hook_failure_names). */
enum hook_failure {
    HOOK_FAILURE_TIMEOUT,     /* no complete answer within [webhooks] timeout */
    HOOK_FAILURE_REFUSED,     /* the SSRF guard refused every address (hook_ssrf.h) */
    HOOK_FAILURE_CONNECT,     /* the connection could not be made, or broke */
    HOOK_FAILURE_RESOLVE,     /* the host name did not resolve */
    HOOK_FAILURE_TLS,         /* the TLS handshake or the certificate failed */
    HOOK_FAILURE_TOO_LARGE,   /* the answer was longer than [webhooks] max_response */
    HOOK_FAILURE_HTTP_STATUS, /* an answer that is not 2xx */
    HOOK_FAILURE_NO_URL,      /* the invoice has no webhook_url */
    HOOK_FAILURE_OTHER,       /* anything else (signing, out of memory) */
    HOOK_FAILURE_COUNT
};
extern const char *const hook_failure_names[HOOK_FAILURE_COUNT + 1]; /* NULL-terminated */

/* What one attempt's facts say: no_url (nothing was sent), refused (the guard's), too_large
 * (the answer passed max_response), curl_code (libcurl's CURLcode; 0 = an answer came),
 * status (its HTTP status). Only for an attempt that was not delivered. */
enum hook_failure hook_failure_of(bool no_url, bool refused, bool too_large, int curl_code,
                                  long status);

#endif
