/* pricing — see pricing.h. */
#include "core/pricing.h"

#include "xg_clock.h"
#include "xg_http.h"
#include "xg_log.h"

#include <ctype.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE_DECIMALS       8
#define RATE_MAX_INT_DIGITS 10
#define PRICE_MINOR_MAX     1000000000000000LL /* keeps the 128-bit numerator in range */
#define PATH_MAX_DEPTH      16

/* ---- exact decimal text ----------------------------------------------------------- */

bool price_parse_rate(const char *text, size_t len, int64_t *rate_e8)
{
    size_t i = 0, int_digits = 0, frac_digits = 0;
    int64_t v = 0;
    /* Stops one digit past the bound, before v could overflow. */
    for (; i < len && isdigit((unsigned char)text[i]) && int_digits <= RATE_MAX_INT_DIGITS;
         i++, int_digits++)
        v = v * 10 + (text[i] - '0');
    if (int_digits == 0 || int_digits > RATE_MAX_INT_DIGITS)
        return false;
    if (i < len && text[i] == '.') {
        i++;
        for (; i < len && isdigit((unsigned char)text[i]); i++, frac_digits++) {
            if (frac_digits < RATE_DECIMALS)
                v = v * 10 + (text[i] - '0');
        }
        if (frac_digits == 0)
            return false;
    }
    if (i != len)
        return false;
    for (size_t d = frac_digits < RATE_DECIMALS ? frac_digits : RATE_DECIMALS; d < RATE_DECIMALS;
         d++)
        v *= 10;
    if (v <= 0)
        return false;
    *rate_e8 = v;
    return true;
}

/* value / 10^decimals as decimal text with trailing fraction zeros trimmed */
static void format_fixed(int64_t value, int decimals, int64_t scale, char *out, size_t outlen)
{
    int64_t whole = value / scale, frac = value % scale;
    if (frac == 0) {
        snprintf(out, outlen, "%lld", (long long)whole);
        return;
    }
    int n = snprintf(out, outlen, "%lld.%0*lld", (long long)whole, decimals, (long long)frac);
    while (n > 0 && (size_t)n < outlen && out[n - 1] == '0')
        out[--n] = '\0';
}

void price_format_rate(int64_t rate_e8, char out[PRICE_RATE_TEXT_SIZE])
{
    format_fixed(rate_e8, RATE_DECIMALS, PRICE_RATE_SCALE, out, PRICE_RATE_TEXT_SIZE);
}

void price_format_xmr(int64_t piconero, char out[PRICE_XMR_TEXT_SIZE])
{
    format_fixed(piconero, 12, PRICE_PICONERO_PER_XMR, out, PRICE_XMR_TEXT_SIZE);
}

int price_minor_exponent(const char *currency)
{
    static const struct {
        const char *code;
        int exponent;
    } table[] = {{"XMR", 12}, {"JPY", 0}, {"KRW", 0}, {"CLP", 0}, {"VND", 0}, {"ISK", 0},
                 {"HUF", 2},  {"BHD", 3}, {"KWD", 3}, {"OMR", 3}, {"JOD", 3}, {"TND", 3}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(currency, table[i].code) == 0)
            return table[i].exponent;
    return 2;
}

bool price_fiat_to_piconero(int64_t price_minor, int exponent, int64_t rate_e8, int64_t *piconero)
{
    if (rate_e8 <= 0 || price_minor < 0 || price_minor > PRICE_MINOR_MAX || exponent < 0 ||
        exponent > 4)
        return false;
    unsigned __int128 num = (unsigned __int128)price_minor * PRICE_PICONERO_PER_XMR *
                            (unsigned __int128)PRICE_RATE_SCALE;
    unsigned __int128 den = (unsigned __int128)rate_e8;
    for (int i = 0; i < exponent; i++)
        den *= 10;
    unsigned __int128 q = (num + den - 1) / den; /* round up: never short the merchant */
    if (q > (unsigned __int128)INT64_MAX)
        return false;
    *piconero = (int64_t)q;
    return true;
}

bool price_quote(const char *currency, int64_t price_minor, int64_t months, int64_t rate_e8,
                 int64_t *piconero)
{
    if (price_minor < 0 || months < 1 || price_minor > INT64_MAX / months)
        return false;
    int64_t total = price_minor * months;
    if (strcmp(currency, "XMR") == 0) {
        *piconero = total;
        return true;
    }
    return price_fiat_to_piconero(total, price_minor_exponent(currency), rate_e8, piconero);
}

