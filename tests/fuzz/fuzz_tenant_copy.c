/* Fuzzes the gateway's full tenant load as pgsync reads it from COPY … (FORMAT binary)
 * (gateway/state/pgsync.h): the file header, then one tuple per buffer. The input is one
 * buffer as libpq hands it over: the header (when the first byte's low bit is set) and a
 * tuple.
 *
 * Properties checked:
 *   - a header length is 0 or within the buffer, and at least the fixed header;
 *   - a tuple is a row, the trailer (exactly two bytes) or malformed, never a read past
 *     the buffer (ASan);
 *   - a row keeps the bounds every tenant has: a positive id, a NUL-terminated handle and
 *     tier within their limits, a positive rate, burst size and quota. */
#include "fuzz.h"
#include "state/pgsync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t raw_key[TOKEN_HA1_KEY_LEN] = {7};
    static struct token_ha1_unwrapper *key; /* set up once, reused as the load reuses it */
    if (!key)
        key = token_ha1_unwrapper_new(raw_key);
    FUZZ_CHECK(key != NULL);
    if (size < 1)
        return 0;
    bool with_header = data[0] & 1;
    /* An exact-size copy, so a read past the end shows under ASan. */
    size_t len = size - 1;
    char *buf = malloc(len ? len : 1);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, data + 1, len);
    size_t skip = 0;
    if (with_header) {
        skip = pgsync_copy_header_len(buf, len);
        FUZZ_CHECK(skip == 0 || (skip >= 19 && skip <= len));
    }
    struct tenant_row row;
    enum pgsync_copy r = pgsync_parse_copy_row(buf + skip, len - skip, key, &row);
    FUZZ_CHECK(r == PGSYNC_COPY_ROW || r == PGSYNC_COPY_END || r == PGSYNC_COPY_BAD);
    if (r == PGSYNC_COPY_END)
        FUZZ_CHECK(len - skip == 2);
    if (r == PGSYNC_COPY_ROW) {
        FUZZ_CHECK(row.id > 0);
        FUZZ_CHECK(memchr(row.handle, '\0', sizeof row.handle) != NULL);
        FUZZ_CHECK(memchr(row.tier_id, '\0', sizeof row.tier_id) != NULL);
        FUZZ_CHECK(row.burst_rps > 0 && row.burst_size > 0 && row.daily_quota > 0);
    }
    free(buf);
    return 0;
}
