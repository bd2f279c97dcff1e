/* up_job — what a call to a node (or to billing) is and what comes back: the job a caller
 * builds and hands to the upstream engine (upstream.h), the engine's options, and the
 * result its callback gets. The data contract between the engine, its two clients
 * (up_xfer.h) and its callers; the builder and the outcome names are pure. */
#ifndef UP_JOB_H
#define UP_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/tls_pin.h"

/* A zero field takes the default in brackets. */
struct up_engine_options {
    /* Connections per node (host:port as spelled in the URL); jobs above it queue inside
     * the engine until one is free [24]. */
    unsigned max_connections_per_node;
    /* How many engines share one node: a job's own cap (up_job.max_connections) is split
     * between them, each keeping at least one connection [1]. */
    unsigned cap_share;
    /* Connections to all nodes together, open or idle in the keep-alive cache [256]. */
    unsigned max_total_connections;
    long connect_timeout_ms;   /* TCP (and TLS) connect [3000] */
    const char *ca_file;       /* PEM CAs for https:// nodes; NULL or "": the system's */
    struct tls_pins tls_pins;  /* node certificates accepted without a CA (tls_pin.h) */
    size_t max_response_bytes; /* larger answers fail with UP_TOO_LARGE [64 MiB] */
};

struct up_header {
    const char *name;
    const char *value; /* "" sends the header with an empty value */
};

struct up_result;

/* Built with up_job_init (then up_job_post, up_job_headers); the fields are what
 * up_submit reads. */
struct up_job {
    const char *url;    /* node base URL + path: http://127.0.0.1:18081/json_rpc */
    const char *method; /* "GET" or "POST" */
    const void *body;   /* POST body (binary-safe); may be NULL when body_len is 0 */
    size_t body_len;
    const struct up_header *headers; /* the complete allow-listed set sent to the node */
    size_t nheaders;
    long timeout_ms; /* whole-job deadline from submission, queueing included; > 0 */
    bool verify_tls; /* for https nodes: check certificate and host name */
    /* This node's own connection cap, for all engines together (cap_share splits it); 0:
     * the engine's max_connections_per_node. The lower of the two applies. Honoured for
     * nodes served by nodeconn (plain http at a numeric address); curl serves the others
     * under the engine's cap. */
    unsigned max_connections;
    void (*on_done)(const struct up_result *res, void *arg);
    void *arg;
};

/* A GET of base + path, joined into url (url_cap bytes, the caller's, valid until
 * up_submit returns), with no body and no headers, TLS verified, timed out after
 * timeout_ms, reported to on_done(res, arg). Returns false when base and path do not fit
 * in url together: a URL cut short is never sent (up_submit refuses that job), the caller
 * answers the failure. */
__attribute__((warn_unused_result)) bool
up_job_init(struct up_job *job, char *url, size_t url_cap, const char *base, const char *path,
            long timeout_ms, void (*on_done)(const struct up_result *, void *), void *arg);

/* Makes job a POST of body (len bytes, binary-safe; NULL when len is 0). */
void up_job_post(struct up_job *job, const void *body, size_t len);

/* The headers sent with job (n of them; the array is the caller's until up_submit). */
void up_job_headers(struct up_job *job, const struct up_header *headers, size_t n);

/* Pure: a job's timeout when its client has left_ms until its own deadline and the call
 * may take cap_ms (> 0) at most: the smaller, and at least 1 ms (a deadline that passed
 * still gets the shortest try, whose failure the caller answers). */
long up_timeout_within(int64_t left_ms, long cap_ms);

enum up_outcome {
    UP_OK,             /* an HTTP answer arrived (any status) */
    UP_CONNECT_ERROR,  /* refused, unreachable, unresolvable, TLS handshake failed */
    UP_TIMEOUT,        /* the job's deadline (or the connect timeout) passed */
    UP_TOO_LARGE,      /* the answer exceeded max_response_bytes */
    UP_PROTOCOL_ERROR, /* reset or closed mid-answer, malformed HTTP, ... */
    UP_CANCELLED,      /* the engine stopped before the job finished */
    UP_INTERNAL_ERROR, /* the engine could not run the job (out of memory) */
};

struct up_result {
    enum up_outcome outcome;
    long http_status; /* 0 when no status line arrived */
    /* Byte-for-byte what the node sent, followed by a NUL not counted in body_len;
     * NULL with body_len 0 unless outcome is UP_OK. */
    const char *body;
    size_t body_len;
    const char *content_type; /* the node's Content-Type (no control characters), or NULL */
    double seconds;           /* from up_submit to completion, queueing included */
    const char *error;        /* why, when outcome != UP_OK; NULL otherwise */
};

/* Pure: the connections one engine may open to a node whose own cap is node_cap (0: none)
 * when `share` engines split it (0 counts as 1), under the engine's cap engine_cap: at
 * least 1. */
unsigned up_job_node_cap(unsigned node_cap, unsigned share, unsigned engine_cap);

/* A short English name of an outcome ("ok", "timeout", ...), for logs and metrics. */
const char *up_outcome_name(enum up_outcome outcome);

#endif
