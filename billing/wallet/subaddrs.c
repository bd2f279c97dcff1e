/* subaddrs — see subaddrs.h. */
#include "wallet/subaddrs.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

int64_t subaddrs_to_create(int64_t wallet_last, int64_t db_max)
{
    int64_t missing = db_max - wallet_last;
    if (missing <= 0)
        return 0;
    return missing < SUBADDRS_BATCH_MAX ? missing : SUBADDRS_BATCH_MAX;
}

bool subaddrs_last_created(const json_t *result, int64_t *last)
{
    int64_t best = -1;
    const json_t *indices = json_object_get(result, "address_indices"), *v;
    size_t i;
    json_array_foreach(indices, i, v)
    {
        if (json_is_integer(v) && json_integer_value(v) > best)
            best = json_integer_value(v);
    }
    const json_t *one = json_object_get(result, "address_index");
    if (best < 0 && json_is_integer(one))
        best = json_integer_value(one);
    if (best <= 0)
        return false;
    *last = best;
    return true;
}

static bool db_max_index(struct xg_pg *pg, int64_t *max, char *err, size_t errlen)
{
    PGresult *res = xg_pg_exec(pg, "bl_subaddress_max", 0, NULL);
    bool ok = res && PQntuples(res) == 1;
    if (ok)
        *max = xg_pg_int64(res, 0, 0);
    else
        snprintf(err, errlen, "the highest subaddress index: %s", xg_pg_last_error(pg));
    PQclear(res);
    return ok;
}

/* True when the wallet answers get_address for the index; a wallet that does not know it
 * answers an error ("address index is out of bound"), as does one that is down: the
 * create_address that follows tells them apart. */
static bool wallet_knows(struct wallet *w, int64_t index)
{
    char err[256];
    json_t *res = wallet_call(
        w, "get_address",
        json_pack("{s:i, s:[I]}", "account_index", 0, "address_index", (json_int_t)index), err,
        sizeof err);
    bool known = res != NULL;
    json_decref(res);
    return known;
}

/* create_address with count n; *last: the highest index made. */
static bool create(struct wallet *w, int64_t n, int64_t *last, char *err, size_t errlen)
{
    json_t *res = wallet_call(w, "create_address",
                              json_pack("{s:i, s:I, s:s}", "account_index", 0, "count",
                                        (json_int_t)n, "label", "xmrgate (re-created)"),
                              err, errlen);
    if (!res)
        return false;
    bool ok = subaddrs_last_created(res, last);
    if (!ok)
        snprintf(err, errlen, "create_address: an answer without the new index");
    json_decref(res);
    return ok;
}

bool subaddrs_ensure(struct wallet *w, struct xg_pg *pg, struct subaddrs_result *out, char *err,
                     size_t errlen)
{
    *out = (struct subaddrs_result){0};
    if (!db_max_index(pg, &out->db_max, err, errlen))
        return false;
    if (out->db_max <= 0 || wallet_knows(w, out->db_max))
        return true;
    /* One first, to learn where the wallet stands, then the rest in batches. */
    int64_t last = 0, n = 1;
    do {
        if (!create(w, n, &last, err, errlen))
            return false;
        out->created += n;
    } while ((n = subaddrs_to_create(last, out->db_max)) > 0);
    json_t *res = wallet_call(w, "rescan_blockchain", json_pack("{s:b}", "hard", 0),
                              out->rescan_error, sizeof out->rescan_error);
    if (res)
        out->rescan_error[0] = '\0';
    json_decref(res);
    out->rescanned = true;
    return true;
}
