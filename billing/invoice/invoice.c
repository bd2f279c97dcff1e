/* invoice — see invoice.h. */
#include "invoice/invoice.h"

#include <assert.h>
#include <string.h>

/* monerod reads unlock_time below this as a block height, from it as a unix time */
#define INVOICE_UNLOCK_TIME_IS_TIME 500000000

static const char *const state_names[] = {
    [INVOICE_PENDING] = "pending",         [INVOICE_SEEN] = "seen",
    [INVOICE_CONFIRMING] = "confirming",   [INVOICE_PAID] = "paid",
    [INVOICE_PROVISIONED] = "provisioned", [INVOICE_UNDERPAID] = "underpaid",
    [INVOICE_EXPIRED] = "expired",         [INVOICE_LATE] = "late",
    [INVOICE_REVERTED] = "reverted",
};
#define STATE_COUNT (sizeof state_names / sizeof state_names[0])

static const char *const pay_state_names[] = {
    [INVOICE_PAY_POOL] = "pool",
    [INVOICE_PAY_CONFIRMED] = "confirmed",
    [INVOICE_PAY_GONE] = "gone",
    [INVOICE_PAY_DOUBLE_SPEND] = "double_spend",
};
#define PAY_STATE_COUNT (sizeof pay_state_names / sizeof pay_state_names[0])

const char *invoice_state_name(enum invoice_state s)
{
    return (size_t)s < STATE_COUNT ? state_names[s] : "unknown";
}

bool invoice_state_parse(const char *text, enum invoice_state *out)
{
    for (size_t i = 0; text && i < STATE_COUNT; i++) {
        if (strcmp(text, state_names[i]) == 0) {
            *out = (enum invoice_state)i;
            return true;
        }
    }
    return false;
}

const char *invoice_pay_state_name(enum invoice_pay_state s)
{
    return (size_t)s < PAY_STATE_COUNT ? pay_state_names[s] : "unknown";
}

bool invoice_pay_state_parse(const char *text, enum invoice_pay_state *out)
{
    for (size_t i = 0; text && i < PAY_STATE_COUNT; i++) {
        if (strcmp(text, pay_state_names[i]) == 0) {
            *out = (enum invoice_pay_state)i;
            return true;
        }
    }
    return false;
}

enum invoice_pay_state invoice_pay_state_after(enum invoice_pay_state stored,
                                               enum invoice_pay_state seen)
{
    return stored == INVOICE_PAY_DOUBLE_SPEND && seen == INVOICE_PAY_POOL ? stored : seen;
}

bool invoice_state_open(enum invoice_state s)
{
    switch (s) {
    case INVOICE_PENDING:
    case INVOICE_SEEN:
    case INVOICE_CONFIRMING:
    case INVOICE_PAID:
    case INVOICE_UNDERPAID:
    case INVOICE_REVERTED:
        return true;
    case INVOICE_PROVISIONED:
    case INVOICE_EXPIRED:
    case INVOICE_LATE:
        return false;
    }
    return false;
}

/* p * 100 >= amount * 98  <=>  p >= amount - floor(amount / 50): no product, no overflow. */
int64_t invoice_min_accepted(int64_t amount)
{
    assert(amount >= 0);
    return amount - amount / 50;
}

bool invoice_time_locked(int64_t unlock_time, int64_t chain_height, int64_t now)
{
    if (unlock_time <= 0)
        return false;
    if (unlock_time < INVOICE_UNLOCK_TIME_IS_TIME)
        return unlock_time > chain_height;
    return unlock_time > now;
}

/* Total money never exceeds int64 for real payments; saturate rather than wrap anyway. */
static int64_t add_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static bool is_live(const struct invoice_payment *p)
{
    return p->state == INVOICE_PAY_POOL || p->state == INVOICE_PAY_CONFIRMED;
}

static bool counts(const struct invoice_input *in, const struct invoice_payment *p)
{
    return is_live(p) && !invoice_time_locked(p->unlock_time, in->chain_height, in->now) &&
           p->first_seen <= add_sat(in->expires_at, in->late_grace);
}

static int64_t confirmations_of(const struct invoice_payment *p)
{
    return p->state == INVOICE_PAY_CONFIRMED && p->confirmations > 0 ? p->confirmations : 0;
}

/* Sum of the counted payments with at least k confirmations. */
static int64_t counted_with_at_least(const struct invoice_input *in, int64_t k)
{
    int64_t sum = 0;
    for (size_t i = 0; i < in->npayments; i++) {
        const struct invoice_payment *p = &in->payments[i];
        if (counts(in, p) && confirmations_of(p) >= k)
            sum = add_sat(sum, p->amount);
    }
    return sum;
}

