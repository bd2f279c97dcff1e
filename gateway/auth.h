/* auth — which credential a request carries, and the 401 challenges (pure, no I/O).
 *
 * auth_parse looks at the request path, the Authorization header and the X-Api-Key
 * header and returns one tagged result. It checks syntax and token format only; whether
 * a token or handle belongs to a tenant is the caller's lookup (token_hash, then the
 * tenant table), and Digest responses are checked by digest_verify.
 *
 * Sources, and what the caller answers
 *   AUTH_NONE          nothing presented. Root (monerod-compatible) paths: 401 with both
 *                      challenges, since stock wallets send credentials only after a 401.
 *                      Agent paths (/v1/<monerod path>): 402 with the XMR402 challenge.
 *   AUTH_PATH_TOKEN    /v1/<token>/<rest>: token, and rest_path = "/<rest>" (the monerod
 *                      path to serve). "/v1/json_rpc" is NOT a token: a first segment is a
 *                      token candidate only if it starts with "xg_" (token.h explains why
 *                      no monerod path can).
 *   AUTH_BEARER        Authorization: Bearer <token>.
 *   AUTH_API_KEY       X-Api-Key: <token>.
 *   AUTH_BASIC         Authorization: Basic base64(user ":" token). The user must be the
 *                      tenant's handle, or empty for clients that can only set a password
 *                      (https://:<token>@host/); auth_basic_user_ok states the rule.
 *   AUTH_DIGEST        Authorization: Digest …: the parameters, unquoted and unescaped,
 *                      in out->digest; the caller looks up out->digest.username as a
 *                      handle and calls digest_verify.
 *   AUTH_OTHER_SCHEME  Authorization: <scheme> …, any other scheme (XMR402 goes here):
 *                      the scheme name and its raw parameters, for the caller to dispatch
 *                      or answer with 401.
 *   AUTH_INVALID       well-formed, but the token cannot be one of ours (wrong length,
 *                      prefix or alphabet): 401 with the challenges, exactly as for an
 *                      unknown token, so no answer says which part was wrong.
 *   AUTH_MALFORMED     a syntax error no retry can fix: bad base64, no ':' in Basic,
 *                      unbalanced quotes, a duplicated or missing Digest parameter, an
 *                      oversized header, or two credential sources at once. Answer 400
 *                      (in the JSON-RPC / status shape of the path); out->detail names the
 *                      problem and quotes nothing from the request.
 *
 * Challenges: send the Digest challenge first and Basic second, each in its own
 * WWW-Authenticate header. monero's client (epee http_auth.cpp, 0.18 and later) reads
 * every WWW-Authenticate header, ignores any it cannot parse as Digest (so Basic is
 * harmless), and parses one challenge per header: a Digest challenge must never share a
 * header with another scheme, and must contain only parameters it knows (realm, qop,
 * algorithm, nonce, opaque, stale, domain), or it discards the whole challenge. It takes
 * quoted values verbatim (no unescaping) and refuses empty quoted strings, so realm,
 * nonce and opaque must be non-empty and free of '"' and '\'.
 *
 * Ownership: the caller owns struct auth_request and its strings; auth_parse copies what
 * it returns into struct auth_credential except rest_path and scheme_params, which point
 * into the request's strings (or a static "/"), and detail, a static string. */
#ifndef AUTH_H
#define AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "token.h"

#define AUTH_HEADER_MAX          4096 /* longer Authorization / X-Api-Key values are malformed */
#define AUTH_USERNAME_MAX        128
#define AUTH_SCHEME_MAX          32
#define AUTH_DIGEST_VALUE_MAX    256 /* realm, nonce, cnonce, opaque */
#define AUTH_DIGEST_URI_MAX      2048
#define AUTH_DIGEST_TOKEN_MAX    32 /* algorithm, qop */
#define AUTH_DIGEST_RESPONSE_MAX 64 /* hex; MD5 uses 32, SHA-256 64 */
#define AUTH_DIGEST_NC_LEN       8

