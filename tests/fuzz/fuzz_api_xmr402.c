/* Fuzzes the bodies of billing's XMR402 endpoints: parse_challenge_body for
 * POST /api/xmr402/challenge ({"tier"}, billing/api/api_xmr402_challenge.c) and
 * parse_verify_body for POST /api/xmr402/verify ({"txid", "proof", "invoice"?},
 * billing/api/api_xmr402_verify.c), the request the gateway relays from an agent. The
 * input is the body as libmicrohttpd hands it on (NUL-terminated; NULL when empty), given
 * to both.
 *
 * Includes both endpoint files to reach their static parsers. The state structs are zeroed
 * first, as the endpoints allocate them.
 *
 * Properties checked:
 *   - an accepted challenge names a tier id of 1..39 bytes;
 *   - an accepted proof request has a 64-digit lower-case hex txid, an "OutProofV" +
 *     base58 proof of at most PROOF_MAX bytes, an invoice that is a UUID or "";
 *   - a refusal of either says why. */
#include "fuzz.h"

#include "api/api_xmr402_challenge.c"
#include "api/api_xmr402_verify.c"

static const char base58_alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

static void check_challenge(const char *body)
{
    struct challenge c = {0};
    char msg[256] = "";
    if (parse_challenge_body(body, &c, msg, sizeof msg))
        FUZZ_CHECK(strlen(c.tier) >= 1 && strlen(c.tier) < sizeof c.tier);
    else
        FUZZ_CHECK(msg[0] != '\0');
}

static void check_verify(const char *body)
{
    struct verify *v = calloc(1, sizeof *v);
    if (!v)
        abort();
    char msg[256] = "";
    if (parse_verify_body(body, v, msg, sizeof msg)) {
        FUZZ_CHECK(strlen(v->txid) == 64 && strspn(v->txid, "0123456789abcdef") == 64);
        size_t n = strlen(v->proof);
        FUZZ_CHECK(n >= 9 && n <= PROOF_MAX && strncmp(v->proof, "OutProofV", 9) == 0);
        FUZZ_CHECK(strspn(v->proof + 9, base58_alphabet) == n - 9);
        FUZZ_CHECK(v->invoice[0] == '\0' || xg_str_is_uuid(v->invoice));
    } else {
        FUZZ_CHECK(msg[0] != '\0');
    }
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = fuzz_cstr(data, size);
    check_challenge(size ? body : NULL);
    check_verify(size ? body : NULL);
    free(body);
    return 0;
}