/* The largest k whose payments cover `need` (the caller knows all counted ones do). */
static int64_t covering_confirmations(const struct invoice_input *in, int64_t need)
{
    int64_t best = 0;
    for (size_t i = 0; i < in->npayments; i++) {
        const struct invoice_payment *p = &in->payments[i];
        int64_t k = confirmations_of(p);
        if (counts(in, p) && k > best && counted_with_at_least(in, k) >= need)
            best = k;
    }
    return best;
}

static int64_t min_counted_confirmations(const struct invoice_input *in)
{
    int64_t min = -1;
    for (size_t i = 0; i < in->npayments; i++) {
        const struct invoice_payment *p = &in->payments[i];
        if (counts(in, p) && (min < 0 || confirmations_of(p) < min))
            min = confirmations_of(p);
    }
    return min < 0 ? 0 : min;
}

struct tally {
    int64_t received, paid;
    bool any_gone;        /* something seen once has left the pool or the chain */
    bool any_late;        /* a counted payment was first seen after expires_at   */
    bool any_after_grace; /* a live payment was first seen after the grace period */
};

static struct tally tally_payments(const struct invoice_input *in)
{
    struct tally t = {0};
    int64_t grace_end = add_sat(in->expires_at, in->late_grace);
    for (size_t i = 0; i < in->npayments; i++) {
        const struct invoice_payment *p = &in->payments[i];
        assert(p->amount >= 0);
        if (p->state == INVOICE_PAY_GONE || p->state == INVOICE_PAY_DOUBLE_SPEND)
            t.any_gone = true;
        if (!is_live(p))
            continue;
        t.received = add_sat(t.received, p->amount);
        if (p->first_seen > grace_end)
            t.any_after_grace = true;
        if (!counts(in, p))
            continue;
        t.paid = add_sat(t.paid, p->amount);
        if (p->first_seen > in->expires_at)
            t.any_late = true;
    }
    return t;
}

static void decide_covered(const struct invoice_input *in, const struct tally *t,
                           struct invoice_outcome *out)
{
    out->confirmations = covering_confirmations(in, invoice_min_accepted(in->amount));
    out->remaining = 0;
    if (t->any_late)
        out->late = INVOICE_LATE_HONOURED;
    if (out->confirmations >= in->confirmations_required) {
        out->state = INVOICE_PAID;
        out->provision = true;
    } else if (t->any_late) {
        out->state = INVOICE_LATE;
    } else {
        out->state = out->confirmations == 0 ? INVOICE_SEEN : INVOICE_CONFIRMING;
    }
}

static void decide_short(const struct invoice_input *in, const struct tally *t,
                         struct invoice_outcome *out)
{
    bool past_deadline = in->now > in->expires_at;
    bool past_grace = in->now > add_sat(in->expires_at, in->late_grace);
    out->confirmations = min_counted_confirmations(in);
    out->remaining = in->amount - t->paid;
    if (t->any_after_grace || (t->any_late && past_grace)) {
        out->state = INVOICE_LATE;
        out->late = INVOICE_LATE_OPERATOR;
    } else if (t->any_late) {
        out->state = INVOICE_LATE; /* still within the grace period: more may come */
        out->late = INVOICE_LATE_HONOURED;
    } else if (t->paid > 0) {
        out->state = past_grace ? INVOICE_EXPIRED : INVOICE_UNDERPAID;
    } else if (past_deadline) {
        out->state = INVOICE_EXPIRED;
    } else {
        out->state = t->any_gone ? INVOICE_REVERTED : INVOICE_PENDING;
    }
}

struct invoice_outcome invoice_evaluate(const struct invoice_input *in)
{
    assert(in->amount >= 0 && in->confirmations_required >= 0 && in->late_grace >= 0);
    struct invoice_outcome out = {.state = in->current};
    struct tally t = tally_payments(in);
    out.received = t.received;
    out.paid = t.paid;
    out.overpaid = t.paid > in->amount ? t.paid - in->amount : 0;
    if (t.paid >= invoice_min_accepted(in->amount))
        decide_covered(in, &t, &out);
    else
        decide_short(in, &t, &out);
    if (in->current == INVOICE_PROVISIONED) {
        out.state = INVOICE_PROVISIONED;
        out.provision = false;
        out.remaining = 0;
    }
    return out;
}
