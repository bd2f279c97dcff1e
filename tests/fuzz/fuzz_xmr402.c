/* Fuzzes the XMR402 credential parser (gateway/xmr402/xmr402.h): xmr402_parse_params over the
 * parameters after "Authorization: XMR402 ", with the largest proof any configuration
 * takes (max_proof 4096) and with a small one; and xmr402_agent_path over the same bytes
 * read as a request path. The input is the text, as is (a NUL-terminated copy).
 *
 * Properties checked:
 *   - an accepted credential is what xmr402.h promises: a 64-digit lower-case hex txid,
 *     an "OutProofV" + base58 proof within max_proof, an invoice that is a UUID or "";
 *     a refused one says why;
 *   - a smaller max_proof only refuses more: what it accepts, 4096 accepts the same;
 *   - an agent path is the request path's own tail after "/v1". */
#include "fuzz.h"
#include "xg_str.h"
#include "xmr402/xmr402.h"

#define FUZZ_SMALL_PROOF 100

static const char base58[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

static void check_accepted(const struct xmr402_auth *a, size_t max_proof)
{
    FUZZ_CHECK(strlen(a->txid) == XMR402_TXID_LEN &&
               strspn(a->txid, "0123456789abcdef") == XMR402_TXID_LEN);
    size_t n = strlen(a->proof);
    FUZZ_CHECK(n > 9 && n <= max_proof && strncmp(a->proof, "OutProofV", 9) == 0);
    FUZZ_CHECK(strspn(a->proof + 9, base58) == n - 9);
    FUZZ_CHECK(a->invoice[0] == '\0' || xg_str_is_uuid(a->invoice));
}

static bool parse(const char *text, size_t max_proof, struct xmr402_auth *out)
{
    const char *detail = NULL;
    bool ok = xmr402_parse_params(text, max_proof, out, &detail);
    if (ok)
        check_accepted(out, max_proof);
    else
        FUZZ_CHECK(detail != NULL && detail[0] != '\0');
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct xmr402_auth *full = malloc(sizeof *full), *small = malloc(sizeof *small);
    if (!full || !small)
        abort();
    bool full_ok = parse(text, XMR402_PROOF_LIMIT, full);
    bool small_ok = parse(text, FUZZ_SMALL_PROOF, small);
    if (small_ok)
        FUZZ_CHECK(full_ok && memcmp(full, small, sizeof *full) == 0);

    const char *agent = xmr402_agent_path(text);
    if (agent)
        FUZZ_CHECK(strncmp(text, "/v1/", 4) == 0 && agent == text + 3);
    (void)xmr402_tier_ok(text);
    free(full);
    free(small);
    free(text);
    return 0;
}
