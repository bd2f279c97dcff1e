/* tls_cert — the HTTPS listener's certificate, swapped atomically on reload. */
#include "http/tls_cert.h"

#include "xg_file.h"
#include "xg_hex.h"

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TLS_CERT_MAX_CHAIN 16

/* One loaded pair: what the callback hands GnuTLS. */
struct tls_cert_gen {
    gnutls_pcert_st chain[TLS_CERT_MAX_CHAIN];
    unsigned chain_length;
    gnutls_privkey_t key;
    struct tls_cert_info info;
    struct tls_cert_gen *retired; /* the generation this one replaced (kept, see the header) */
};

struct tls_cert {
    char *cert_path, *key_path;
    struct tls_cert_gen *current; /* also `serving`, which the callback reads */
};

/* The generation in service, for the callback (GnuTLS gives it no closure). */
static _Atomic(struct tls_cert_gen *) serving;
static atomic_bool installed;

static void gen_free(struct tls_cert_gen *g)
{
    while (g) {
        struct tls_cert_gen *older = g->retired;
        for (unsigned i = 0; i < g->chain_length; i++)
            gnutls_pcert_deinit(&g->chain[i]);
        if (g->key)
            gnutls_privkey_deinit(g->key);
        free(g);
        g = older;
    }
}

/* The leaf's validity and fingerprint. */
static bool leaf_info(const gnutls_datum_t *der, struct tls_cert_info *info, char *err,
                      size_t errlen)
{
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) < 0) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    bool ok = false;
    unsigned char digest[32];
    size_t dlen = sizeof digest;
    int rc = gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER);
    if (rc < 0 ||
        (rc = gnutls_x509_crt_get_fingerprint(crt, GNUTLS_DIG_SHA256, digest, &dlen)) < 0) {
        snprintf(err, errlen, "certificate: %s", gnutls_strerror(rc));
        goto out;
    }
    info->not_before = (int64_t)gnutls_x509_crt_get_activation_time(crt);
    info->not_after = (int64_t)gnutls_x509_crt_get_expiration_time(crt);
    xg_hex_encode(digest, dlen, info->sha256);
    ok = true;
out:
    gnutls_x509_crt_deinit(crt);
    return ok;
}

/* Whether key is the private half of the leaf's public key (their key ids agree). */
static bool key_matches(struct tls_cert_gen *g)
{
    unsigned char cert_id[64], key_id[64];
    size_t cert_len = sizeof cert_id, key_len = sizeof key_id;
    gnutls_pubkey_t pub;
    if (gnutls_pubkey_init(&pub) < 0)
        return false;
    bool ok = gnutls_pubkey_import_privkey(pub, g->key, 0, 0) == 0 &&
              gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, key_id, &key_len) == 0 &&
              gnutls_pubkey_get_key_id(g->chain[0].pubkey, GNUTLS_KEYID_USE_SHA256, cert_id,
                                       &cert_len) == 0 &&
              cert_len == key_len && memcmp(cert_id, key_id, key_len) == 0;
    gnutls_pubkey_deinit(pub);
    return ok;
}

/* Reads and checks one pair; NULL with the reason in err. */
static struct tls_cert_gen *gen_read(const char *cert_path, const char *key_path, char *err,
                                     size_t errlen)
{
    char *cert_pem = NULL, *key_pem = NULL;
    size_t cert_len = 0, key_len = 0;
    struct tls_cert_gen *g = calloc(1, sizeof *g);
    int rc;
    if (!g) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (!xg_file_read(cert_path, &cert_pem, &cert_len)) {
        snprintf(err, errlen, "cannot read %s", cert_path);
        goto fail;
    }
    if (!xg_file_read(key_path, &key_pem, &key_len)) {
        snprintf(err, errlen, "cannot read %s", key_path);
        goto fail;
    }
    gnutls_datum_t cert_data = {(unsigned char *)cert_pem, (unsigned)cert_len};
    gnutls_datum_t key_data = {(unsigned char *)key_pem, (unsigned)key_len};
    g->chain_length = TLS_CERT_MAX_CHAIN;
    rc = gnutls_pcert_list_import_x509_raw(g->chain, &g->chain_length, &cert_data,
                                           GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || g->chain_length == 0) {
        g->chain_length = 0;
        snprintf(err, errlen, "%s: no PEM certificate (%s)", cert_path,
                 rc < 0 ? gnutls_strerror(rc) : "empty");
        goto fail;
    }
    if ((rc = gnutls_privkey_init(&g->key)) < 0 ||
        (rc = gnutls_privkey_import_x509_raw(g->key, &key_data, GNUTLS_X509_FMT_PEM, NULL, 0)) <
            0) {
        snprintf(err, errlen, "%s: no PEM private key (%s)", key_path, gnutls_strerror(rc));
        goto fail;
    }
    if (!key_matches(g)) {
        snprintf(err, errlen, "%s is not the key of the first certificate in %s", key_path,
                 cert_path);
        goto fail;
    }
    if (!leaf_info(&g->chain[0].cert, &g->info, err, errlen))
        goto fail;
    g->info.chain_length = g->chain_length;
    if (g->info.not_after <= (int64_t)time(NULL)) {
        snprintf(err, errlen, "%s has expired", cert_path);
        goto fail;
    }
    free(cert_pem);
    free(key_pem);
    return g;
fail:
    free(cert_pem);
    free(key_pem);
    gen_free(g);
    return NULL;
}

struct tls_cert *tls_cert_load(const char *cert_path, const char *key_path, char *err,
                               size_t errlen)
{
    if (atomic_exchange(&installed, true)) {
        snprintf(err, errlen, "a listener certificate is already installed");
        return NULL;
    }
    struct tls_cert *t = calloc(1, sizeof *t);
    if (!t || !(t->cert_path = strdup(cert_path)) || !(t->key_path = strdup(key_path))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    t->current = gen_read(cert_path, key_path, err, errlen);
    if (!t->current)
        goto fail;
    atomic_store(&serving, t->current);
    return t;
fail:
    if (t) {
        free(t->cert_path);
        free(t->key_path);
        free(t);
    }
    atomic_store(&installed, false);
    return NULL;
}

bool tls_cert_reload(struct tls_cert *t, char *err, size_t errlen)
{
    struct tls_cert_gen *fresh = gen_read(t->cert_path, t->key_path, err, errlen);
    if (!fresh)
        return false;
    fresh->retired = t->current;
    t->current = fresh;
    atomic_store(&serving, fresh);
    return true;
}

struct tls_cert_info tls_cert_info(const struct tls_cert *t)
{
    return t->current->info;
}

/* gnutls_certificate_retrieve_function2: the generation in service, whatever was asked
 * (one certificate, no SNI choice). GnuTLS does not free what it is given. */
static int on_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                       const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                       gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
    (void)session, (void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
    struct tls_cert_gen *g = atomic_load(&serving);
    if (!g)
        return -1;
    *pcert = g->chain;
    *pcert_length = g->chain_length;
    *pkey = g->key;
    return 0;
}

void *tls_cert_callback(void)
{
    gnutls_certificate_retrieve_function2 *fn = on_retrieve;
    return (void *)fn;
}

void tls_cert_free(struct tls_cert *t)
{
    if (!t)
        return;
    atomic_store(&serving, NULL);
    gen_free(t->current);
    free(t->cert_path);
    free(t->key_path);
    free(t);
    atomic_store(&installed, false);
}
