/* GET /api/tenant — with Authorization: Bearer <token>: the tenant's tier, valid_until
 * and today's usage against its daily quota, for the renew page. Read from PostgreSQL
 * (the gateways flush their counters there), so the page needs no cross-origin call to
 * the gateway. 401 without a bearer token, 404 for a token that is no tenant's. */
#include "api/api_tenant.h"

#include "api/api_shared.h"
#include "core/credentials.h"
#include "xg_reply.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static json_t *num(const PGresult *res, int col)
{
    return json_integer((json_int_t)strtoll(PQgetvalue(res, 0, col), NULL, 10));
}

static json_t *tenant_json(const PGresult *res)
{
    bool is_true[2] = {strcmp(PQgetvalue(res, 0, 7), "t") == 0,
                       strcmp(PQgetvalue(res, 0, 9), "t") == 0};
    return json_pack("{s:s, s:{s:s, s:s, s:o, s:o, s:o, s:b}, s:s, s:s, s:b, s:{s:s, s:o, s:o}}",
                     "handle", PQgetvalue(res, 0, 0), "tier", "id", PQgetvalue(res, 0, 1), "name",
                     PQgetvalue(res, 0, 2), "burst_rps", num(res, 3), "burst_size", num(res, 11),
                     "daily_quota", num(res, 4), "free", is_true[1], "state", PQgetvalue(res, 0, 5),
                     "valid_until", PQgetvalue(res, 0, 6), "active",
                     is_true[0] && strcmp(PQgetvalue(res, 0, 5), "active") == 0, "usage_today",
                     "day", PQgetvalue(res, 0, 10), "used", num(res, 8), "quota", num(res, 4));
}

enum xg_httpd_result api_handle_tenant(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    char hash[TOKEN_HASH_HEX_SIZE];
    enum bl_error e = api_bearer_token_hash(req, hash);
    if (e != BL_ERROR_COUNT)
        return api_error(req, e);
    const char *params[] = {hash};
    struct xg_pg *pg = pgpool_get(api->pool);
    PGresult *res = xg_pg_exec(pg, "bl_tenant_status", 1, params);
    enum xg_httpd_result mr;
    if (!res)
        mr = api_db_error(req, pg);
    else if (PQntuples(res) != 1)
        mr = api_error(req, BL_ERROR_UNKNOWN_TOKEN);
    else
        mr = xg_reply_json(req->conn, 200, tenant_json(res));
    PQclear(res);
    pgpool_put(api->pool, pg);
    OPENSSL_cleanse(hash, sizeof hash);
    return mr;
}
