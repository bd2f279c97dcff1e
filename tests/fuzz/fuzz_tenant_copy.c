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
 *     tier within their limits, a positive rate, burst size and quota;
 *   - valid_until's conversion (pgsync_unix_seconds, of the input's first 8 bytes as a
 *     timestamptz) is the nearest second, half a second at most away from the exact
 *     value, and ±infinity stay themselves. */
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
    if (size >= 8) {
        uint64_t raw = 0;
        for (size_t i = 0; i < 8; i++)
            raw = raw << 8 | data[i];
        int64_t us = (int64_t)raw, s = pgsync_unix_seconds(us);
        if (us == INT64_MAX || us == INT64_MIN) {
            FUZZ_CHECK(s == us);
        } else {
            __int128 exact = (__int128)us + (__int128)946684800 * 1000000;
            __int128 off = (__int128)s * 1000000 - exact;
            FUZZ_CHECK(off >= -500000 && off <= 500000);
        }
    }
    struct tenant_row row;
    enum pgsync_copy r =
        pgsync_parse_copy_row(buf + skip, len - skip, &(struct token_ha1_keys){key, NULL}, &row);
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
