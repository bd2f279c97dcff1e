/* tls_pin — SHA-256 certificate fingerprints that https:// nodes may present instead of a
 * certificate a CA vouches for: what wallets call --daemon-ssl-allowed-fingerprints (pure:
 * parsing and matching; the TLS handshake hook is in up_curl.c).
 *
 * What is pinned is the SHA-256 of the node's whole leaf certificate in DER, the value
 * `openssl x509 -noout -fingerprint -sha256` prints (and monerod logs for the certificate it
 * generates) — not the public-key hash curl's CURLOPT_PINNEDPUBLICKEY takes. A node whose
 * certificate matches is accepted without a CA and without a host name check (the
 * fingerprint names the certificate itself); any other certificate must still verify
 * against the CA store or [nodes] ca_file and match the node's host. */
#ifndef TLS_PIN_H
#define TLS_PIN_H

#include <stdbool.h>
#include <stddef.h>

#define TLS_PIN_MAX 16 /* fingerprints in one list */
#define TLS_PIN_LEN 32 /* bytes of a SHA-256 digest */

struct tls_pins {
    size_t count;
    unsigned char sha256[TLS_PIN_MAX][TLS_PIN_LEN];
};

/* Parses a list of fingerprints separated by commas and/or white space; each is 64 hex
 * digits, upper or lower case, with or without a ':' between byte pairs. "" is an empty
 * list. False with a message in err for anything else (out is then empty). */
__attribute__((warn_unused_result)) bool tls_pin_parse(const char *text, struct tls_pins *out,
                                                       char *err, size_t errlen);

/* Whether digest (TLS_PIN_LEN bytes) is one of the pins. */
bool tls_pin_match(const struct tls_pins *pins, const unsigned char *digest);

#endif
