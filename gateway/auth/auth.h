/* auth — which credential a request carries, and the 401 challenges (pure, no I/O).
 *
 * auth_parse looks at the request path, the Authorization header and the X-Api-Key
 * header and returns one tagged result. It checks syntax and token format only; whether
 * a token or handle belongs to a tenant is the caller's lookup (token_hash, then the
 * tenant table), and Digest responses are checked by digest_verify.
 *
 * Sources, and what the caller answers
 *   AUTH_NONE          nothing presented. Root (monerod-compatible) paths: 401 with the
 *                      two Digest challenges below, since stock wallets send credentials
 *                      only after a 401.
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
 * Challenges, as monerod sends them (epee http_auth.cpp add_challenge): two Digest
 * challenges in two WWW-Authenticate headers, MD5 first, then MD5-sess with the same nonce,
 * each with no blank after its commas:
 *   Digest qop="auth",algorithm=MD5,realm="<realm>",nonce="<nonce>",stale=false
 *   Digest qop="auth",algorithm=MD5-sess,realm="<realm>",nonce="<nonce>",stale=false
 * Why exactly this shape: monero's client (0.18 and later) parses one challenge per header,
 * uses the one whose algorithm is MD5 or absent (MD5-sess it skips), and discards one that
 * carries any parameter outside its table (realm, qop, algorithm, nonce, opaque, stale,
 * domain) or an empty quoted string; it takes quoted values verbatim (no unescaping), so
 * realm and nonce must be non-empty and free of '"' and '\'. Client libraries written
 * against monerod are less careful: they join the headers with ", " and cut at ", Digest",
 * or split on ',' without trimming, or (Python requests) read the joined text as one
 * dict, so the later algorithm=MD5-sess wins and they answer with MD5-sess. No opaque is
 * sent (monerod sends none, and a client that finds none sends opaque="null"). Basic is
 * never in a root-path answer (see server.c, answer_unauthorized).
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
#define AUTH_DIGEST_VALUE_MAX    256 /* realm, nonce, cnonce */
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
 * and response are present and non-empty; response is hex (either case); with qop present
 * (quoted or not), nc is present as 8 hex digits (nc_value >= 1) and cnonce may be absent
 * (monero 0.18 sends none); with qop absent (RFC 2069), nc and cnonce are absent too.
 * opaque, like every parameter not listed here, is skipped: monerod ignores it, and
 * clients send it absent, echoed, or as "null" when the challenge had none. */
struct auth_digest {
    char username[AUTH_USERNAME_MAX + 1];
    char realm[AUTH_DIGEST_VALUE_MAX + 1];
    char nonce[AUTH_DIGEST_VALUE_MAX + 1];
    char uri[AUTH_DIGEST_URI_MAX + 1];
    char response[AUTH_DIGEST_RESPONSE_MAX + 1];
    char algorithm[AUTH_DIGEST_TOKEN_MAX + 1];
    char qop[AUTH_DIGEST_TOKEN_MAX + 1];
    char cnonce[AUTH_DIGEST_VALUE_MAX + 1];
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

/* True iff realm (or a nonce) can be sent as a quoted challenge value that monero's
 * client reads back verbatim: 1..AUTH_DIGEST_VALUE_MAX printable ASCII characters without
 * '"' or '\'. */
bool auth_challenge_value_ok(const char *value);

enum auth_digest_algorithm { AUTH_DIGEST_MD5, AUTH_DIGEST_MD5_SESS };

/* Writes the value of one WWW-Authenticate header (without the header name), byte for
 * byte as monerod writes it:
 *   Digest qop="auth",algorithm=<MD5|MD5-sess>,realm="<realm>",nonce="<nonce>",
 *          stale=<false|true>
 * False if a value fails auth_challenge_value_ok or buf is too small. */
__attribute__((warn_unused_result)) bool auth_challenge_digest(char *buf, size_t len,
                                                               const char *realm, const char *nonce,
                                                               enum auth_digest_algorithm algorithm,
                                                               bool stale);

/*   Basic realm="<realm>", charset="UTF-8" */
__attribute__((warn_unused_result)) bool auth_challenge_basic(char *buf, size_t len,
                                                              const char *realm);

#endif
