/* digest — HTTP Digest as monerod speaks it (epee http_auth.cpp): the challenges of a 401,
 * and the verification of Authorization: Digest (RFC 7616/2617 MD5 and MD5-sess, qop=auth
 * or none), with stateless nonces and a bounded nc replay table.
 *
 * What we send: what monerod --rpc-login sends, in its order and shape, with our realm and
 * our nonces (auth.h, auth_challenge_digest, explains each detail):
 *   WWW-authenticate: Digest qop="auth",algorithm=MD5,realm="<realm>",nonce="<n>",stale=false
 *   WWW-authenticate: Digest qop="auth",algorithm=MD5-sess,realm="<realm>",nonce="<n>",stale=false
 * (stale=true on both when the password was right but the nonce is not usable). Clients
 * that work with monerod therefore work with us unchanged: a wallet and curl --digest take
 * the MD5 one, Python requests (which merges both into one dict) answers MD5-sess, and a
 * library that cuts the joined headers at ", Digest" and splits on ',' untrimmed reads
 * the MD5 one correctly only because there is no blank after a comma.
 *
 * What we accept: every response that monerod's clients send, checked by monerod's rules,
 * with three deliberate strictnesses noted below (uri, realm, algorithm names):
 *   algorithm  absent (= MD5), MD5 or MD5-sess, any case; MD5-sess hashes HA1 as
 *              MD5(HA1hex:nonce:cnonce) with the cnonce as sent ("" if absent), as monerod
 *              does. Anything else is refused (monerod takes any name that starts with
 *              "MD5" as MD5, and any that also ends in "-sess" as MD5-sess; no client
 *              sends such names).
 *   qop        "auth" (any case, quoted or not) with nc, or absent (RFC 2069); auth-int is
 *              refused.
 *   cnonce     present or absent, as the wallet version sends it.
 *   uri        the request target exactly as received, or an absolute URL
 *              (http[s]://authority + that target) as some libraries send it; its text as
 *              sent is what HA2 hashes. Any other uri is 400 (RFC 7616 §3.4.6; monerod
 *              itself does not compare it, but a response for another path must not pass).
 *   realm      ours ([server] realm); monerod hashes its own and ignores the one sent.
 *   opaque     ignored, like monerod: absent, echoed, or "null" all pass.
 *   response   hex in either case.
 * Whitespace is the parser's (auth.c: any OWS, parameter names in any case), and so is
 * the header-name case (the HTTP layer's lookups ignore it). Unlike monerod, which keeps
 * one nonce per connection, any connection (or replica) may answer any nonce of ours.
 *
 * What the wallet does (epee http_auth.cpp, monero 0.18.0.0; later versions noted)
 *   It sends no credential until a 401. From the challenge it needs algorithm MD5 (or
 *   none) and, for qop, "auth"; MD5-sess, SHA-256 and auth-int challenges are ignored.
 *   It then sends, on every request, one header with no spaces:
 *     Digest algorithm=MD5,nonce="…",realm="…",response="…",uri="…",username="…"
 *            [,opaque="…"],qop=auth,nc=0000000a
 *   nc counts up from 00000001 (8 lower-case hex digits) across all requests of the
 *   session. 0.18 sends no cnonce, so response = MD5(HA1:nonce:nc::auth:HA2) with an empty
 *   cnonce; later releases add cnonce="<base64 of 16 random bytes>" and hash it. Without
 *   qop in the challenge 0.18 uses RFC 2069 (response = MD5(HA1:nonce:HA2)); later
 *   releases refuse such a challenge, so we always offer qop="auth". After its first
 *   authenticated request, a 401 is taken as "wrong password" and ends the request,
 *   unless the challenge says stale=true: then it resets nc and retries once with the new
 *   nonce. Hence every result below that means "right password, unusable nonce" must be
 *   answered with stale=true, and everything else without it.
 *
 * Nonces are stateless: base64url(issued_ms(8, big-endian) || id(12, random) ||
 * HMAC-SHA256(key, label || issued_ms || id)[0..16]), 48 characters. Any replica that
 * shares the key verifies any replica's nonce; a bad MAC is a forgery (not stale). A
 * nonce older than the lifetime, or dated more than DIGEST_CLOCK_SKEW_MS in the future,
 * is stale. Time is wall-clock milliseconds (replicas compare each other's stamps),
 * passed in by the caller so tests control it.
 *
 * Replay: a fixed table of nonce states, DIGEST_WAYS-way set-associative, indexed by
 * hidden MAC bytes (so a client cannot aim its nonces at one set). An entry holds the
 * highest nc accepted and a 64-bit window below it, so requests that overtake each other
 * still pass once each; an nc at or below the window, or seen in it, is a replay. A nonce
 * used without qop (no nc) is spent by its first use. Entries are created only after a
 * correct response, so clients without a password cannot fill the table. When a set is
 * full the entry with the oldest nonce is evicted and the set's floor rises past it; a
 * nonce the table does not know is accepted as new only if it was issued at or after its
 * set's floor, so a forgotten nonce (evicted, or issued before this process started) is
 * stale, never fresh. A fresh nonce that is older than everything in its full set is
 * stale too. Each set has its own mutex, held for a few compares: O(1), no global lock.
 *
 * Replicas: a nonce issued by replica A reaches replica B as unknown; B accepts it (as
 * new, if issued after B's floor) and tracks nc from there, so a wallet whose requests
 * alternate between replicas still works. A captured request can therefore be replayed
 * once on each replica that has not yet seen that nonce, within the nonce lifetime; run
 * behind TLS (Digest never protected the body anyway) or with sticky balancing.
 *
 * Ownership: digest_verifier_new copies the key and realm; the verifier is shared by all
 * threads and freed once, after they stop, with digest_verifier_free. */
