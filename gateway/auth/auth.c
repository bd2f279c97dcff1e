/* auth — see auth.h. Grammar from RFC 9110 §11 (auth-scheme, auth-param, token68) and
 * §5.6 (token, quoted-string, OWS). */
#include "auth/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#define PATH_PREFIX       "/v1/"
#define DIGEST_PARAMS_MAX 32 /* parameters in one Digest header, known or not */

static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool is_ows(unsigned char c)
{
    return c == ' ' || c == '\t';
}

/* Control characters have no place in a credential; HTAB is allowed only as whitespace. */
static bool is_ctl(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool ci_equal(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

static const char *skip_ows(const char *p, const char *end)
{
    while (p < end && is_ows((unsigned char)*p))
        p++;
    return p;
}

static enum auth_kind set_kind(struct auth_credential *out, enum auth_kind kind, const char *detail)
{
    out->kind = kind;
    out->detail = detail;
    return kind;
}

/* ---- path tokens ------------------------------------------------------------------- */

/* Returns AUTH_NONE when the path carries no token candidate. */
static enum auth_kind parse_path(const char *path, struct auth_credential *out)
{
    size_t plen = sizeof PATH_PREFIX - 1;
    if (strncmp(path, PATH_PREFIX, plen) != 0)
        return AUTH_NONE;
    const char *seg = path + plen;
    const char *seg_end = strchrnul(seg, '/');
    size_t seg_len = (size_t)(seg_end - seg);
    if (seg_len < TOKEN_PREFIX_LEN || memcmp(seg, TOKEN_PREFIX, TOKEN_PREFIX_LEN) != 0)
        return AUTH_NONE; /* an agent endpoint such as /v1/json_rpc */
    if (!token_looks_valid(seg, seg_len))
        return set_kind(out, AUTH_INVALID, "path token has the wrong format");
    memcpy(out->token, seg, seg_len);
    out->token[seg_len] = '\0';
    out->rest_path = *seg_end == '/' ? seg_end : "/";
    return set_kind(out, AUTH_PATH_TOKEN, NULL);
}

/* ---- single-token schemes ---------------------------------------------------------- */

/* token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
static bool is_token68(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (is_tchar((unsigned char)s[i]) || s[i] == '/') &&
           strchr("!#$%&'*^`|", s[i]) == NULL)
        i++;
    if (i == 0)
        return false;
    while (i < n && s[i] == '=')
        i++;
    return i == n;
}

static enum auth_kind accept_token(struct auth_credential *out, enum auth_kind kind, const char *s,
                                   size_t n)
{
    if (!token_looks_valid(s, n))
        return set_kind(out, AUTH_INVALID, "token has the wrong format");
    memcpy(out->token, s, n);
    out->token[n] = '\0';
    return set_kind(out, kind, NULL);
}

static enum auth_kind parse_bearer(const char *p, const char *end, struct auth_credential *out)
{
    if (!is_token68(p, (size_t)(end - p)))
        return set_kind(out, AUTH_MALFORMED, "Bearer credential is not a token68");
    return accept_token(out, AUTH_BEARER, p, (size_t)(end - p));
}

static enum auth_kind parse_basic(const char *p, const char *end, struct auth_credential *out)
{
    enum auth_kind kind;
    uint8_t buf[AUTH_HEADER_MAX];
    size_t n = 0;
    if (!is_token68(p, (size_t)(end - p)) ||
        !token_b64_decode(p, (size_t)(end - p), buf, sizeof buf, &n)) {
        kind = set_kind(out, AUTH_MALFORMED, "Basic credential is not valid base64");
        goto out;
    }
    const uint8_t *colon = memchr(buf, ':', n);
    if (colon == NULL) {
        kind = set_kind(out, AUTH_MALFORMED, "Basic credential has no ':'");
        goto out;
    }
    size_t user_len = (size_t)(colon - buf);
    for (size_t i = 0; i < n; i++) {
        if (is_ctl(buf[i])) {
            kind = set_kind(out, AUTH_MALFORMED, "Basic credential has a control character");
            goto out;
        }
    }
    if (user_len > AUTH_USERNAME_MAX) {
        kind = set_kind(out, AUTH_MALFORMED, "Basic user name is too long");
        goto out;
    }
    memcpy(out->username, buf, user_len);
    out->username[user_len] = '\0';
    kind = accept_token(out, AUTH_BASIC, (const char *)colon + 1, n - user_len - 1);
out:
    OPENSSL_cleanse(buf, sizeof buf);
    return kind;
}

/* ---- Digest parameters ------------------------------------------------------------- */

enum digest_param {
    DP_USERNAME,
    DP_REALM,
    DP_NONCE,
    DP_URI,
    DP_RESPONSE,
    DP_ALGORITHM,
    DP_QOP,
    DP_CNONCE,
    DP_NC,
    DP_COUNT,
};

#define DIGEST_FIELD(name, member)                                                                 \
    {                                                                                              \
        name, offsetof(struct auth_digest, member), sizeof(((struct auth_digest *)0)->member)      \
    }

static const struct {
    const char *name;
    size_t offset;
    size_t size;
} digest_fields[DP_COUNT] = {
    [DP_USERNAME] = DIGEST_FIELD("username", username),
    [DP_REALM] = DIGEST_FIELD("realm", realm),
    [DP_NONCE] = DIGEST_FIELD("nonce", nonce),
    [DP_URI] = DIGEST_FIELD("uri", uri),
    [DP_RESPONSE] = DIGEST_FIELD("response", response),
    [DP_ALGORITHM] = DIGEST_FIELD("algorithm", algorithm),
    [DP_QOP] = DIGEST_FIELD("qop", qop),
    [DP_CNONCE] = DIGEST_FIELD("cnonce", cnonce),
    [DP_NC] = DIGEST_FIELD("nc", nc),
};

enum value_status { VALUE_OK, VALUE_SYNTAX, VALUE_TOO_LONG };

/* Appends c to dst (of size cap, NUL kept) unless dst is NULL (an ignored parameter). */
static bool put_char(char *dst, size_t cap, size_t *len, char c)
{
    if (dst == NULL)
        return true;
    if (*len + 1 >= cap)
        return false;
    dst[(*len)++] = c;
    dst[*len] = '\0';
    return true;
}

/* value = token / quoted-string. Unescapes a quoted-string into dst. */
static enum value_status parse_value(const char **pp, const char *end, char *dst, size_t cap)
{
    const char *p = *pp;
    size_t len = 0;
    if (dst != NULL)
        dst[0] = '\0';
    if (p < end && *p == '"') {
        for (p++;; p++) {
            if (p == end)
                return VALUE_SYNTAX; /* unterminated */
            unsigned char c = (unsigned char)*p;
            if (c == '"')
                break;
            if (c == '\\') {
                if (++p == end)
                    return VALUE_SYNTAX;
                c = (unsigned char)*p;
            }
            if (is_ctl(c) && c != '\t')
                return VALUE_SYNTAX;
            if (!put_char(dst, cap, &len, (char)c))
                return VALUE_TOO_LONG;
        }
        *pp = p + 1;
        return VALUE_OK;
    }
    const char *start = p;
    for (; p < end && is_tchar((unsigned char)*p); p++)
        if (!put_char(dst, cap, &len, *p))
            return VALUE_TOO_LONG;
    if (p == start)
        return VALUE_SYNTAX;
    *pp = p;
    return VALUE_OK;
}

static int digest_param_index(const char *name, size_t n)
{
    for (int i = 0; i < DP_COUNT; i++)
        if (ci_equal(name, n, digest_fields[i].name))
            return i;
    return -1;
}

/* One auth-param: token BWS "=" BWS value. Records which known parameters were seen. */
static const char *parse_digest_param(const char **pp, const char *end, struct auth_digest *d,
                                      unsigned *seen)
{
    const char *p = *pp;
    const char *name = p;
    while (p < end && is_tchar((unsigned char)*p))
        p++;
    size_t name_len = (size_t)(p - name);
    if (name_len == 0)
        return "Digest parameter has no name";
    p = skip_ows(p, end);
    if (p == end || *p != '=')
        return "Digest parameter has no value";
    p = skip_ows(p + 1, end);
    int idx = digest_param_index(name, name_len);
    char *dst = NULL;
    size_t cap = 0;
    if (idx >= 0) {
        if (*seen & (1u << idx))
            return "Digest parameter is repeated";
        *seen |= 1u << idx;
        dst = (char *)d + digest_fields[idx].offset;
        cap = digest_fields[idx].size;
    }
    switch (parse_value(&p, end, dst, cap)) {
    case VALUE_OK:
        break;
    case VALUE_TOO_LONG:
        return "Digest parameter is too long";
    case VALUE_SYNTAX:
        return "Digest parameter value is malformed";
    }
    *pp = p;
    return NULL;
}

static bool all_hex(const char *s)
{
    for (; *s != '\0'; s++)
        if (!is_hex((unsigned char)*s))
            return false;
    return true;
}

/* The rules that hold between parameters (see struct auth_digest). */
static const char *check_digest_fields(struct auth_digest *d, unsigned seen)
{
    static const int required[] = {DP_USERNAME, DP_REALM, DP_NONCE, DP_URI, DP_RESPONSE};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        const char *v = (const char *)d + digest_fields[required[i]].offset;
        if (!(seen & (1u << required[i])) || v[0] == '\0')
            return "Digest header lacks a required parameter";
    }
    if (!all_hex(d->response))
        return "Digest response is not hex";
    if ((seen & (1u << DP_ALGORITHM)) && d->algorithm[0] == '\0')
        return "Digest algorithm is empty";
    if (!(seen & (1u << DP_QOP))) {
        if (seen & ((1u << DP_NC) | (1u << DP_CNONCE)))
            return "Digest nc or cnonce without qop";
        return NULL;
    }
    if (d->qop[0] == '\0')
        return "Digest qop is empty";
    if (!(seen & (1u << DP_NC)))
        return "Digest qop without nc";
    if (strlen(d->nc) != AUTH_DIGEST_NC_LEN || !all_hex(d->nc))
        return "Digest nc is not 8 hex digits";
    d->nc_value = (uint32_t)strtoul(d->nc, NULL, 16);
    if (d->nc_value == 0)
        return "Digest nc is zero";
    return NULL;
}

/* #auth-param: elements separated by commas with optional whitespace; empty elements are
 * allowed (RFC 9110 §5.6.1), at least one parameter is required. */
static const char *parse_digest_params(const char *p, const char *end, struct auth_digest *d)
{
    unsigned seen = 0;
    unsigned count = 0;
    for (;;) {
        p = skip_ows(p, end);
        if (p == end)
            break;
        if (*p == ',') {
            p++;
            continue;
        }
        if (++count > DIGEST_PARAMS_MAX)
            return "Digest header has too many parameters";
        const char *err = parse_digest_param(&p, end, d, &seen);
        if (err != NULL)
            return err;
        p = skip_ows(p, end);
        if (p == end)
            break;
        if (*p != ',')
            return "Digest parameters are not separated by ','";
        p++;
    }
    return check_digest_fields(d, seen);
}

static enum auth_kind parse_digest(const char *p, const char *end, struct auth_credential *out)
{
    const char *err = parse_digest_params(p, end, &out->digest);
    if (err != NULL) {
        memset(&out->digest, 0, sizeof out->digest);
        return set_kind(out, AUTH_MALFORMED, err);
    }
    return set_kind(out, AUTH_DIGEST, NULL);
}

/* ---- the Authorization header ------------------------------------------------------ */

static enum auth_kind parse_authorization(const char *hdr, struct auth_credential *out)
{
    size_t len = strnlen(hdr, AUTH_HEADER_MAX + 1);
    if (len > AUTH_HEADER_MAX)
        return set_kind(out, AUTH_MALFORMED, "Authorization header is too long");
    const char *end = hdr + len;
    while (end > hdr && is_ows((unsigned char)end[-1]))
        end--;
    const char *scheme = skip_ows(hdr, end);
    const char *p = scheme;
    while (p < end && is_tchar((unsigned char)*p))
        p++;
    size_t scheme_len = (size_t)(p - scheme);
    if (scheme_len == 0 || scheme_len > AUTH_SCHEME_MAX)
        return set_kind(out, AUTH_MALFORMED, "Authorization header has no valid scheme");
    if (p < end && !is_ows((unsigned char)*p))
        return set_kind(out, AUTH_MALFORMED, "Authorization scheme is not followed by a space");
    p = skip_ows(p, end);

    if (ci_equal(scheme, scheme_len, "Digest"))
        return parse_digest(p, end, out);
    if (ci_equal(scheme, scheme_len, "Basic"))
        return parse_basic(p, end, out);
    if (ci_equal(scheme, scheme_len, "Bearer"))
        return parse_bearer(p, end, out);
    memcpy(out->scheme, scheme, scheme_len);
    out->scheme[scheme_len] = '\0';
    out->scheme_params = p;
    return set_kind(out, AUTH_OTHER_SCHEME, NULL);
}

static enum auth_kind parse_api_key(const char *value, struct auth_credential *out)
{
    size_t len = strnlen(value, AUTH_HEADER_MAX + 1);
    if (len > AUTH_HEADER_MAX)
        return set_kind(out, AUTH_MALFORMED, "X-Api-Key header is too long");
    const char *end = value + len;
    while (end > value && is_ows((unsigned char)end[-1]))
        end--;
    const char *p = skip_ows(value, end);
    return accept_token(out, AUTH_API_KEY, p, (size_t)(end - p));
}

enum auth_kind auth_parse(const struct auth_request *req, struct auth_credential *out)
{
    memset(out, 0, sizeof *out);
    out->rest_path = req->path;
    out->scheme_params = "";
    if (req->authorization_repeated)
        return set_kind(out, AUTH_MALFORMED, "more than one Authorization header");
    unsigned sources = (req->authorization != NULL) + (req->api_key != NULL);
    enum auth_kind kind = parse_path(req->path, out);
    if (kind != AUTH_NONE)
        sources++;
    if (sources > 1) {
        memset(out->token, 0, sizeof out->token);
        out->rest_path = req->path;
        return set_kind(out, AUTH_MALFORMED, "more than one credential in the request");
    }
    if (req->authorization != NULL)
        return parse_authorization(req->authorization, out);
    if (req->api_key != NULL)
        return parse_api_key(req->api_key, out);
    return set_kind(out, kind, out->detail);
}

bool auth_basic_user_ok(const struct auth_credential *cred, const char *handle)
{
    if (cred->kind != AUTH_BASIC)
        return false;
    return cred->username[0] == '\0' || strcmp(cred->username, handle) == 0;
}

/* ---- challenges ---------------------------------------------------------------------- */

bool auth_challenge_value_ok(const char *value)
{
    size_t n = strnlen(value, AUTH_DIGEST_VALUE_MAX + 1);
    if (n == 0 || n > AUTH_DIGEST_VALUE_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
            return false;
    }
    return true;
}

bool auth_challenge_digest(char *buf, size_t len, const char *realm, const char *nonce,
                           enum auth_digest_algorithm algorithm, bool stale)
{
    if (!auth_challenge_value_ok(realm) || !auth_challenge_value_ok(nonce))
        return false;
    int n =
        snprintf(buf, len, "Digest qop=\"auth\",algorithm=%s,realm=\"%s\",nonce=\"%s\",stale=%s",
                 algorithm == AUTH_DIGEST_MD5_SESS ? "MD5-sess" : "MD5", realm, nonce,
                 stale ? "true" : "false");
    return n > 0 && (size_t)n < len;
}

bool auth_challenge_basic(char *buf, size_t len, const char *realm)
{
    if (!auth_challenge_value_ok(realm))
        return false;
    int n = snprintf(buf, len, "Basic realm=\"%s\", charset=\"UTF-8\"", realm);
    return n > 0 && (size_t)n < len;
}
