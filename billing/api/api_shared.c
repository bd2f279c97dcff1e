/* api_shared — see api_shared.h. */
#include "api/api_shared.h"

#include "core/credentials.h"
#include "xg_log.h"
#include "xg_reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct api *api_of(const struct xg_httpd_request *req)
{
    return req->closure;
}

enum xg_httpd_result api_error_reply(const struct xg_httpd_request *req, enum bl_error e,
                                     const char *message, json_t *extra, int64_t retry_after_s)
{
    xg_httpd_set_tag(req, (int)e);
    json_t *body = bl_error_json(e, message);
    if (body && extra)
        json_object_update(body, extra);
    json_decref(extra);
    char seconds[24];
    snprintf(seconds, sizeof seconds, "%lld", (long long)retry_after_s);
    const char *headers[] = {"Retry-After", seconds, NULL};
    return xg_reply_json_with(req->conn, bl_error_status(e), body,
                              retry_after_s >= 0 ? headers : NULL);
}

enum xg_httpd_result api_error(const struct xg_httpd_request *req, enum bl_error e)
{
    return api_error_reply(req, e, NULL, NULL, -1);
}

enum xg_httpd_result api_errorf(const struct xg_httpd_request *req, enum bl_error e,
                                const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return api_error_reply(req, e, message, NULL, -1);
}

enum xg_httpd_result api_db_error(const struct xg_httpd_request *req, struct xg_pg *pg)
{
    xg_log(XG_LOG_ERROR, "api_db_failed", "%s", xg_pg_last_error(pg));
    return api_error(req, BL_ERROR_DATABASE_UNAVAILABLE);
}

enum bl_error api_bearer_token_hash(const struct xg_httpd_request *req,
                                    char hash[TOKEN_HASH_HEX_SIZE])
{
    const char *auth = xg_httpd_header(req, "Authorization");
    if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
        return BL_ERROR_TOKEN_REQUIRED;
    const char *token = auth + 7;
    while (*token == ' ')
        token++;
    return cred_token_hash_hex(token, hash) ? BL_ERROR_COUNT : BL_ERROR_UNKNOWN_TOKEN;
}

enum api_load api_tier_load(struct xg_pg *pg, const char *id, struct api_tier *out)
{
    const char *params[] = {id};
    memset(out, 0, sizeof *out);
    PGresult *res = xg_pg_exec(pg, "bl_tier_get", 1, params);
    if (!res)
        return API_LOAD_DB_ERROR;
    enum api_load r = API_LOAD_NOT_FOUND;
    if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 5), "t") == 0) {
        snprintf(out->currency, sizeof out->currency, "%s", PQgetvalue(res, 0, 1));
        out->price_minor = xg_pg_int64(res, 0, 2);
        out->confirmations = xg_pg_int64(res, 0, 3);
        out->max_months = xg_pg_int64(res, 0, 4);
        r = API_LOAD_OK;
    }
    PQclear(res);
    return r;
}

json_t *api_json_piconero(int64_t piconero)
{
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)piconero);
    return json_string(text);
}

json_t *api_json_xmr(int64_t piconero)
{
    char text[PRICE_XMR_TEXT_SIZE];
    price_format_xmr(piconero, text);
    return json_string(text);
}

json_t *api_json_monero_uri(const char *address, int64_t piconero)
{
    char text[PRICE_XMR_TEXT_SIZE], *uri = NULL;
    price_format_xmr(piconero, text);
    if (asprintf(&uri, "monero:%s?tx_amount=%s", address, text) < 0)
        return json_null();
    json_t *j = json_string(uri);
    free(uri);
    return j;
}
