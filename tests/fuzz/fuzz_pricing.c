/* Fuzzes billing's reading of the rate source (billing/core/pricing.h) as fetch_rate runs it:
 * price_json_number_text finds the value at the configured path in the fetched document,
 * price_parse_rate turns its text into rate × 10^8, and price_quote converts a price with
 * it. The input's first line is the path, the rest the document.
 *
 * Properties checked:
 *   - the value price_json_number_text reads is the one jansson finds at that path (a
 *     number's text is that number, a string's text is that string): its own scanner
 *     reads what the validating parser read, never a neighbour's bytes;
 *   - a rate survives price_format_rate and price_parse_rate unchanged;
 *   - a fiat quote is rounded up, never down, and by less than one piconero. */
#include "fuzz.h"
#include "core/pricing.h"

#include <jansson.h>

#define FUZZ_PATH_DEPTH 16

/* jansson's value at a dotted path: object members by name, array elements by index. */
static json_t *value_at(json_t *doc, const char *path)
{
    json_t *v = doc;
    char seg[256];
    for (int depth = 0; *path && v; depth++) {
        if (depth == FUZZ_PATH_DEPTH)
            return NULL;
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof seg)
            return NULL;
        memcpy(seg, path, n);
        seg[n] = '\0';
        if (json_is_object(v)) {
            v = json_object_get(v, seg);
        } else if (json_is_array(v)) {
            char *end;
            if (n == 0 || strspn(seg, "0123456789") != n)
                return NULL;
            unsigned long long i = strtoull(seg, &end, 10);
            v = json_array_get(v, (size_t)i);
        } else {
            return NULL;
        }
        path += n + (dot ? 1 : 0);
    }
    return v;
}

/* A path as pricing.h describes them: names and indexes between single dots, no escapes
 * (an operator's setting: what other paths do is not specified). */
static bool plain_path(const char *path)
{
    size_t n = strlen(path);
    return n == 0 ||
           (path[0] != '.' && path[n - 1] != '.' && !strstr(path, "..") && !strpbrk(path, "\\\""));
}

static void check_text_is_value(const char *doc_text, const char *path, const char *text)
{
    if (!plain_path(path))
        return;
    json_t *doc = json_loads(doc_text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
    if (!doc)
        return; /* duplicate keys: which one is meant is not defined */
    json_t *v = value_at(doc, path);
    FUZZ_CHECK(v != NULL);
    if (json_is_string(v)) {
        FUZZ_CHECK(strcmp(json_string_value(v), text) == 0);
    } else {
        FUZZ_CHECK(json_is_number(v));
        json_t *parsed = json_loads(text, JSON_DECODE_ANY, NULL);
        FUZZ_CHECK(parsed != NULL && json_equal(parsed, v));
        json_decref(parsed);
    }
    json_decref(doc);
}

static void check_quote(int64_t rate_e8, int64_t price_minor, const char *currency)
{
    int64_t pico;
    if (!price_quote(currency, price_minor, 1, rate_e8, &pico))
        return;
    int exponent = price_minor_exponent(currency);
    unsigned __int128 num = (unsigned __int128)price_minor * PRICE_PICONERO_PER_XMR *
                            (unsigned __int128)PRICE_RATE_SCALE;
    unsigned __int128 den = (unsigned __int128)rate_e8;
    for (int i = 0; i < exponent; i++)
        den *= 10;
    unsigned __int128 got = (unsigned __int128)pico * den;
    FUZZ_CHECK(got >= num && got - num < den);
    char xmr[PRICE_XMR_TEXT_SIZE];
    price_format_xmr(pico, xmr);
    FUZZ_CHECK(strlen(xmr) > 0);
}

static void check_rate(const char *text)
{
    int64_t rate;
    if (!price_parse_rate(text, strlen(text), &rate))
        return;
    FUZZ_CHECK(rate > 0);
    char formatted[PRICE_RATE_TEXT_SIZE];
    price_format_rate(rate, formatted);
    int64_t again;
    FUZZ_CHECK(price_parse_rate(formatted, strlen(formatted), &again) && again == rate);
    static const int64_t prices[] = {1, 999, 123456789, 1000000000000000LL};
    static const char *const currencies[] = {"USD", "JPY", "KWD"};
    for (size_t i = 0; i < sizeof prices / sizeof prices[0]; i++)
        for (size_t j = 0; j < sizeof currencies / sizeof currencies[0]; j++)
            check_quote(rate, prices[i], currencies[j]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *f[2];
    char *buf = fuzz_fields(data, size, f, 2);
    char text[64];
    if (price_json_number_text(f[1], f[0], text, sizeof text)) {
        check_text_is_value(f[1], f[0], text);
        check_rate(text);
    }
    check_rate(f[1]);
    free(buf);
    return 0;
}
