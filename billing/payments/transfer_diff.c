/* transfer_diff — see transfer_diff.h. */
#include "payments/transfer_diff.h"

#include <stdlib.h>
#include <string.h>

static int cmp_row(const void *a, const void *b)
{
    const struct transfer_diff_row *x = a, *y = b;
    if (x->subaddr != y->subaddr)
        return x->subaddr < y->subaddr ? -1 : 1;
    return strcmp(x->txid, y->txid);
}

struct transfer_diff_row transfer_diff_row_of_transfer(const struct wallet_transfer *t,
                                                       int64_t wallet_height)
{
    struct transfer_diff_row r = {0};
    memcpy(r.txid, t->txid, sizeof r.txid);
    r.subaddr = t->subaddr_index;
    r.amount = t->amount;
    r.unlock_time = t->unlock_time > 0 ? t->unlock_time : 0;
    if (t->pool) {
        r.state = t->double_spend_seen ? INVOICE_PAY_DOUBLE_SPEND : INVOICE_PAY_POOL;
    } else {
        r.state = INVOICE_PAY_CONFIRMED;
        r.height = t->height;
        r.confirmations = wallet_height > t->height ? wallet_height - t->height : 1;
    }
    return r;
}

static bool same_row(const struct transfer_diff_row *a, const struct transfer_diff_row *b)
{
    return a->state == b->state && a->height == b->height && a->confirmations == b->confirmations &&
           a->amount == b->amount && a->unlock_time == b->unlock_time;
}

static bool superseded(const struct wallet_transfer *all, size_t n, const struct wallet_transfer *t)
{
    for (size_t i = 0; t->pool && i < n; i++)
        if (!all[i].pool && all[i].subaddr_index == t->subaddr_index &&
            strcmp(all[i].txid, t->txid) == 0)
            return true;
    return false;
}

/* The transfers as rows, sorted; NULL when out of memory. */
static struct transfer_diff_row *fetched_rows(const struct wallet_transfer *t, size_t n,
                                              int64_t wallet_height, size_t *count)
{
    struct transfer_diff_row *rows = calloc(n + 1, sizeof *rows);
    *count = 0;
    if (!rows)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (t[i].subaddr_index > 0 && !superseded(t, n, &t[i]))
            rows[(*count)++] = transfer_diff_row_of_transfer(&t[i], wallet_height);
    qsort(rows, *count, sizeof *rows, cmp_row);
    return rows;
}

struct transfer_diff_row *transfer_diff_compute(struct transfer_diff_row *stored, size_t nstored,
                                                const struct wallet_transfer *transfers,
                                                size_t ntransfers, int64_t wallet_height,
                                                size_t *count)
{
    size_t nfetched = 0;
    struct transfer_diff_row *fetched =
        fetched_rows(transfers, ntransfers, wallet_height, &nfetched);
    struct transfer_diff_row *writes = calloc(nfetched + nstored + 1, sizeof *writes);
    *count = 0;
    if (!fetched || !writes) {
        free(fetched);
        free(writes);
        return NULL;
    }
    if (nstored > 0) /* the C library wants a non-NULL base even for 0 elements */
        qsort(stored, nstored, sizeof *stored, cmp_row);
    for (size_t i = 0; i < nfetched; i++) {
        const struct transfer_diff_row *old =
            nstored > 0 ? bsearch(&fetched[i], stored, nstored, sizeof *stored, cmp_row) : NULL;
        if (old) /* a double spend seen once stays seen (invoice.h) */
            fetched[i].state = invoice_pay_state_after(old->state, fetched[i].state);
        if (!old || !same_row(old, &fetched[i]))
            writes[(*count)++] = fetched[i];
    }
    for (size_t i = 0; i < nstored; i++) {
        if (!bsearch(&stored[i], fetched, nfetched, sizeof *fetched, cmp_row)) {
            writes[*count] = stored[i];
            writes[(*count)++].gone = true;
        }
    }
    free(fetched);
    qsort(writes, *count, sizeof *writes, cmp_row);
    return writes;
}
