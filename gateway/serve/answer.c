/* answer — answers written into their request; see answer.h. */
#include "serve/answer.h"

#include "rpc/jsonrpc.h"
#include "xg_str.h"

#include <stdlib.h>
#include <string.h>

void answer_set(struct gw_request *req, long status, char *body, size_t len, const char *type)
{
    free(req->answer_body);
    req->status = (unsigned)status;
    req->answer_body = body;
    req->answer_len = body ? len : 0;
    xg_str_copy(req->answer_type, sizeof req->answer_type, type ? type : "");
    req->answered = true;
}

void answer_json(struct gw_request *req, unsigned status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    answer_set(req, text ? status : 500, text, text ? strlen(text) : 0, "application/json");
}

char *answer_error_body(enum gw_endpoint endpoint, const json_t *id, enum errors_code code,
                        const char *message, size_t *len, const char **type)
{
    const struct errors_row *row = errors_get(code);
    const char *text = message ? message : row->message;
    char *body = NULL;
    *len = 0;
    *type = "";
    if (row->bare) {
        *type = "text/plain";
        return NULL;
    }
    if (endpoint == GW_EP_JSONRPC) {
        body = jsonrpc_error_body(id, row->rpc_code, text, len);
    } else if (endpoint == GW_EP_JSON) {
        json_t *obj = json_pack("{s:s}", "status", text);
        body = obj ? jsonrpc_dump(obj, len) : NULL;
        json_decref(obj);
    }
    if (body)
        *type = "application/json";
    else
        *len = 0;
    return body;
}

void answer_error(struct gw_request *req, enum errors_code code, const char *message)
{
    size_t len;
    const char *type;
    char *body = answer_error_body(req->endpoint, req->rpc_id, code, message, &len, &type);
    answer_set(req, errors_get(code)->http, body, len, type);
}

json_t *answer_xmr402_body(enum errors_code code, const char *message)
{
    const struct errors_row *row = errors_get(code);
    return json_pack("{s:s, s:{s:s, s:s}}", "protocol", "XMR402", "error", "code", row->name,
                     "message", message ? message : row->message);
}

void answer_xmr402_error(struct gw_request *req, enum errors_code code, const char *message)
{
    answer_json(req, errors_get(code)->http, answer_xmr402_body(code, message));
}

void answer_header_add(struct gw_request *req, const char *name, const char *value)
{
    if (req->nextra_headers == GW_MAX_EXTRA_HEADERS)
        return;
    struct gw_header *h = &req->extra_headers[req->nextra_headers++];
    h->name = name;
    xg_str_copy(h->value, sizeof h->value, value);
}

void answer_header_set(struct gw_request *req, const char *name, const char *value)
{
    for (size_t i = 0; i < req->nextra_headers; i++) {
        if (strcmp(req->extra_headers[i].name, name) == 0) {
            xg_str_copy(req->extra_headers[i].value, sizeof req->extra_headers[i].value, value);
            return;
        }
    }
    answer_header_add(req, name, value);
}
