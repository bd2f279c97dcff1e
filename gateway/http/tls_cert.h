/* tls_cert — the certificate chain and private key the HTTPS listener serves, replaceable
 * while it runs (SIGHUP) without touching a connection.
 *
 * libmicrohttpd hands GnuTLS a certificate callback (tls_cert_callback, given as
 * MHD_OPTION_HTTPS_CERT_CALLBACK) instead of a fixed certificate: every new handshake
 * asks it, and it answers with the generation in service, an atomic pointer. A reload
 * reads both files again, parses them, checks that the key belongs to the first
 * certificate and that the certificate has not expired, and only then swaps the
 * pointer; anything wrong keeps the generation in service and says why. Connections
 * already open keep the session they negotiated: nothing of theirs is touched.
 *
 * GnuTLS calls the callback with the session alone, no closure, so the generation in
 * service is the one mutable global here: one listener certificate per process, installed
 * by tls_cert_load (a second load fails). A replaced generation is not freed while the
 * daemon runs — a handshake on another loop may still be reading it, and GnuTLS gives no
 * moment when none is — but kept until tls_cert_free: a few kilobytes per reload.
 *
 * Threads: the callback runs on every loop's thread; load, reload and free on one thread
 * (the main one). */
#ifndef TLS_CERT_H
#define TLS_CERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLS_CERT_FINGERPRINT_LEN 64 /* hex digits of a SHA-256 */

struct tls_cert;

/* What a generation holds, for the metric and the log lines. */
struct tls_cert_info {
    int64_t not_before, not_after;             /* Unix seconds, of the first (leaf) certificate */
    char sha256[TLS_CERT_FINGERPRINT_LEN + 1]; /* of the leaf certificate's DER */
    unsigned chain_length;
};

/* Reads cert_path (PEM: the leaf first, then its intermediates) and key_path (PEM private
 * key) and installs them for tls_cert_callback. The paths are copied: a reload reads the
 * same files. NULL with a message in err on any failure. */
__attribute__((warn_unused_result)) struct tls_cert *
tls_cert_load(const char *cert_path, const char *key_path, char *err, size_t errlen);

/* Reads both files again: true when the new generation is now served to new handshakes,
 * false with the reason in err when the files are unreadable, do not parse, do not match,
 * or the certificate has expired — the generation in service then stays. */
__attribute__((warn_unused_result)) bool tls_cert_reload(struct tls_cert *t, char *err,
                                                         size_t errlen);

/* The generation in service. */
struct tls_cert_info tls_cert_info(const struct tls_cert *t);

/* The callback for MHD_OPTION_HTTPS_CERT_CALLBACK: a gnutls_certificate_retrieve_function2 *,
 * returned as void * so that this header needs no GnuTLS one. */
void *tls_cert_callback(void);

/* After every listener using it stopped. Frees every generation. NULL is fine. */
void tls_cert_free(struct tls_cert *t);

#endif
