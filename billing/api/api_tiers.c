/* GET /api/tiers — the public plans, with each price per month in its own currency and,
 * when a fresh rate is held, its current XMR quote (for fiat prices). */
#include "api/api_tiers.h"

#include "api/api_shared.h"
#include "xg_reply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 500 with exponent 2 → "5.00" */
static void format_minor(int64_t minor, int exponent, char *out, size_t len)
{
    int64_t scale = 1;
    for (int i = 0; i < exponent; i++)
        scale *= 10;
    if (exponent == 0)
        snprintf(out, len, "%lld", (long long)minor);
    else
        snprintf(out, len, "%lld.%0*lld", (long long)(minor / scale), exponent,
                 (long long)(minor % scale));
}

static json_t *quote_json(struct api *api, const char *currency, int64_t price_minor)
{
    int64_t rate = 0, piconero;
    bool xmr = strcmp(currency, "XMR") == 0;
    if (!xmr && !price_source_rate(api->prices, currency, &rate))
        return json_null();
    if (!price_quote(currency, price_minor, 1, rate, &piconero))
        return json_null();
    char amount[24], text[PRICE_XMR_TEXT_SIZE];
    snprintf(amount, sizeof amount, "%lld", (long long)piconero);
    price_format_xmr(piconero, text);
    return json_pack("{s:s, s:s}", "amount", amount, "amount_xmr", text);
}

static json_t *tier_json(struct api *api, const PGresult *res, int row)
{
    const char *currency = PQgetvalue(res, row, 4);
    int64_t minor = strtoll(PQgetvalue(res, row, 5), NULL, 10);
    char price[48];
    if (strcmp(currency, "XMR") == 0)
        price_format_xmr(minor, price);
    else
        format_minor(minor, price_minor_exponent(currency), price, sizeof price);
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:{s:s, s:s}, s:o, s:I, s:I, s:b}", "id",
                     PQgetvalue(res, row, 0), "name", PQgetvalue(res, row, 1), "burst_rps",
                     (json_int_t)strtoll(PQgetvalue(res, row, 2), NULL, 10), "burst_size",
                     (json_int_t)strtoll(PQgetvalue(res, row, 8), NULL, 10), "daily_quota",
                     (json_int_t)strtoll(PQgetvalue(res, row, 3), NULL, 10), "price_per_month",
                     "currency", currency, "amount", price, "quote_per_month",
                     quote_json(api, currency, minor), "confirmations",
                     (json_int_t)strtoll(PQgetvalue(res, row, 6), NULL, 10), "max_months",
                     (json_int_t)strtoll(PQgetvalue(res, row, 7), NULL, 10), "free", minor == 0);
}

enum xg_httpd_result api_handle_tiers(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    struct xg_pg *pg = pgpool_get(api->pool);
    PGresult *res = xg_pg_exec(pg, "bl_tiers_public", 0, NULL);
    if (!res) {
        enum xg_httpd_result r = api_db_error(req, pg);
        pgpool_put(api->pool, pg);
        return r;
    }
    pgpool_put(api->pool, pg);
    json_t *tiers = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(tiers, tier_json(api, res, i));
    PQclear(res);
    return xg_reply_json(req->conn, 200, json_pack("{s:o}", "tiers", tiers));
}
