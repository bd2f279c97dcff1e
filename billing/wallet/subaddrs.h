/* subaddrs — the view-only wallet knows every subaddress the database has handed out.
 *
 * A wallet-rpc whose wallet was made again from the keys (generate_from_keys), or restored
 * from an older file, knows fewer subaddresses than the invoices, tenants and payments in
 * PostgreSQL name. Such a wallet would hand an index out again at create_address (the
 * schema refuses it for a purchase: the buyer gets an error) and sees payments only to the
 * subaddresses it knows and the 200 past them (wallet2's lookahead). So before the
 * leader's first poll, and again after the wallet failed, the poller calls subaddrs_ensure:
 * one get_address for the highest index the database holds; when the wallet does not have
 * it, create_address in batches up to it, then rescan_blockchain, so that payments to the
 * re-created subaddresses in blocks the wallet had already scanned are found too (the
 * poller waits for the rescan: a wallet far below its last polled height is not polled).
 *
 * Indexes of XMR402 challenges the sweep deleted (sweep.h) are no longer in the database;
 * a wallet made again may hand those out again. Both, wallet and database, are restored
 * so in docs/OPERATIONS.md. */
#ifndef SUBADDRS_H
#define SUBADDRS_H

#include "wallet/wallet.h"
#include "xg_pg.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* monero-wallet-rpc's create_address makes at most this many at once */
#define SUBADDRS_BATCH_MAX 64

struct subaddrs_result {
    int64_t db_max;         /* the highest subaddress index in the database (0: none) */
    int64_t created;        /* subaddresses the wallet made now */
    bool rescanned;         /* rescan_blockchain was asked for (it may still be running) */
    char rescan_error[256]; /* its error, when it answered one ("" when it answered OK) */
};

/* Pure: how many create_address should make next, when the wallet's last subaddress is
 * wallet_last and the database's highest is db_max (0 .. SUBADDRS_BATCH_MAX). */
int64_t subaddrs_to_create(int64_t wallet_last, int64_t db_max);

/* Pure: the highest index a create_address answer names (address_indices, or
 * address_index for one). False when it names none. */
__attribute__((warn_unused_result)) bool subaddrs_last_created(const json_t *result, int64_t *last);

/* Reads the database's highest index with the named query bl_subaddress_max (prepared on
 * pg by its owner, the poller) and brings the wallet up to it, as above. The rescan's own
 * failure is not one of subaddrs_ensure (a rescan that outlasts the wallet's call deadline
 * goes on in the wallet): it is in out->rescan_error for the log. False, with err set, when
 * the database or a create_address failed. */
__attribute__((warn_unused_result)) bool subaddrs_ensure(struct wallet *w, struct xg_pg *pg,
                                                         struct subaddrs_result *out, char *err,
                                                         size_t errlen);

#endif
