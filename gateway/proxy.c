/* proxy — node dispatch with one retry for reads. */
#include "proxy.h"

#include "context.h"
#include "jsonrpc.h"
#include "xg_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool proxy_retryable(int outcome, long http_status)
{
    switch ((enum up_outcome)outcome) {
    case UP_CONNECT_ERROR:
    case UP_TIMEOUT:
    case UP_PROTOCOL_ERROR:
        return true;
    case UP_OK:
        return http_status >= 500;
    default:
        return false;
    }
}

/* Our own answer when no node answered, in the client's shape. */
static void answer_unavailable(struct gw_request *req, const char *why)
{
    char message[256];
    snprintf(message, sizeof message, "no node could answer: %s", why);
    req->status = MHD_HTTP_BAD_GATEWAY;
    free(req->answer_body);
    req->answer_body = NULL;
    req->answer_len = 0;
    req->answer_type[0] = '\0';
    if (req->endpoint == GW_EP_JSONRPC) {
        req->answer_body =
            jsonrpc_error_body(req->rpc_id, JSONRPC_INTERNAL_ERROR, message, &req->answer_len);
        snprintf(req->answer_type, sizeof req->answer_type, "application/json");
    } else if (req->endpoint == GW_EP_JSON) {
        json_t *body = json_pack("{s:s}", "status", message);
        req->answer_body = jsonrpc_dump(body, &req->answer_len);
        json_decref(body);
        snprintf(req->answer_type, sizeof req->answer_type, "application/json");
    }
    req->answered = true;
}

static bool submit_attempt(struct gw_request *req);

static void finish(struct gw_request *req)
{
    req->answered = true;
    MHD_resume_connection(req->conn);
}

static void on_node_done(const struct up_result *res, void *arg)
{
    struct gw_request *req = arg;
    bool is_last = req->attempt + 1 >= req->ncandidates;
    bool can_retry = !req->info->writes && !is_last && now_us() < req->deadline_us &&
                     proxy_retryable(res->outcome, res->http_status);
    if (res->outcome != UP_OK || res->http_status >= 500) {
        xg_log(XG_LOG_DEBUG, "node_attempt_failed", "node %s: %s (HTTP %ld)%s",
               req->candidates[req->attempt].name,
               res->error ? res->error : up_outcome_name(res->outcome), res->http_status,
               can_retry ? ", retrying on the next node" : "");
    }
    if (can_retry) {
        req->attempt++;
        if (submit_attempt(req))
            return;
        answer_unavailable(req, "retry could not be queued");
        finish(req);
        return;
    }
    if (res->outcome != UP_OK) {
        answer_unavailable(req, res->error ? res->error : up_outcome_name(res->outcome));
        finish(req);
        return;
    }
    req->status = (unsigned)res->http_status;
    req->answer_len = res->body_len;
    req->answer_body = up_result_take_body(res);
    snprintf(req->answer_type, sizeof req->answer_type, "%s",
             res->content_type ? res->content_type : "");
    finish(req);
}

static bool submit_attempt(struct gw_request *req)
{
    const struct node_info *node = &req->candidates[req->attempt];
    char url[512];
    snprintf(url, sizeof url, "%s%s", node->url, req->rest);
    /* The allow-list: nothing of the client's reaches a node but its body. */
    static const struct up_header json_headers[] = {{"Content-Type", "application/json"}};
    int64_t left_ms = (req->deadline_us - now_us()) / 1000;
    long timeout = (long)(left_ms < req->ctx->node_timeout_ms ? left_ms
                                                              : req->ctx->node_timeout_ms);
    if (timeout < 1)
        timeout = 1;
    struct up_job job = {
        .url = url,
        .method = req->is_post || req->forward_len ? "POST" : "GET",
        .body = req->forward_body,
        .body_len = req->forward_len,
        .headers = req->endpoint == GW_EP_BIN ? NULL : json_headers,
        .nheaders = req->endpoint == GW_EP_BIN ? 0 : 1,
        .timeout_ms = timeout,
        .verify_tls = true,
        .on_done = on_node_done,
        .arg = req,
    };
    return up_submit(req->ctx->up, &job);
}

/* Copies up to GW_MAX_ATTEMPTS nodes from the current snapshot; a write gets one. */
static void choose_candidates(struct gw_request *req)
{
    size_t wanted = req->info->writes ? 1 : GW_MAX_ATTEMPTS;
    nodes_read_lock();
    const struct node_set *set = nodes_current(req->ctx->nodes);
    req->ncandidates = 0;
    for (size_t i = 0; i < set->count && req->ncandidates < wanted; i++)
        req->candidates[req->ncandidates++] = set->nodes[i];
    nodes_read_unlock();
}

bool proxy_dispatch(struct gw_request *req)
{
    choose_candidates(req);
    req->attempt = 0;
    if (req->ncandidates == 0) {
        answer_unavailable(req, "no node is configured");
        return false;
    }
    if (!submit_attempt(req)) {
        answer_unavailable(req, "the gateway is shutting down");
        return false;
    }
    return true;
}
