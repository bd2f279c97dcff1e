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
#include <stdlib.h>
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
    size_t batch_rows;
    char batch[24]; /* batch_rows as the queries' LIMIT */
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

/* One batch as read: the rows' new values (the plan of each row decided before the
 * transaction, so a retried transaction only repeats its UPDATEs). */
struct rewrap_batch {
    struct rewrap_run *run;
    const struct rewrap_table *t;
    PGresult *rows;                    /* id, handle, hex of the value read */
    char (*new_hex)[WRAPPED_HEX_SIZE]; /* "" where the row is not re-wrapped */
    long long rewrapped, changed;      /* this transaction's, reset when it is retried */
};

/* Decides one row; on HA1_REWRAP_WRAP writes its new value's hex. False when OpenSSL
 * cannot wrap. */
static bool plan_row(struct rewrap_batch *b, int r, struct rewrap_counts *c)
{
    const char *id = PQgetvalue(b->rows, r, 0), *handle = PQgetvalue(b->rows, r, 1),
               *old_hex = PQgetvalue(b->rows, r, 2);
    uint8_t old[TOKEN_HA1_WRAPPED_LEN], ha1[TOKEN_HA1_LEN], wrapped[TOKEN_HA1_WRAPPED_LEN];
    size_t len = strlen(old_hex) == 2 * sizeof old && xg_hex_decode(old_hex, old, sizeof old)
                     ? sizeof old
                     : 0;
    b->new_hex[r][0] = '\0';
    switch (ha1_rewrap_plan(b->run->keys, handle, old, len, ha1)) {
    case HA1_REWRAP_CURRENT:
        c->current++;
        return true;
    case HA1_REWRAP_UNWRAPPABLE:
        c->unwrappable++;
        xg_log(XG_LOG_WARN, "ha1_unwrappable",
               "%s %s (%s): its Digest HA1 unwraps under neither key; left alone", b->t->label, id,
               handle);
        return true;
    case HA1_REWRAP_WRAP:
        break;
    }
    bool ok = token_ha1_wrap(b->run->key, handle, ha1, wrapped);
    OPENSSL_cleanse(ha1, sizeof ha1);
    if (!ok) {
        fprintf(stderr, "xmrgate-billing rewrap-ha1: cannot wrap (OpenSSL)\n");
        return false;
    }
    xg_hex_encode(wrapped, sizeof wrapped, b->new_hex[r]);
    return true;
}

/* The batch's UPDATEs, in one transaction (one commit per batch, not per row). Each is
 * conditional on the value read: 0 rows means the row changed meanwhile. */
static enum xg_tx_result apply_batch(struct xg_pg *pg, void *ctx)
{
    struct rewrap_batch *b = ctx;
    b->rewrapped = b->changed = 0;
    for (int r = 0; r < PQntuples(b->rows); r++) {
        if (!b->new_hex[r][0])
            continue;
        const char *params[] = {PQgetvalue(b->rows, r, 0), PQgetvalue(b->rows, r, 2),
                                b->new_hex[r]};
        PGresult *res = xg_pg_exec(pg, b->t->update, 3, params);
        if (!res)
            return xg_pg_tx_classify(pg);
        if (strcmp(PQcmdTuples(res), "1") == 0)
            b->rewrapped++;
        else
            b->changed++; /* rotated (or provisioned) meanwhile: billing wrote it anew */
        PQclear(res);
    }
    return XG_TX_COMMIT;
}

/* Decides and writes one batch read into b->rows; false on a database or OpenSSL error. */
static bool rewrap_batch(struct rewrap_batch *b, struct rewrap_counts *c)
{
    int rows = PQntuples(b->rows);
    bool any = false;
    for (int r = 0; r < rows; r++) {
        if (!plan_row(b, r, c))
            return false;
        any = any || b->new_hex[r][0];
    }
    if (!any)
        return true;
    if (xg_pg_transaction(b->run->pg, NULL, apply_batch, b) != XG_TX_COMMIT) {
        fprintf(stderr, "xmrgate-billing rewrap-ha1: %s\n", xg_pg_last_error(b->run->pg));
        return false;
    }
    c->rewrapped += b->rewrapped;
    c->changed += b->changed;
    return true;
}

/* Walks one table in id order, a batch per query; false on a database or OpenSSL error. */
static bool rewrap_table_walk(struct rewrap_run *run, const struct rewrap_table *t,
                              struct rewrap_counts *c)
{
    char after[64];
    struct rewrap_batch b = {
        .run = run, .t = t, .new_hex = calloc(run->batch_rows, sizeof *b.new_hex)};
    bool ok = b.new_hex != NULL;
    if (!ok)
        fprintf(stderr, "xmrgate-billing rewrap-ha1: out of memory\n");
    snprintf(after, sizeof after, "%s", t->first_id);
    while (ok) {
        if (xg_stop_requested) {
            fprintf(stderr, "xmrgate-billing rewrap-ha1: stopped by a signal (run it again)\n");
            ok = false;
            break;
        }
        const char *params[] = {after, run->batch};
        b.rows = xg_pg_exec(run->pg, t->select, 2, params);
        if (!b.rows) {
            fprintf(stderr, "xmrgate-billing rewrap-ha1: %s\n", xg_pg_last_error(run->pg));
            ok = false;
            break;
        }
        int rows = PQntuples(b.rows);
        if (rows > (int)run->batch_rows) { /* the query's LIMIT is the batch */
            PQclear(b.rows);
            ok = false;
            break;
        }
        if (rows > 0)
            snprintf(after, sizeof after, "%s", PQgetvalue(b.rows, rows - 1, 0));
        ok = rewrap_batch(&b, c);
        PQclear(b.rows);
        if (rows == 0)
            break;
    }
    if (b.new_hex)
        OPENSSL_cleanse(b.new_hex, run->batch_rows * sizeof *b.new_hex);
    free(b.new_hex);
    return ok;
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
    run.batch_rows = (size_t)batch;
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