/* The two monthly prices in one unit: minor units of a shared currency, else piconero. */
static bool carry_prices(const struct price_carry_input *in, int64_t *old_unit, int64_t *new_unit)
{
    bool old_xmr = strcmp(in->old_currency, "XMR") == 0;
    bool new_xmr = strcmp(in->new_currency, "XMR") == 0;
    if (strcmp(in->old_currency, in->new_currency) == 0) {
        *old_unit = in->old_minor;
        *new_unit = in->new_minor;
        return true;
    }
    if (!old_xmr && !new_xmr) /* one rate cannot convert two fiat currencies */
        return false;
    return price_quote(in->old_currency, in->old_minor, 1, in->rate_e8, old_unit) &&
           price_quote(in->new_currency, in->new_minor, 1, in->rate_e8, new_unit);
}

bool price_carry(const struct price_carry_input *in, int64_t *carried)
{
    int64_t old_unit, new_unit;
    if (in->remaining <= 0) {
        *carried = 0;
        return true;
    }
    if (strcmp(in->old_tier, in->new_tier) == 0) { /* a renewal: the time stays as it is */
        *carried = in->remaining;
        return true;
    }
    if (in->old_minor == 0) { /* time nobody paid for is worth nothing on a paid tier */
        *carried = 0;
        return true;
    }
    if (in->new_minor <= 0 || !carry_prices(in, &old_unit, &new_unit) || new_unit <= 0)
        return false;
    unsigned __int128 q = (unsigned __int128)in->remaining * (unsigned __int128)old_unit /
                          (unsigned __int128)new_unit;
    if (q > (unsigned __int128)INT64_MAX)
        return false;
    *carried = (int64_t)q;
    return true;
}

/* ---- a JSON value's raw text at a path ----------------------------------------------
 * The document is validated by jansson first; this scanner only walks valid JSON, to
 * read a number's exact characters, which jansson would turn into a double. */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* p at '"': returns the char after the closing quote */
static const char *skip_string(const char *p)
{
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    return *p ? p + 1 : p;
}

static const char *skip_value(const char *p)
{
    p = skip_ws(p);
    if (*p == '"')
        return skip_string(p);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        do {
            if (*p == '"') {
                p = skip_string(p);
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if (*p == '}' || *p == ']')
                depth--;
            p++;
        } while (*p && depth > 0);
        return p;
    }
    while (*p && *p != ',' && *p != '}' && *p != ']' && !isspace((unsigned char)*p))
        p++;
    return p;
}

/* Within the object at p ('{'), returns the value of member `key` (raw comparison). */
static const char *object_member(const char *p, const char *key, size_t keylen)
{
    p = skip_ws(p + 1);
    while (*p == '"') {
        const char *k = p + 1, *end = skip_string(p);
        bool match = (size_t)(end - 1 - k) == keylen && memcmp(k, key, keylen) == 0;
        p = skip_ws(skip_ws(end) + 1); /* past ':' */
        if (match)
            return p;
        p = skip_ws(skip_value(p));
        if (*p == ',')
            p = skip_ws(p + 1);
    }
    return NULL;
}

static const char *array_element(const char *p, const char *seg, size_t seglen)
{
    size_t index = 0;
    for (size_t i = 0; i < seglen; i++) {
        if (!isdigit((unsigned char)seg[i]) || index > 100000)
            return NULL;
        index = index * 10 + (size_t)(seg[i] - '0');
    }
    p = skip_ws(p + 1);
    for (size_t i = 0; *p && *p != ']'; i++) {
        if (i == index)
            return p;
        p = skip_ws(skip_value(p));
        if (*p == ',')
            p = skip_ws(p + 1);
    }
    return NULL;
}

static const char *walk_path(const char *p, const char *path)
{
    p = skip_ws(p);
    for (int depth = 0; *path && p && depth < PATH_MAX_DEPTH; depth++) {
        const char *dot = strchr(path, '.');
        size_t seglen = dot ? (size_t)(dot - path) : strlen(path);
        if (*p == '{')
            p = object_member(p, path, seglen);
        else if (*p == '[')
            p = array_element(p, path, seglen);
        else
            return NULL;
        path += seglen + (dot ? 1 : 0);
    }
    return *path ? NULL : p;
}

static bool copy_value_text(const char *p, char *out, size_t outlen)
{
    const char *start = p, *end;
    if (*p == '"') {
        start = p + 1;
        end = skip_string(p) - 1;
        if (memchr(start, '\\', (size_t)(end - start)))
            return false;
    } else if (*p == '-' || isdigit((unsigned char)*p)) {
        end = skip_value(p);
    } else {
        return false;
    }
    size_t n = (size_t)(end - start);
    if (n + 1 > outlen)
        return false;
    memcpy(out, start, n);
    out[n] = '\0';
    return true;
}

bool price_json_number_text(const char *json, const char *path, char *out, size_t outlen)
{
    json_error_t jerr;
    json_t *doc = json_loads(json, JSON_DECODE_ANY, &jerr);
    if (!doc)
        return false;
    json_decref(doc);
    const char *p = walk_path(json, path);
    return p && copy_value_text(p, out, outlen);
}

/* ---- the rate source ------------------------------------------------------------- */