enum auth_kind {
    AUTH_NONE,
    AUTH_PATH_TOKEN,
    AUTH_BEARER,
    AUTH_API_KEY,
    AUTH_BASIC,
    AUTH_DIGEST,
    AUTH_OTHER_SCHEME,
    AUTH_INVALID,
    AUTH_MALFORMED,
};

/* The parameters of an Authorization: Digest header, unquoted and unescaped. Optional
 * parameters that were absent are "". The parser guarantees: username, realm, nonce, uri
 * and response are present and non-empty; response is hex; with qop present, nc is present
 * as 8 hex digits (nc_value >= 1) and cnonce may be absent (monero 0.18 sends none); with
 * qop absent (RFC 2069), nc and cnonce are absent too. */
struct auth_digest {
    char username[AUTH_USERNAME_MAX + 1];
    char realm[AUTH_DIGEST_VALUE_MAX + 1];
    char nonce[AUTH_DIGEST_VALUE_MAX + 1];
    char uri[AUTH_DIGEST_URI_MAX + 1];
    char response[AUTH_DIGEST_RESPONSE_MAX + 1];
    char algorithm[AUTH_DIGEST_TOKEN_MAX + 1];
    char qop[AUTH_DIGEST_TOKEN_MAX + 1];
    char cnonce[AUTH_DIGEST_VALUE_MAX + 1];
    char opaque[AUTH_DIGEST_VALUE_MAX + 1];
    bool has_opaque;
    char nc[AUTH_DIGEST_NC_LEN + 1]; /* as sent: it is hashed as text */
    uint32_t nc_value;
};

struct auth_request {
    const char *path;            /* request path without the query; not NULL */
    const char *authorization;   /* the Authorization header, or NULL */
    bool authorization_repeated; /* it came more than once */
    const char *api_key;         /* the X-Api-Key header, or NULL */
};

struct auth_credential {
    enum auth_kind kind;
    const char *rest_path;                /* the path to serve: after the token, else path */
    char token[TOKEN_TEXT_SIZE];          /* PATH_TOKEN, BEARER, API_KEY, BASIC */
    char username[AUTH_USERNAME_MAX + 1]; /* BASIC */
    char scheme[AUTH_SCHEME_MAX + 1];     /* OTHER_SCHEME, as sent */
    const char *scheme_params;            /* OTHER_SCHEME: the rest of the header */
    struct auth_digest digest;            /* DIGEST */
    const char *detail;                   /* MALFORMED, INVALID: static text for logs / 400 */
};

/* Classifies the request's credential into *out (always fully written) and returns
 * out->kind. A request that presents more than one source (say a path token and an
 * Authorization header), or repeats the Authorization header, is AUTH_MALFORMED. */
enum auth_kind auth_parse(const struct auth_request *req, struct auth_credential *out);

/* The Basic user-name rule: the tenant's handle, or empty. */
bool auth_basic_user_ok(const struct auth_credential *cred, const char *handle);

/* True iff realm (or a nonce/opaque) can be sent as a quoted challenge value that monero's
 * client reads back verbatim: 1..AUTH_DIGEST_VALUE_MAX printable ASCII characters without
 * '"' or '\'. */
bool auth_challenge_value_ok(const char *value);

/* Writes the value of a WWW-Authenticate header (without the header name):
 *   Digest realm="<realm>", qop="auth", algorithm=MD5, nonce="<nonce>",
 *          opaque="<opaque>"[, stale=true]
 * False if a value fails auth_challenge_value_ok or buf is too small. */
__attribute__((warn_unused_result)) bool auth_challenge_digest(char *buf, size_t len,
                                                               const char *realm, const char *nonce,
                                                               const char *opaque, bool stale);

/*   Basic realm="<realm>", charset="UTF-8" */
__attribute__((warn_unused_result)) bool auth_challenge_basic(char *buf, size_t len,
                                                              const char *realm);

#endif
