/* xmr402 — see xmr402.h. Grammar: RFC 9110 §11.2 auth-param (token BWS "=" BWS
 * ( token / quoted-string )), comma-separated with OWS. */
#include "xmr402/xmr402.h"

#include "limits/limits.h"
#include "rpc/methods.h"
#include "token.h"
#include "xg_str.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define AGENT_PREFIX "/v1/"

static const char base58[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

const char *xmr402_agent_path(const char *path)
{
    size_t n = sizeof AGENT_PREFIX - 1;
    if (strncmp(path, AGENT_PREFIX, n) != 0 ||
        strncmp(path + n, TOKEN_PREFIX, TOKEN_PREFIX_LEN) == 0)
        return NULL;
    if (strcmp(path, LIMITS_USAGE_PATH) == 0)
        return NULL;
    const char *rest = path + n - 1;
    if (strcmp(rest, METHODS_JSONRPC_PATH) == 0)
        return rest;
    const struct method_info *m = methods_find_path(rest, strlen(rest));
    return m && m->cls != METHOD_DENIED ? rest : NULL;
}

bool xmr402_scheme_is(const char *scheme)
{
    return scheme && strcasecmp(scheme, "XMR402") == 0;
}

bool xmr402_tier_ok(const char *tier)
{
    size_t n = tier ? strlen(tier) : 0;
    if (n == 0 || n > XMR402_TIER_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = tier[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && strchr("-_", c));
        if (!ok)
            return false;
    }
    return true;
}

static bool is_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static const char *skip_ows(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* One value (token or quoted-string) into dst; false on a syntax error or overflow
 * (*overflow then says which). */
static bool parse_value(const char **pp, const char *end, char *dst, size_t cap, bool *overflow)
{
    const char *p = *pp;
    size_t n = 0;
    *overflow = false;
    if (p < end && *p == '"') {
        for (p++;; p++) {
            if (p >= end)
                return false; /* unbalanced quote: a truncated header */
            char c = *p;
            if (c == '"')
                break;
            if (c == '\\') {
                if (++p >= end)
                    return false;
                c = *p;
            }
            if ((unsigned char)c < 0x20 || c == 0x7f)
                return false;
            if (n + 1 >= cap) {
                *overflow = true;
                return false;
            }
            dst[n++] = c;
        }
        p++;
    } else {
        while (p < end && is_tchar(*p)) {
            if (n + 1 >= cap) {
                *overflow = true;
                return false;
            }
            dst[n++] = *p++;
        }
        if (n == 0)
            return false;
    }
    dst[n] = '\0';
    *pp = p;
    return true;
}

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF", s[i]) || s[i] == '\0')
            return false;
    return s[n] == '\0';
}

static bool proof_ok(const char *s)
{
    if (strncmp(s, "OutProofV", 9) != 0 || strlen(s) <= 10)
        return false;
    for (const char *p = s + 9; *p; p++)
        if (!strchr(base58, *p))
            return false;
    return true;
}

enum param { P_TXID, P_PROOF, P_INVOICE, P_OTHER };

static enum param param_of(const char *name, size_t n)
{
    if (n == 4 && strncasecmp(name, "txid", 4) == 0)
        return P_TXID;
    if (n == 5 && strncasecmp(name, "proof", 5) == 0)
        return P_PROOF;
    if (n == 7 && strncasecmp(name, "invoice", 7) == 0)
        return P_INVOICE;
    return P_OTHER;
}

static const char *check_fields(struct xmr402_auth *out, const bool seen[3])
{
    if (!seen[P_TXID] || !seen[P_PROOF])
        return "XMR402 credentials need txid=\"…\" and proof=\"…\"";
    if (!all_hex(out->txid, XMR402_TXID_LEN))
        return "XMR402 txid must be 64 hex digits";
    for (char *c = out->txid; *c; c++)
        if (*c >= 'A' && *c <= 'F')
            *c = (char)(*c - 'A' + 'a');
    if (!proof_ok(out->proof))
        return "XMR402 proof must be the OutProofV… text from get_tx_proof";
    if (seen[P_INVOICE] && !xg_str_is_uuid(out->invoice))
        return "XMR402 invoice must be an invoice id";
    return NULL;
}

bool xmr402_parse_params(const char *params, size_t max_proof, struct xmr402_auth *out,
                         const char **detail)
{
    char other[256] = "";
    bool seen[3] = {false, false, false}, overflow;
    memset(out, 0, sizeof *out);
    if (max_proof > XMR402_PROOF_LIMIT)
        max_proof = XMR402_PROOF_LIMIT;
    size_t len = strnlen(params, XMR402_PROOF_LIMIT + 512);
    const char *p = params, *end = params + len;
    if (len >= XMR402_PROOF_LIMIT + 512) {
        *detail = "XMR402 credentials are too long";
        return false;
    }
    while (p < end && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    for (p = skip_ows(p, end); p < end;) {
        const char *name = p;
        while (p < end && is_tchar(*p))
            p++;
        size_t nlen = (size_t)(p - name);
        p = skip_ows(p, end);
        if (nlen == 0 || p >= end || *p != '=') {
            *detail = "XMR402 parameters must be name=\"value\" pairs";
            return false;
        }
        p = skip_ows(p + 1, end);
        enum param which = param_of(name, nlen);
        if (which != P_OTHER && seen[which]) {
            *detail = "XMR402 parameter repeated";
            return false;
        }
        char *dst = which == P_TXID      ? out->txid
                    : which == P_PROOF   ? out->proof
                    : which == P_INVOICE ? out->invoice
                                         : other;
        /* max_proof <= XMR402_PROOF_LIMIT, so a proof's cap never exceeds its field: a
         * longer proof overflows here instead of writing past out->proof. */
        size_t cap = which == P_TXID      ? sizeof out->txid
                     : which == P_PROOF   ? max_proof + 1
                     : which == P_INVOICE ? sizeof out->invoice
                                          : sizeof other;
        if (!parse_value(&p, end, dst, cap, &overflow)) {
            *detail = !overflow          ? "XMR402 parameter value is malformed or truncated"
                      : which == P_PROOF ? "XMR402 proof is too long"
                                         : "XMR402 parameter value is too long";
            return false;
        }
        if (which != P_OTHER)
            seen[which] = true;
        p = skip_ows(p, end);
        if (p < end && *p != ',') {
            *detail = "XMR402 parameters must be separated by ','";
            return false;
        }
        if (p < end)
            p = skip_ows(p + 1, end);
    }
    *detail = check_fields(out, seen);
    return *detail == NULL;
}

static bool quotable(const char *v)
{
    if (!v || !*v)
        return false;
    for (; *v; v++)
        if ((unsigned char)*v < 0x20 || *v == 0x7f || *v == '"' || *v == '\\')
            return false;
    return true;
}

bool xmr402_challenge_header(char *buf, size_t len, const char *address, const char *amount,
                             const char *message, int64_t timestamp)
{
    if (!quotable(address) || !quotable(amount) || !quotable(message))
        return false;
    int n = snprintf(buf, len,
                     "XMR402 address=\"%s\", amount=\"%s\", message=\"%s\", timestamp=\"%lld\"",
                     address, amount, message, (long long)timestamp);
    return n > 0 && (size_t)n < len;
}

bool xmr402_challenge_add_sse(char *buf, size_t len)
{
    static const char features[] = ", features=\"sse\"";
    size_t used = strlen(buf);
    if (used + sizeof features > len)
        return false;
    memcpy(buf + used, features, sizeof features);
    return true;
}

/* A media range's q is zero: "q=0", "q=0.", "q=0.0", "q=0.00", "q=0.000". */
static bool q_zero(const char *params, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (params[i] != ';')
            continue;
        size_t j = i + 1;
        while (j < n && (params[j] == ' ' || params[j] == '\t'))
            j++;
        if (j + 1 < n && (params[j] == 'q' || params[j] == 'Q') && params[j + 1] == '=') {
            j += 2;
            if (j >= n || params[j] != '0')
                return false;
            for (j++; j < n && params[j] != ';'; j++)
                if (params[j] != '.' && params[j] != '0' && params[j] != ' ' && params[j] != '\t')
                    return false;
            return true;
        }
    }
    return false;
}

bool xmr402_accepts_stream(const char *accept)
{
    static const char type[] = "text/event-stream";
    const size_t tlen = sizeof type - 1;
    for (const char *p = accept; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *r = p;
        while (n > 0 && (*r == ' ' || *r == '\t')) {
            r++;
            n--;
        }
        size_t k = 0; /* the type ends at ';', blank or the range's end */
        while (k < n && r[k] != ';' && r[k] != ' ' && r[k] != '\t')
            k++;
        if (k == tlen && strncasecmp(r, type, tlen) == 0 && !q_zero(r + k, n - k))
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

static const struct {
    const char *code;
    enum xmr402_refusal draft, extended;
} refusals[] = {
    {"underpaid", XMR402_REFUSE_FORBIDDEN, XMR402_REFUSE_PAY_REST},
    {"late", XMR402_REFUSE_FORBIDDEN, XMR402_REFUSE_PAY_REST},
    {"txid_unknown", XMR402_REFUSE_RETRY, XMR402_REFUSE_RETRY},
    {"pending_spent", XMR402_REFUSE_RETRY, XMR402_REFUSE_RETRY},
    {"rate_limited", XMR402_REFUSE_RETRY, XMR402_REFUSE_RETRY},
    {"verify_busy", XMR402_REFUSE_RETRY, XMR402_REFUSE_RETRY},
    {"invoice_expired", XMR402_REFUSE_EXPIRED, XMR402_REFUSE_EXPIRED},
};

enum xmr402_refusal xmr402_refusal_of(const char *code, bool extended)
{
    for (size_t i = 0; code && i < sizeof refusals / sizeof refusals[0]; i++)
        if (strcmp(code, refusals[i].code) == 0)
            return extended ? refusals[i].extended : refusals[i].draft;
    return XMR402_REFUSE_FORBIDDEN; /* proof_invalid, txid_used, not_counted, … */
}

bool xmr402_mode_extended(const char *value)
{
    return value && strcasecmp(value, XMR402_MODE_EXTENDED) == 0;
}

int64_t xmr402_pending_tenant_id(const char *invoice)
{
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a */
    for (const char *p = invoice; p && *p; p++) {
        h ^= (unsigned char)*p;
        h *= UINT64_C(1099511628211);
    }
    return -(int64_t)(h >> 1) - 1;
}
