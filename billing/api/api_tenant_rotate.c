/* POST /api/tenant/rotate — with Authorization: Bearer <token>: replaces the tenant's token
 * and Digest login (handle) with fresh ones and returns them, once. The tenant keeps its id,
 * so its tier, valid_until and usage carry over. One UPDATE (bl_tenant_rotate) does it; its
 * NOTIFY makes every gateway replica drop the old token and handle when it commits
 * (state/tenants.h: an upsert removes the keys that changed), so a leaked token stops
 * working everywhere at once.
 *
 * Rate-limited per client address (api.c: ROTATE_PER_HOUR). Errors: 401 token_required,
 * 404 unknown_token (also for a token rotated away), 429 rate_limited, 503
 * database_unavailable. The token of an idempotent or XMR402 purchase is never shown again
 * once the tenant rotated (api_invoice_create.c), and its XMR402 proof no longer stands for
 * it (api_xmr402_verify.c: credentials_rotated, which the gateway answers 403 as every refused
 * proof). */
#include "api/api_tenant_rotate.h"

#include "api/api_shared.h"
#include "core/credentials.h"
#include "xg_clock.h"
#include "xg_log.h"
#include "xg_reply.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SQLSTATE_UNIQUE "23505"
#define HANDLE_ATTEMPTS 4
#define ROTATED_NOTICE                                                                             \
    "shown once: store it now; the old token and login stopped working at every gateway"

static bool take_limit(const struct xg_httpd_request *req, enum xg_httpd_result *mr)
{
    struct api *api = api_of(req);
    char client[256];
    int64_t retry = 0;
    xg_httpd_client_addr(req, client, sizeof client);
    if (client_limit_table_take(api->rotate_limit, client, xg_monotonic_ms(), &retry))
        return true;
    *mr = api_error_reply(req, BL_ERROR_RATE_LIMITED,
                          "too many token rotations from this address; try again later",
                          json_pack("{s:I}", "retry_after", (json_int_t)retry), retry);
    return false;
}

static json_t *rotated_json(const struct api *api, const PGresult *res, const struct cred *c)
{
    char login[96], url[512];
    snprintf(login, sizeof login, "%s:%s", c->handle, c->token);
    snprintf(url, sizeof url, "%s/v1/%s", api->gateway_url, c->token);
    json_t *body =
        json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s}", "tenant_id",
                  (json_int_t)xg_pg_int64(res, 0, 0), "handle", c->handle, "token", c->token,
                  "login", login, "rpc_url", url, "gateway_url", api->gateway_url, "tier",
                  PQgetvalue(res, 0, 2), "valid_until", PQgetvalue(res, 0, 3), "valid_until_unix",
                  (json_int_t)xg_pg_int64(res, 0, 4), "token_notice", ROTATED_NOTICE);
    OPENSSL_cleanse(login, sizeof login);
    OPENSSL_cleanse(url, sizeof url);
    return body;
}

/* One attempt: true when the statement ran (*res: the row, or none for an unknown token);
 * false on a database error, *retry telling a handle collision (draw again) apart. */
static bool rotate_once(struct xg_pg *pg, const char *old_hash, const struct cred *c,
                        PGresult **res, bool *retry)
{
    *retry = false;
    const char *params[] = {old_hash, c->token_hash_hex, c->ha1_wrapped_hex, c->handle};
    *res = xg_pg_exec(pg, "bl_tenant_rotate", 4, params);
    if (*res)
        return true;
    *retry = strcmp(xg_pg_last_sqlstate(pg), SQLSTATE_UNIQUE) == 0;
    return false;
}

static enum xg_httpd_result rotate(const struct xg_httpd_request *req, struct xg_pg *pg,
                                   const char *old_hash)
{
    struct api *api = api_of(req);
    struct cred c;
    for (int attempt = 0; attempt < HANDLE_ATTEMPTS; attempt++) {
        PGresult *res = NULL;
        bool retry = false;
        if (!cred_new(&c, api->keys.ha1, api->realm))
            return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "cannot draw credentials");
        if (!rotate_once(pg, old_hash, &c, &res, &retry)) {
            cred_wipe(&c);
            if (retry)
                continue;
            return api_db_error(req, pg);
        }
        enum xg_httpd_result mr;
        if (PQntuples(res) != 1) {
            mr = api_error(req, BL_ERROR_UNKNOWN_TOKEN);
        } else {
            xg_log(XG_LOG_INFO, "tenant_token_rotated", "tenant %s", PQgetvalue(res, 0, 0));
            mr = xg_reply_json(req->conn, 200, rotated_json(api, res, &c));
        }
        PQclear(res);
        cred_wipe(&c);
        return mr;
    }
    return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "handle collisions, try again");
}

enum xg_httpd_result api_handle_tenant_rotate(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    char hash[TOKEN_HASH_HEX_SIZE];
    enum xg_httpd_result mr;
    enum bl_error e = api_bearer_token_hash(req, hash);
    if (e != BL_ERROR_COUNT)
        return api_error(req, e);
    if (!take_limit(req, &mr))
        return mr;
    struct xg_pg *pg = pgpool_get(api->pool);
    mr = rotate(req, pg, hash);
    pgpool_put(api->pool, pg);
    OPENSSL_cleanse(hash, sizeof hash);
    return mr;
}