struct price_source {
    char *url, *path, *currency;
    int64_t refresh_ms, max_age_ms, timeout_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    int64_t rate_e8;       /* 0 until the first fetch succeeded */
    int64_t fetched_at_ms; /* monotonic                         */
    char last_error[256];
};

/* One fetch; returns the rate or 0 with the reason in err. */
static int64_t fetch_rate(struct price_source *src, struct xg_http_client *http, char *err,
                          size_t errlen)
{
    struct xg_http_response res;
    char text[64];
    int64_t rate = 0;
    if (!xg_http_request(http, "GET", src->url, NULL, NULL, 0, src->timeout_ms, &res)) {
        snprintf(err, errlen, "rate source unreachable: %.200s", res.error);
    } else if (res.status != 200 || !res.body) {
        snprintf(err, errlen, "rate source answered HTTP %ld", res.status);
    } else if (!price_json_number_text(res.body, src->path, text, sizeof text)) {
        snprintf(err, errlen, "rate source: no number at path \"%s\"", src->path);
    } else if (!price_parse_rate(text, strlen(text), &rate)) {
        snprintf(err, errlen, "rate source: \"%s\" is not a positive decimal", text);
        rate = 0;
    }
    xg_http_response_clear(&res);
    return rate;
}

static void *source_main(void *arg)
{
    struct price_source *src = arg;
    struct xg_http_client *http = xg_http_client_new();
    pthread_mutex_lock(&src->lock);
    while (!src->stopping && http) {
        pthread_mutex_unlock(&src->lock);
        char err[256] = "";
        int64_t rate = fetch_rate(src, http, err, sizeof err);
        pthread_mutex_lock(&src->lock);
        if (rate > 0) {
            src->rate_e8 = rate;
            src->fetched_at_ms = xg_monotonic_ms();
            src->last_error[0] = '\0';
        } else {
            xg_log(XG_LOG_WARN, "rate_fetch_failed", "%s", err);
            snprintf(src->last_error, sizeof src->last_error, "%s", err);
        }
        struct timespec until = xg_monotonic_deadline(src->refresh_ms);
        while (!src->stopping && pthread_cond_timedwait(&src->wake, &src->lock, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&src->lock);
    xg_http_client_free(http);
    return NULL;
}

static void source_free(struct price_source *src)
{
    free(src->url);
    free(src->path);
    free(src->currency);
    pthread_mutex_destroy(&src->lock);
    pthread_cond_destroy(&src->wake);
    free(src);
}

struct price_source *price_source_start(const struct price_source_options *opt)
{
    struct price_source *src = calloc(1, sizeof *src);
    if (!src)
        return NULL;
    pthread_mutex_init(&src->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&src->wake, &attr);
    pthread_condattr_destroy(&attr);
    src->url = strdup(opt->url);
    src->path = strdup(opt->path);
    src->currency = strdup(opt->currency);
    src->refresh_ms = opt->refresh_ms;
    src->max_age_ms = opt->max_age_ms;
    src->timeout_ms = opt->timeout_ms;
    if (!src->url || !src->path || !src->currency) {
        source_free(src);
        return NULL;
    }
    if (*src->url && pthread_create(&src->thread, NULL, source_main, src) != 0) {
        source_free(src);
        return NULL;
    }
    return src;
}

void price_source_stop(struct price_source *src)
{
    if (!src)
        return;
    if (*src->url) {
        pthread_mutex_lock(&src->lock);
        src->stopping = true;
        pthread_cond_signal(&src->wake);
        pthread_mutex_unlock(&src->lock);
        pthread_join(src->thread, NULL);
    }
    source_free(src);
}

bool price_source_rate(struct price_source *src, const char *currency, int64_t *rate_e8)
{
    if (!*src->url || strcmp(currency, src->currency) != 0)
        return false;
    pthread_mutex_lock(&src->lock);
    bool fresh = src->rate_e8 > 0 && xg_monotonic_ms() - src->fetched_at_ms <= src->max_age_ms;
    if (fresh)
        *rate_e8 = src->rate_e8;
    pthread_mutex_unlock(&src->lock);
    return fresh;
}

int64_t price_source_age_ms(struct price_source *src)
{
    if (!src || !*src->url)
        return -1;
    pthread_mutex_lock(&src->lock);
    int64_t age = src->rate_e8 > 0 ? xg_monotonic_ms() - src->fetched_at_ms : -1;
    pthread_mutex_unlock(&src->lock);
    return age;
}

bool price_source_ready(struct price_source *src, char *reason, size_t len)
{
    int64_t rate;
    if (!*src->url || price_source_rate(src, src->currency, &rate))
        return true;
    pthread_mutex_lock(&src->lock);
    snprintf(reason, len, "no %s rate younger than %lld s%s%s", src->currency,
             (long long)(src->max_age_ms / 1000), *src->last_error ? ": " : "", src->last_error);
    pthread_mutex_unlock(&src->lock);
    return false;
}
