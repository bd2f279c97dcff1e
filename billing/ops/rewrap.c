/* rewrap — see rewrap.h. */
#include "ops/rewrap.h"

#include "core/ha1_rewrap.h"
#include "xg_config.h"
#include "xg_hex.h"
#include "xg_log.h"
#include "xg_pg.h"
#include "xg_signal.h"

#include <getopt.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#define REWRAP_BATCH_DEFAULT 1000
#define REWRAP_BATCH_MAX     100000
#define WRAPPED_HEX_SIZE     (2 * TOKEN_HA1_WRAPPED_LEN + 1)

static const char *const rewrap_queries[] = {"bl_ha1_rewrap_tenants", "bl_ha1_rewrap_tenant",
                                             "bl_ha1_rewrap_invoices", "bl_ha1_rewrap_invoice",
                                             NULL};

/* One table the subcommand walks: its batch and update queries and where the walk starts. */
struct rewrap_table {
    const char *label; /* the prefix of the printed counts */
    const char *select, *update;
    const char *first_id; /* below every id */
};

static const struct rewrap_table rewrap_tables[] = {
    {"TENANTS", "bl_ha1_rewrap_tenants", "bl_ha1_rewrap_tenant", "0"},
    {"INVOICES", "bl_ha1_rewrap_invoices", "bl_ha1_rewrap_invoice",
     "00000000-0000-0000-0000-000000000000"},
};

struct rewrap_counts {
    long long rewrapped, current, unwrappable, changed;
};

struct rewrap_run {
    struct xg_pg *pg;
    const struct token_ha1_keys *keys;
    const uint8_t *key; /* the current key: every new wrap */
    char batch[24];
};

static bool parse_args(int argc, char **argv, int64_t *batch)
{
    static const struct option longopts[] = {{"batch", required_argument, NULL, 'b'},
                                             {NULL, 0, NULL, 0}};
    int opt;
    *batch = REWRAP_BATCH_DEFAULT;
    optind = 0; /* glibc: 0 re-initialises the scan over a new argv */
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (opt != 'b' || !xg_parse_int(optarg, batch))
            return false;
    }
    return optind == argc && *batch >= 1 && *batch <= REWRAP_BATCH_MAX;
}

/* Re-wraps one row read as (id, handle, hex) and writes it back if it is unchanged. */
static bool rewrap_row(struct rewrap_run *run, const struct rewrap_table *t, const char *id,
                       const char *handle, const char *old_hex, struct rewrap_counts *c)
{
    uint8_t old[TOKEN_HA1_WRAPPED_LEN], ha1[TOKEN_HA1_LEN], wrapped[TOKEN_HA1_WRAPPED_LEN];
    size_t len = strlen(old_hex) == 2 * sizeof old && xg_hex_decode(old_hex, old, sizeof old)
                     ? sizeof old
                     : 0;
    enum ha1_rewrap_action a = ha1_rewrap_plan(run->keys, handle, old, len, ha1);
    if (a == HA1_REWRAP_CURRENT) {
        c->current++;
        return true;
    }
    if (a == HA1_REWRAP_UNWRAPPABLE) {
        c->unwrappable++;
        xg_log(XG_LOG_WARN, "ha1_unwrappable",
               "%s %s (%s): its Digest HA1 unwraps under neither key; left alone", t->label, id,
               handle);
        return true;
    }
    char new_hex[WRAPPED_HEX_SIZE];
    bool ok = token_ha1_wrap(run->key, handle, ha1, wrapped);
    OPENSSL_cleanse(ha1, sizeof ha1);
    if (!ok) {
        fprintf(stderr, "xmrgate-billing rewrap-ha1: cannot wrap (OpenSSL)\n");
        return false;
    }
    xg_hex_encode(wrapped, sizeof wrapped, new_hex);
    const char *params[] = {id, old_hex, new_hex};
    PGresult *res = xg_pg_exec(run->pg, t->update, 3, params);
    if (!res) {
        fprintf(stderr, "xmrgate-billing rewrap-ha1: %s\n", xg_pg_last_error(run->pg));
        return false;
    }
    if (strcmp(PQcmdTuples(res), "1") == 0)
        c->rewrapped++;
    else
        c->changed++; /* rotated (or provisioned) meanwhile: billing wrote it anew */
    PQclear(res);
    return true;
}