#ifndef DIGEST_H
#define DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/auth.h"

#define DIGEST_NONCE_ID_LEN   12
#define DIGEST_NONCE_LEN      48 /* base64url of 8 + 12 + 16 bytes */
#define DIGEST_NONCE_SIZE     (DIGEST_NONCE_LEN + 1)
#define DIGEST_KEY_MIN        16
#define DIGEST_KEY_MAX        64
#define DIGEST_CLOCK_SKEW_MS  60000 /* replicas' clocks may differ this much */
#define DIGEST_WAYS           8
#define DIGEST_DEFAULT_SLOTS  16384 /* about 0.75 MiB */
#define DIGEST_MAX_SLOTS      (1u << 24)
#define DIGEST_CHALLENGE_SIZE 512 /* enough for any realm digest_verifier_new accepts */

struct digest_config {
    const uint8_t *nonce_key; /* DIGEST_KEY_MIN..DIGEST_KEY_MAX bytes, same on all replicas */
    size_t nonce_key_len;
    const char *realm;         /* must pass auth_challenge_value_ok; see token.h on HA1 */
    int64_t nonce_lifetime_ms; /* > 0 */
    size_t replay_slots;       /* nonces tracked at once; 0 = DIGEST_DEFAULT_SLOTS */
};

struct digest_verifier;

/* Returns NULL if the configuration is invalid or memory runs out. now_ms starts the
 * floor: nonces issued before it (by an earlier process) are stale when first seen. */
struct digest_verifier *digest_verifier_new(const struct digest_config *cfg, int64_t now_ms);
void digest_verifier_free(struct digest_verifier *v);

const char *digest_realm(const struct digest_verifier *v);

/* The nonce for (issued_ms, id): pure, for tests and for digest_nonce_issue. */
__attribute__((warn_unused_result)) bool digest_nonce_make(const struct digest_verifier *v,
                                                           int64_t issued_ms,
                                                           const uint8_t id[DIGEST_NONCE_ID_LEN],
                                                           char out[DIGEST_NONCE_SIZE]);

