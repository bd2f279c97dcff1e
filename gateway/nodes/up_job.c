/* up_job — the job builder, the timeout rule and the outcome names (pure). */
#include "nodes/up_job.h"

#include "xg_str.h"

bool up_job_init(struct up_job *job, char *url, size_t url_cap, const char *base, const char *path,
                 long timeout_ms, void (*on_done)(const struct up_result *, void *), void *arg)
{
    *job = (struct up_job){
        .url = url,
        .method = "GET",
        .timeout_ms = timeout_ms,
        .verify_tls = true,
        .on_done = on_done,
        .arg = arg,
    };
    if (xg_str_join(url, url_cap, base, path))
        return true;
    job->url = NULL; /* up_submit refuses it: what url holds now is cut short */
    return false;
}

unsigned up_job_node_cap(unsigned node_cap, unsigned share, unsigned engine_cap)
{
    if (node_cap == 0)
        return engine_cap;
    unsigned per = node_cap / (share ? share : 1);
    if (per == 0)
        per = 1;
    return per < engine_cap ? per : engine_cap;
}

void up_job_post(struct up_job *job, const void *body, size_t len)
{
    job->method = "POST";
    job->body = body;
    job->body_len = len;
}

void up_job_headers(struct up_job *job, const struct up_header *headers, size_t n)
{
    job->headers = headers;
    job->nheaders = n;
}

long up_timeout_within(int64_t left_ms, long cap_ms)
{
    int64_t ms = left_ms < cap_ms ? left_ms : cap_ms;
    return ms < 1 ? 1 : (long)ms;
}

const char *up_outcome_name(enum up_outcome outcome)
{
    switch (outcome) {
    case UP_OK:
        return "ok";
    case UP_CONNECT_ERROR:
        return "connect_error";
    case UP_TIMEOUT:
        return "timeout";
    case UP_TOO_LARGE:
        return "too_large";
    case UP_PROTOCOL_ERROR:
        return "protocol_error";
    case UP_CANCELLED:
        return "cancelled";
    case UP_INTERNAL_ERROR:
        return "internal_error";
    }
    return "unknown";
}
