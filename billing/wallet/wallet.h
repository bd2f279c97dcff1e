/* wallet — billing's client for the view-only monero-wallet-rpc (JSON-RPC at
 * <url>/json_rpc). Every call has the configured deadline; calls are serialized on one
 * keep-alive connection (wallet-rpc serves one request at a time anyway), so the
 * poller thread and the API threads share one struct wallet safely.
 *
 * Retrying is the caller's business (the poller backs off between cycles; the API
 * answers 503). Errors come back as text in err; nothing here logs. Subaddresses are in
 * account 0. */
#ifndef WALLET_H
#define WALLET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WALLET_ADDRESS_SIZE 128
#define WALLET_TXID_SIZE    65

struct wallet;

struct wallet_transfer {
    char txid[WALLET_TXID_SIZE];
    int64_t subaddr_index; /* minor index in account 0                          */
    int64_t amount;        /* piconero received by this subaddress in this tx   */
    int64_t height;        /* 0 while in the pool                               */
    bool pool;
    bool double_spend_seen;
    int64_t unlock_time;
};

/* base_url like "http://127.0.0.1:18083" (copied). NULL when out of memory. */
struct wallet *wallet_new(const char *base_url, long timeout_ms);
void wallet_free(struct wallet *w);

/* Changes the per-call deadline (reload). */
void wallet_set_timeout(struct wallet *w, long timeout_ms);

/* Raw call: returns the "result" object (new reference) or NULL with err set. params
 * is stolen (may be NULL). */
json_t *wallet_call(struct wallet *w, const char *method, json_t *params, char *err, size_t errlen);

/* create_address in account 0: the new subaddress's index and address. */
__attribute__((warn_unused_result)) bool wallet_create_address(struct wallet *w, const char *label,
                                                               int64_t *index, char *address,
                                                               size_t address_len, char *err,
                                                               size_t errlen);

/* get_height: the wallet's chain height (the number of blocks it has scanned, i.e. top
 * block height + 1). */
__attribute__((warn_unused_result)) bool wallet_get_height(struct wallet *w, int64_t *height,
                                                           char *err, size_t errlen);

/* refresh: scans new blocks now rather than at the wallet's next auto-refresh. */
__attribute__((warn_unused_result)) bool wallet_refresh(struct wallet *w, char *err, size_t errlen);

/* get_transfers {in, pool} of account 0 with height > min_height (pool transfers
 * always). *out is malloc'd (caller frees); entries with an unusable shape (a txid that
 * is not 64 hex digits, a non-positive amount, another account) are skipped. */
__attribute__((warn_unused_result)) bool wallet_get_transfers(struct wallet *w, int64_t min_height,
                                                              struct wallet_transfer **out,
                                                              size_t *count, char *err,
                                                              size_t errlen);

/* Pure: parses one entry of get_transfers' "in" or "pool" list. False when unusable. */
__attribute__((warn_unused_result)) bool wallet_parse_transfer(const json_t *entry, bool pool,
                                                               struct wallet_transfer *out);

/* For XMR402 (later): check_tx_proof and get_transfer_by_txid answers, raw. */
json_t *wallet_check_tx_proof(struct wallet *w, const char *txid, const char *address,
                              const char *message, const char *signature, char *err, size_t errlen);
json_t *wallet_get_transfer_by_txid(struct wallet *w, const char *txid, char *err, size_t errlen);

#endif