/* Walks one table in id order, a batch per query; false on a database or OpenSSL error. */
static bool rewrap_table_walk(struct rewrap_run *run, const struct rewrap_table *t,
                              struct rewrap_counts *c)
{
    char after[64];
    snprintf(after, sizeof after, "%s", t->first_id);
    for (;;) {
        if (xg_stop_requested) {
            fprintf(stderr, "xmrgate-billing rewrap-ha1: stopped by a signal (run it again)\n");
            return false;
        }
        const char *params[] = {after, run->batch};
        PGresult *res = xg_pg_exec(run->pg, t->select, 2, params);
        if (!res) {
            fprintf(stderr, "xmrgate-billing rewrap-ha1: %s\n", xg_pg_last_error(run->pg));
            return false;
        }
        int rows = PQntuples(res);
        bool ok = true;
        for (int r = 0; ok && r < rows; r++)
            ok = rewrap_row(run, t, PQgetvalue(res, r, 0), PQgetvalue(res, r, 1),
                            PQgetvalue(res, r, 2), c);
        if (rows > 0)
            snprintf(after, sizeof after, "%s", PQgetvalue(res, rows - 1, 0));
        PQclear(res);
        if (!ok)
            return false;
        if (rows == 0)
            return true;
    }
}

int rewrap_main(const struct bl_config *cfg, int argc, char **argv)
{
    int64_t batch;
    uint8_t key[TOKEN_HA1_KEY_LEN], previous[TOKEN_HA1_KEY_LEN];
    struct token_ha1_keys keys = {0};
    struct xg_pg *pg = NULL;
    int status = 1;
    if (!parse_args(argc, argv, &batch)) {
        fprintf(stderr, "usage: xmrgate-billing [--config FILE] rewrap-ha1 [--batch N] (1..%d)\n",
                REWRAP_BATCH_MAX);
        return 2;
    }
    bool rotating = cfg->ha1_key_previous[0] != '\0';
    /* bl_config_load checked both keys */
    if (!xg_hex_decode(cfg->ha1_key, key, sizeof key) ||
        (rotating && !xg_hex_decode(cfg->ha1_key_previous, previous, sizeof previous)))
        return 2;
    keys.current = token_ha1_unwrapper_new(key);
    keys.previous = rotating ? token_ha1_unwrapper_new(previous) : NULL;
    if (!keys.current || (rotating && !keys.previous)) {
        fprintf(stderr, "xmrgate-billing rewrap-ha1: cannot set up the keys (OpenSSL)\n");
        goto out;
    }
    if (!rotating)
        fprintf(stderr, "xmrgate-billing rewrap-ha1: no [gateway] ha1_key_previous: counting "
                        "only, nothing to re-wrap\n");
    pg = xg_pg_new(cfg->database_url, rewrap_queries);
    if (!pg || !xg_pg_connect(pg)) {
        fprintf(stderr, "xmrgate-billing rewrap-ha1: %s\n",
                pg ? xg_pg_last_error(pg) : "out of memory");
        goto out;
    }
    struct rewrap_run run = {.pg = pg, .keys = &keys, .key = key};
    snprintf(run.batch, sizeof run.batch, "%lld", (long long)batch);
    for (size_t i = 0; i < sizeof rewrap_tables / sizeof rewrap_tables[0]; i++) {
        const struct rewrap_table *t = &rewrap_tables[i];
        struct rewrap_counts c = {0};
        if (!rewrap_table_walk(&run, t, &c))
            goto out;
        printf("%s_REWRAPPED=%lld\n%s_CURRENT=%lld\n%s_UNWRAPPABLE=%lld\n%s_CHANGED=%lld\n",
               t->label, c.rewrapped, t->label, c.current, t->label, c.unwrappable, t->label,
               c.changed);
        xg_log(XG_LOG_INFO, "ha1_rewrapped",
               "%s: %lld re-wrapped, %lld already current, %lld unwrappable, %lld changed "
               "meanwhile",
               t->label, c.rewrapped, c.current, c.unwrappable, c.changed);
    }
    status = 0;
out:
    xg_pg_free(pg);
    token_ha1_unwrapper_free(keys.current);
    token_ha1_unwrapper_free(keys.previous);
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(previous, sizeof previous);
    return status;
}
