/* api_shared — what the endpoint files of the API share (api_shared.c): the server
 * struct, error replies from billing's registry (bl_error.h), the JSON values of amounts,
 * the bearer token of a request and the tier on sale. For billing/api/ alone: the route table
 * (api.c) calls the endpoints, the endpoints call this, and this calls no endpoint. */
#ifndef API_SHARED_H
#define API_SHARED_H

#include "api/api_observer.h"
#include "api/client_limit.h"
#include "api/client_prefix.h"
#include "api/free_grant.h"
#include "api/pgpool.h"
#include "api/verify_hold.h"
#include "core/bl_error.h"
#include "core/bl_keys.h"
#include "core/pricing.h"
#include "token.h"
#include "wallet/wallet.h"
#include "xg_httpd.h"
#include "xg_proxy_addr.h"
#include "xmr402/bl_xmr402.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define API_INVOICE_ID_SIZE 40

struct web;

struct api {
    struct xg_httpd *httpd;
    struct pgpool *pool;
    struct wallet *wallet;
    struct price_source *prices;
    struct client_limit_table *create_limit, *free_limit;
    struct client_limit_table *rotate_limit; /* token rotations per client (api_tenant.c) */
    struct client_prefix_policy clients;     /* what one client and its network are */
    int64_t network_factor;                  /* a network's allowance in the tables above */
    struct free_grant_bounds free_bounds;    /* free tenants over all instances */
    struct bl_keys keys; /* ha1: HA1 wrap, client MAC; token: derivations (bl_keys.h) */
    char *realm, *gateway_url;
    int64_t invoice_ttl_s, late_grace_s;
    struct web *web; /* the pages (web.h) */
    /* XMR402 (api_xmr402.h, bl_xmr402.h) */
    struct bl_xmr402_receipt_key *receipt_key;
    struct client_limit_table *verify_limit; /* proofs per client: each costs wallet calls */
    char receipt_public_hex[2 * 32 + 1];
    char receipt_retired_hex[2 * 32 + 1]; /* [xmr402] legacy_receipt_key; "" when off */
    int64_t receipt_retired_until;        /* unix: listed only before (legacy_receipt_until) */
    int64_t xmr402_zero_conf_max, xmr402_retry_after_s;
    int64_t xmr402_pending_requests, xmr402_unseen_hold_ms;
    int64_t xmr402_max_open_challenges, xmr402_credentials_window_s;
    struct client_limit_table *verify_global; /* one bucket: proofs per second, all clients */
    struct client_limit_table *verify_share;  /* a network's share of it (fair_share.h) */
    int64_t xmr402_challenge_share;           /* percent of max_open_challenges a network holds */
    /* webhooks (hook_*.h) */
    struct xg_proxy_trust hook_allow;
    uint8_t hook_key[32];
    struct txnode *txnode;           /* the node asked before any wallet call (txnode.h) */
    struct verify_hold *verify_hold; /* proofs waiting for their transaction (verify_hold.h) */
    /* the metrics' observer (api_observe): set once, after start */
    struct api_observer observer;
    _Atomic bool observing;
};

struct api *api_of(const struct xg_httpd_request *req);

/* The error e (bl_error.h) with its status from the registry: {"error":{"code","message"}}
 * with the registry's default message (message NULL) or one worded for the case, then the
 * members of extra (stolen; NULL for none), and with retry_after_s >= 0 a Retry-After
 * header. Every error billing's API and pages answer is queued here. */
enum xg_httpd_result api_error_reply(const struct xg_httpd_request *req, enum bl_error e,
                                     const char *message, json_t *extra, int64_t retry_after_s);

/* api_error_reply with the default message (api_error) or one printf-formatted for the
 * case (api_errorf), no members added and no Retry-After. */
enum xg_httpd_result api_error(const struct xg_httpd_request *req, enum bl_error e);
enum xg_httpd_result api_errorf(const struct xg_httpd_request *req, enum bl_error e,
                                const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* 503 database_unavailable, logging the reason. */
enum xg_httpd_result api_db_error(const struct xg_httpd_request *req, struct xg_pg *pg);

/* What a lookup by id found. */
enum api_load { API_LOAD_OK, API_LOAD_NOT_FOUND, API_LOAD_DB_ERROR };

/* A plan on sale as bl_tier_get gives it: its monthly price (minor units of currency, or
 * piconero for XMR; 0 for a free tier), the confirmations it needs and the longest
 * purchase. */
struct api_tier {
    char currency[8];
    int64_t price_minor, confirmations, max_months;
};

/* The public tier id into out; API_LOAD_NOT_FOUND for no tier or one not on sale. */
__attribute__((warn_unused_result)) enum api_load api_tier_load(struct xg_pg *pg, const char *id,
                                                                struct api_tier *out);

/* The SHA-256 (hex) of the token in Authorization: Bearer <token>: returns BL_ERROR_COUNT
 * when hash holds it, else the error to answer (no bearer token, or one that is no
 * well-formed token). */
enum bl_error api_bearer_token_hash(const struct xg_httpd_request *req,
                                    char hash[TOKEN_HASH_HEX_SIZE]);

/* JSON values shared by the invoice and XMR402 answers: piconero as a decimal string, the
 * same amount as XMR text, and the monero: URI with tx_amount (new references). */
json_t *api_json_piconero(int64_t piconero);
json_t *api_json_xmr(int64_t piconero);
json_t *api_json_monero_uri(const char *address, int64_t piconero);

#endif
