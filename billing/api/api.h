/* api — billing's public JSON API, served on [server] bind:port by every instance
 * (leader or standby):
 *
 *   GET  /api/tiers            the plans with their current XMR quote     (api_tiers.c)
 *   POST /api/invoices         a purchase, a renewal or a free tenant      (api_invoice_create.c)
 *   GET  /api/invoices/<id>    status, payments, and settings once active (api_invoice_get.c)
 *   GET  /api/invoices/<id>/qr.svg  the QR code of what is left to pay     (api_invoice_qr.c)
 *   GET  /api/tenant           plan, valid_until, usage today (Bearer token) (api_tenant.c)
 *   POST /api/xmr402/challenge, POST /api/xmr402/verify, GET /api/xmr402/receipt-key
 *                              the XMR402 agent flow, called by the gateway (api_xmr402.h)
 *   GET  /, /renew, /invoice/<id>, /assets/<name>  the web pages (api_web.c, web.h)
 *
 * Errors are {"error":{"code":"snake_case","message":"…"}} with the matching status; every
 * code, its status and its default message are in billing's error registry (bl_error.h).
 * The API owns a pool of database connections and its rate-limit tables; it borrows the
 * wallet client and the rate source, which must outlive it. */
#ifndef API_H
#define API_H

#include "api/api_observer.h"
#include "core/bl_config.h"
#include "core/pricing.h"
#include "wallet/wallet.h"

#include <stddef.h>

struct api_options {
    const struct bl_config *cfg; /* read at start; strings copied */
    struct wallet *wallet;
    struct price_source *prices;
};

struct api;

struct api *api_start(const struct api_options *opt, char *err, size_t errlen);
void api_stop(struct api *api);
unsigned api_port(const struct api *api);

/* The route table's paths, in its order, NULL-terminated: the metrics' `route` label (the
 * pattern, never the path asked for). */
extern const char *const api_route_paths[];

/* Sets the observer (copied), once, after api_start; requests completing before it are not
 * reported. ctx must outlive api_stop. */
void api_observe(struct api *api, const struct api_observer *obs);

/* The API listener's slow-client closes and cap refusals (valid until api_stop). */
struct xg_guard_counts;
const struct xg_guard_counts *api_client_counts(const struct api *api);

/* XMR402 proofs waiting now for their transaction (verify_hold.h); 0 for NULL. */
size_t api_held_proofs(const struct api *api);

#endif
