/* grant — see grant.h. */
#include "ops/grant.h"

#include "core/credentials.h"
#include "xg_log.h"
#include "xg_pg.h"
#include "xg_signal.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define GRANT_MAX_DAYS      36600
#define HANDLE_MAX_ATTEMPTS 5
#define SQLSTATE_UNIQUE     "23505"

static const char *const grant_queries[] = {"bl_tenant_grant", NULL};

struct grant_args {
    const char *tier;
    int64_t days;
};

static bool parse_args(int argc, char **argv, struct grant_args *a)
{
    static const struct option longopts[] = {{"tier", required_argument, NULL, 't'},
                                             {"days", required_argument, NULL, 'd'},
                                             {NULL, 0, NULL, 0}};
    int opt;
    optind = 0; /* glibc: 0 re-initialises the scan over a new argv */
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 't':
            a->tier = optarg;
            break;
        case 'd':
            if (!xg_parse_int(optarg, &a->days))
                return false;
            break;
        default:
            return false;
        }
    }
    return optind == argc && a->tier && a->days >= 1 && a->days <= GRANT_MAX_DAYS;
}

/* One attempt; *retry is set when the random handle collided with an existing one. */
static bool insert_tenant(struct xg_pg *pg, const struct grant_args *a, const struct cred *c,
                          bool *retry)
{
    char days[24];
    snprintf(days, sizeof days, "%lld", (long long)a->days);
    const char *params[] = {c->handle, c->token_hash_hex, c->ha1_wrapped_hex, a->tier, days};
    PGresult *res = xg_pg_exec(pg, "bl_tenant_grant", 5, params);
    *retry = false;
    if (!res) {
        *retry = strcmp(xg_pg_last_sqlstate(pg), SQLSTATE_UNIQUE) == 0;
        if (!*retry)
            fprintf(stderr, "xmrgate-billing grant: %s\n", xg_pg_last_error(pg));
        return false;
    }
    bool found = PQntuples(res) == 1;
    if (found)
        printf("TENANT_ID=%s\nHANDLE=%s\nTOKEN=%s\nVALID_UNTIL=%s\n", PQgetvalue(res, 0, 0),
               c->handle, c->token, PQgetvalue(res, 0, 1));
    else
        fprintf(stderr, "xmrgate-billing grant: no tier \"%s\"\n", a->tier);
    PQclear(res);
    return found;
}

int grant_main(const struct bl_config *cfg, int argc, char **argv)
{
    struct grant_args args = {0};
    uint8_t key[TOKEN_HA1_KEY_LEN];
    struct cred c;
    int status = 1;
    if (!parse_args(argc, argv, &args)) {
        fprintf(stderr,
                "usage: xmrgate-billing [--config FILE] grant --tier ID --days N "
                "(1..%d)\n",
                GRANT_MAX_DAYS);
        return 2;
    }
    if (!cred_parse_key(cfg->ha1_key, key))
        return 2; /* bl_config_load already checked it */
    struct xg_pg *pg = xg_pg_new(cfg->database_url, grant_queries);
    if (!pg || !xg_pg_connect(pg)) {
        fprintf(stderr, "xmrgate-billing grant: %s\n", pg ? xg_pg_last_error(pg) : "out of memory");
        goto out;
    }
    for (int attempt = 0; attempt < HANDLE_MAX_ATTEMPTS; attempt++) {
        bool retry;
        if (!cred_new(&c, key, cfg->realm)) {
            fprintf(stderr, "xmrgate-billing grant: cannot draw credentials\n");
            goto out;
        }
        bool ok = insert_tenant(pg, &args, &c, &retry);
        cred_wipe(&c);
        if (ok) {
            xg_log(XG_LOG_INFO, "tenant_granted", "tier %s for %lld days", args.tier,
                   (long long)args.days);
            status = 0;
            goto out;
        }
        if (!retry)
            goto out;
    }
    fprintf(stderr, "xmrgate-billing grant: handle collisions, giving up\n");
out:
    xg_pg_free(pg);
    return status;
}
