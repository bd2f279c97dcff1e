/* pricing — turning a tier's monthly price into piconero, exactly.
 *
 * Money never passes through a double. A fiat price is kept in minor units (cents) and a
 * rate as a fixed-point integer with 8 decimals (fiat per XMR × 10^8, parsed from the
 * rate source's decimal text); the conversion is done in 128-bit integers and rounded
 * up to the next piconero, so the merchant never receives less than the price:
 *     piconero = ceil(price_minor × 10^12 × 10^8 / (10^exponent × rate_e8))
 *
 * The rate source (price_source_*) is a background thread fetching one HTTP JSON
 * document every `refresh` and reading one number at a configured path:
 *   - path "monero.usd" reads {"monero":{"usd":123.45}} (CoinGecko simple/price);
 *   - path "price" reads {"price":"123.45"} (a string holding a decimal is accepted:
 *     Binance, Kraken and others quote prices as strings);
 *   - path "result.XXMRZUSD.c.0" reads arrays by index (Kraken ticker);
 *   - an empty path reads a body that is just a number, e.g. `123.45`.
 * The number must be a plain positive decimal (no exponent, no sign); digits beyond the
 * 8th decimal are cut off. A quote older than max_age is no quote: the API refuses new
 * fiat invoices with 503 rate_unavailable until a fresh one arrives. Invoices already
 * issued keep their locked amount and are unaffected. */
#ifndef PRICING_H
#define PRICING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRICE_RATE_SCALE       100000000LL /* rate_e8: 8 decimals */
#define PRICE_PICONERO_PER_XMR 1000000000000LL
#define PRICE_RATE_TEXT_SIZE   48
#define PRICE_XMR_TEXT_SIZE    32

/* Parses a positive decimal ("123.45", "0.5", "42") into rate × 10^8. False for signs,
 * exponents, empty or non-digit text, zero after truncation, or values over 10^10. */
__attribute__((warn_unused_result)) bool price_parse_rate(const char *text, size_t len,
                                                          int64_t *rate_e8);

/* "123.45000000" → "123.45": the rate as decimal text (trailing zeros trimmed). */
void price_format_rate(int64_t rate_e8, char out[PRICE_RATE_TEXT_SIZE]);

/* Piconero as XMR text, exactly: 1500000000000 → "1.5", 1 → "0.000000000001". */
void price_format_xmr(int64_t piconero, char out[PRICE_XMR_TEXT_SIZE]);

/* Minor-unit exponent of an ISO 4217 code (2 for most; 0 for JPY, KRW, …). XMR: 12. */
int price_minor_exponent(const char *currency);

/* The conversion above. False when the result would not fit in int64 or rate_e8 <= 0. */
__attribute__((warn_unused_result)) bool price_fiat_to_piconero(int64_t price_minor, int exponent,
                                                                int64_t rate_e8, int64_t *piconero);

/* price_minor × months for a tier, in piconero: directly for XMR prices, else through
 * the rate. False on overflow or a missing rate (rate_e8 <= 0 for a fiat price). */
__attribute__((warn_unused_result)) bool price_quote(const char *currency, int64_t price_minor,
                                                     int64_t months, int64_t rate_e8,
                                                     int64_t *piconero);

/* A tier change's carried time (docs/BILLING.md, "Tier changes"). The time left on the old
 * tier keeps its value: it becomes remaining × old price / new price on the new tier,
 * rounded down, in 128-bit integers. The prices are the two tiers' monthly ones, compared
 * in minor units when both are in one currency, else in piconero, the fiat one converted
 * at rate_e8 (price_quote's rounding). So a dearer tier gets less time, a cheaper one more;
 * a renewal of the same tier carries remaining unchanged, a free old tier nothing. */
struct price_carry_input {
    int64_t remaining; /* time left on the old tier, in any unit (the result's); <= 0: none */
    const char *old_tier, *old_currency;
    int64_t old_minor; /* the old tier's monthly price, as the tiers table has it now */
    const char *new_tier, *new_currency;
    int64_t new_minor; /* the new tier's monthly price, as the invoice locked it */
    int64_t rate_e8;   /* the fiat currency's rate (the invoice's); 0 when it has none */
};

/* The carried time in *carried. False when the two prices cannot be compared (a fiat price
 * and no rate, two fiat currencies, a free new tier) or the result would not fit in int64. */
__attribute__((warn_unused_result)) bool price_carry(const struct price_carry_input *in,
                                                     int64_t *carried);

/* Finds the value at a dotted path in a JSON document and copies its text: a number's
 * exact characters, or a string's contents. False when the document is not valid
 * JSON, the path is missing, the value is neither, or it does not fit in out. */
__attribute__((warn_unused_result)) bool price_json_number_text(const char *json, const char *path,
                                                                char *out, size_t outlen);

/* --- the rate source -------------------------------------------------------------- */

struct price_source_options {
    const char *url;      /* "" disables fiat pricing (every fiat quote is refused) */
    const char *path;     /* see above                                              */
    const char *currency; /* the fiat the source quotes, e.g. "USD"                 */
    int64_t refresh_ms, max_age_ms, timeout_ms;
};

struct price_source;

/* Starts the fetch thread (options are copied). NULL on failure. */
struct price_source *price_source_start(const struct price_source_options *opt);
void price_source_stop(struct price_source *src);

/* The current rate for `currency` when one no older than max_age is held. */
__attribute__((warn_unused_result)) bool price_source_rate(struct price_source *src,
                                                           const char *currency, int64_t *rate_e8);

/* Milliseconds since the last successful fetch; -1 before the first one or when no URL is
 * set (metrics). */
int64_t price_source_age_ms(struct price_source *src);

/* Readiness detail: false with a reason when no fresh rate is held (and a URL is set). */
bool price_source_ready(struct price_source *src, char *reason, size_t len);

#endif
