/* hook_retry — see hook_retry.h. */
#include "hooks/hook_retry.h"

#include <curl/curl.h>

int64_t hook_retry_delay_ms(const struct hook_retry_policy *p, int64_t attempts)
{
    int64_t d = p->base_ms;
    for (int64_t i = 1; i < attempts && d < p->cap_ms; i++)
        d = d > p->cap_ms / 2 ? p->cap_ms : d * 2;
    return d < p->cap_ms ? d : p->cap_ms;
}

bool hook_retry_again(const struct hook_retry_policy *p, int64_t attempts, int64_t age_ms)
{
    return age_ms + hook_retry_delay_ms(p, attempts) <= p->give_up_ms;
}

bool hook_retry_delivered(long status)
{
    return status >= 200 && status <= 299;
}

const char *const hook_failure_names[HOOK_FAILURE_COUNT + 1] = {
    "timeout",   "refused",     "connect", "resolve", "tls",
    "too_large", "http_status", "no_url",  "other",   NULL};

enum hook_failure hook_failure_of(bool no_url, bool refused, bool too_large, int curl_code,
                                  long status)
{
    if (no_url)
        return HOOK_FAILURE_NO_URL;
    if (refused)
        return HOOK_FAILURE_REFUSED;
    if (too_large)
        return HOOK_FAILURE_TOO_LARGE;
    switch ((CURLcode)curl_code) {
    case CURLE_OK:
        return status > 0 ? HOOK_FAILURE_HTTP_STATUS : HOOK_FAILURE_OTHER;
    case CURLE_OPERATION_TIMEDOUT:
        return HOOK_FAILURE_TIMEOUT;
    case CURLE_COULDNT_RESOLVE_HOST:
        return HOOK_FAILURE_RESOLVE;
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_WEIRD_SERVER_REPLY:
        return HOOK_FAILURE_CONNECT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
        return HOOK_FAILURE_TLS;
    default:
        return HOOK_FAILURE_OTHER;
    }
}