/* A new nonce with a random id. False only if RAND_bytes or OpenSSL fails. */
__attribute__((warn_unused_result)) bool
digest_nonce_issue(const struct digest_verifier *v, int64_t now_ms, char out[DIGEST_NONCE_SIZE]);

enum digest_nonce_status {
    DIGEST_NONCE_LIVE,    /* ours and within its lifetime */
    DIGEST_NONCE_EXPIRED, /* ours, but too old (or too far in the future): stale */
    DIGEST_NONCE_FORGED,  /* not ours: bad MAC, length or encoding */
};

/* Pure: authenticates a nonce and classifies its age. */
enum digest_nonce_status digest_nonce_check(const struct digest_verifier *v, const char *nonce,
                                            int64_t now_ms);

/* The WWW-Authenticate values of one 401 (auth_challenge_digest), to be sent in this
 * order, each in its own header. */
struct digest_challenges {
    char md5[DIGEST_CHALLENGE_SIZE];
    char md5_sess[DIGEST_CHALLENGE_SIZE];
};

/* Issues one nonce and writes both challenges with it. False only if RAND_bytes or
 * OpenSSL fails. */
__attribute__((warn_unused_result)) bool digest_challenge(const struct digest_verifier *v,
                                                          int64_t now_ms, bool stale,
                                                          struct digest_challenges *out);

/* Pure: the expected response (raw 16 bytes) for cred's nonce, nc, cnonce ("" if absent),
 * qop and uri as sent, under HA1 (token_digest_ha1) and the request method. algorithm
 * MD5-sess (any case) first turns HA1 into MD5(HA1hex:nonce:cnonce); any other value is
 * hashed as MD5 (digest_verify refuses the others before). Ignores cred->response. False
 * only if OpenSSL fails. */
__attribute__((warn_unused_result)) bool digest_response(const uint8_t ha1[TOKEN_HA1_LEN],
                                                         const char *method,
                                                         const struct auth_digest *cred,
                                                         uint8_t out[TOKEN_HA1_LEN]);

enum digest_result {
    DIGEST_OK,           /* authenticated                                          */
    DIGEST_STALE,        /* right password, nonce expired or forgotten: 401 stale   */
    DIGEST_REPLAY,       /* right password, (nonce, nc) already used: 401 stale     */
    DIGEST_BAD_RESPONSE, /* wrong password or unknown user: 401                    */
    DIGEST_BAD_NONCE,    /* forged nonce (bad MAC, length or encoding): 401        */
    DIGEST_BAD_REALM,    /* another realm: 401                                     */
    DIGEST_BAD_URI,      /* uri is not this request's: 400 (RFC 7616 §3.4.6)       */
    DIGEST_UNSUPPORTED,  /* algorithm not MD5/MD5-sess, qop other than auth: 401   */
    DIGEST_ERROR,        /* OpenSSL failed: 500                                    */
};

/* Checks a parsed Digest credential against this request. ha1 is the tenant's HA1 found
 * by cred->username (a handle), or NULL if there is no such tenant: the same work is
 * done and DIGEST_BAD_RESPONSE returned, so timing does not tell unknown users apart.
 * request_uri is the request target exactly as received (path and query, not
 * percent-decoded); cred->uri must be it, or an absolute URL whose path and query are it.
 * Records (nonce, nc) only when the response is correct. Thread-safe. */
enum digest_result digest_verify(struct digest_verifier *v, const struct auth_digest *cred,
                                 const uint8_t *ha1, const char *method, const char *request_uri,
                                 int64_t now_ms);

/* True for the results whose challenge must carry stale=true. */
bool digest_result_is_stale(enum digest_result r);
/* The HTTP status to answer with (200 for DIGEST_OK). */
int digest_result_http_status(enum digest_result r);
/* A short snake_case name for metrics. */
const char *digest_result_name(enum digest_result r);

#endif
