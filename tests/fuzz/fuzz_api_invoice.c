/* Fuzzes the body of billing's POST /api/invoices (billing/api/api_invoice_create.c,
 * parse_body: tier, months, token, channel, and the request's fingerprint for
 * Idempotency-Key replays) and the Idempotency-Key rule. The input is the body as
 * libmicrohttpd hands it on (NUL-terminated; NULL when empty), and also the key.
 *
 * Includes api_invoice_create.c to reach its static parser (the endpoint's other
 * functions come along unused).
 *
 * Properties checked:
 *   - an accepted body gives a tier id that fits, a channel of "api" or "web", at least
 *     a month unless it said otherwise, and a fingerprint of 64 hex digits; a renewal
 *     carries the hash of its token; an accepted webhook_url is an http(s) URL of at most
 *     HOOK_SSRF_URL_MAX bytes without white space or control characters; a refusal has an
 *     error code and a message;
 *   - the fingerprint is the request's, not its writing: the same document indented,
 *     ASCII-escaped, with its keys reversed or sorted, or in white space, is accepted or
 *     refused alike and, accepted, has the same fingerprint;
 *   - an accepted Idempotency-Key is 1..255 printable ASCII characters without spaces. */
#include "fuzz.h"
#include "fuzz_json_variants.h"

#include "api/api_invoice_create.c"

#include <strings.h>

static bool parse(const char *body, struct create_req *cr, enum bl_error *code)
{
    char msg[256] = "";
    *cr = (struct create_req){0};
    *code = BL_ERROR_COUNT; /* none */
    bool ok = parse_body(body, cr, code, msg, sizeof msg);
    if (ok) {
        FUZZ_CHECK(strlen(cr->tier) < sizeof cr->tier);
        FUZZ_CHECK(strcmp(cr->channel, "api") == 0 || strcmp(cr->channel, "web") == 0);
        FUZZ_CHECK(strlen(cr->fingerprint) == 64 &&
                   strspn(cr->fingerprint, "0123456789abcdef") == 64);
        FUZZ_CHECK(!cr->renewal || strlen(cr->token_hash) == TOKEN_HASH_HEX_SIZE - 1);
        size_t n = strlen(cr->webhook_url);
        FUZZ_CHECK(n <= HOOK_SSRF_URL_MAX);
        FUZZ_CHECK(n == 0 || strncasecmp(cr->webhook_url, "http://", 7) == 0 ||
                   strncasecmp(cr->webhook_url, "https://", 8) == 0);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK((unsigned char)cr->webhook_url[i] > 0x20 &&
                       (unsigned char)cr->webhook_url[i] != 0x7f);
    } else {
        FUZZ_CHECK(*code < BL_ERROR_COUNT && msg[0] != '\0');
    }
    return ok;
}

static void check_variants(const char *body, const struct create_req *want)
{
    json_t *doc = json_loads(body, JSON_REJECT_DUPLICATES, NULL);
    FUZZ_CHECK(doc != NULL);
    for (int i = 0; i < FUZZ_JSON_VARIANTS; i++) {
        char *text = fuzz_json_variant(doc, i);
        FUZZ_CHECK(text != NULL);
        struct create_req cr;
        enum bl_error code;
        FUZZ_CHECK(parse(text, &cr, &code));
        FUZZ_CHECK(strcmp(cr.fingerprint, want->fingerprint) == 0);
        FUZZ_CHECK(strcmp(cr.tier, want->tier) == 0 && cr.months == want->months &&
                   cr.renewal == want->renewal && strcmp(cr.channel, want->channel) == 0);
        free(text);
    }
    json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = fuzz_cstr(data, size);
    struct create_req cr;
    enum bl_error code;
    if (parse(size ? body : NULL, &cr, &code))
        check_variants(body, &cr);
    if (idempotency_key_ok(body)) {
        size_t n = strlen(body);
        FUZZ_CHECK(n >= 1 && n <= IDEMPOTENCY_KEY_MAX);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(body[i] > ' ' && body[i] < 0x7f);
    }
    free(body);
    return 0;
}
