/* methods — the monerod 0.18.0.0 method table and its lookups. See methods.h.
 *
 * Transcribed from monerod 0.18.0.0 src/rpc/core_rpc_server.h (the URI and JSON-RPC maps; the
 * `_IF(..., !m_restricted)` entries are what restricted mode refuses) and the handlers in
 * core_rpc_server.cpp. Both arrays are kept sorted by canonical name (strcmp order) so a lookup
 * is a binary search; the unit test fails if they are not. Aliases are few (9 JSON-RPC, 7 paths)
 * and are found by a scan of the same array, so every name is written down exactly once. */
#include "rpc/methods.h"

#include <string.h>

#define NO_ALIAS NULL

/* Short names keep each row on a few lines. */
#define WRITES true
#define READS  false

/* Tip rows are keyed by the whole request at the quorum tip; immutable rows name their key
 * (IMM_*); every other row is never cached. */
#define ROW_KEY(kind_, name_, alias_, cls_, key_, full_, writes_, weight_, pool_, desc_)           \
    ROW_TENANT(kind_, name_, alias_, cls_, key_, full_, writes_, weight_, pool_, 0, desc_)
/* tenant_: NAMES_TIP, OWN_WRITES and AGREE (methods.h: names_tip, own_writes, agree), or 0. */
#define ROW_TENANT(kind_, name_, alias_, cls_, key_, full_, writes_, weight_, pool_, tenant_,      \
                   desc_)                                                                          \
    {                                                                                              \
        .name = (name_), .aliases = {(alias_), NULL}, .kind = (kind_), .cls = (cls_),              \
        .key = (key_), .needs_full_node = (full_), .writes = (writes_), .weight = (weight_),       \
        .description = (desc_), .pool_info = (pool_), .names_tip = ((tenant_)&NAMES_TIP) != 0,     \
        .own_writes = ((tenant_)&OWN_WRITES) != 0, .agree = ((tenant_)&AGREE) != 0,                \
    }
#define NAMES_TIP  1
#define OWN_WRITES 2
#define AGREE      4
/* A tip or passthrough row with a per-tenant rule. */
#define TENANT_ROW(kind_, name_, alias_, cls_, weight_, tenant_, desc_)                            \
    ROW_TENANT(kind_, name_, alias_, cls_,                                                         \
               (cls_) == METHOD_TIP ? METHOD_KEY_TIP : METHOD_KEY_NONE, METHOD_FULL_NO, READS,     \
               weight_, false, tenant_, desc_)
#define ROW_POOL(kind_, name_, alias_, cls_, full_, writes_, weight_, pool_, desc_)                \
    ROW_KEY(kind_, name_, alias_, cls_, (cls_) == METHOD_TIP ? METHOD_KEY_TIP : METHOD_KEY_NONE,   \
            full_, writes_, weight_, pool_, desc_)
#define ROW(kind_, name_, alias_, cls_, full_, writes_, weight_, desc_)                            \
    ROW_POOL(kind_, name_, alias_, cls_, full_, writes_, weight_, false, desc_)
#define RPC(name_, alias_, cls_, full_, weight_, desc_)                                            \
    ROW(METHOD_JSON_RPC, name_, alias_, cls_, full_, READS, weight_, desc_)
#define JSON(name_, alias_, cls_, full_, weight_, desc_)                                           \
    ROW(METHOD_JSON_PATH, name_, alias_, cls_, full_, READS, weight_, desc_)
#define BIN(name_, alias_, cls_, full_, weight_, desc_)                                            \
    ROW(METHOD_BIN_PATH, name_, alias_, cls_, full_, READS, weight_, desc_)
#define IMM(kind_, name_, alias_, key_, full_, weight_, desc_)                                     \
    ROW_KEY(kind_, name_, alias_, METHOD_IMMUTABLE, key_, full_, READS, weight_, false, desc_)
#define IMM_RPC(name_, alias_, key_, full_, weight_, desc_)                                        \
    IMM(METHOD_JSON_RPC, name_, alias_, key_, full_, weight_, desc_)
#define IMM_JSON(name_, alias_, key_, full_, weight_, desc_)                                       \
    IMM(METHOD_JSON_PATH, name_, alias_, key_, full_, weight_, desc_)
#define IMM_BIN(name_, alias_, key_, full_, weight_, desc_)                                        \
    IMM(METHOD_BIN_PATH, name_, alias_, key_, full_, weight_, desc_)
#define DENY_RPC(name_, alias_, writes_, desc_)                                                    \
    ROW(METHOD_JSON_RPC, name_, alias_, METHOD_DENIED, METHOD_FULL_NO, writes_,                    \
        METHOD_WEIGHT_POINT, desc_)
#define DENY_JSON(name_, writes_, desc_)                                                           \
    ROW(METHOD_JSON_PATH, name_, NO_ALIAS, METHOD_DENIED, METHOD_FULL_NO, writes_,                 \
        METHOD_WEIGHT_POINT, desc_)

#define TIP       METHOD_TIP
#define PASS      METHOD_PASSTHROUGH
#define ANY       METHOD_FULL_NO
#define FULL      METHOD_FULL_YES
#define UNPRUNED  METHOD_FULL_UNLESS_PRUNED
#define POINT     METHOD_WEIGHT_POINT
#define BATCH     METHOD_WEIGHT_BATCH
#define RANGE     METHOD_WEIGHT_RANGE
#define BULK      METHOD_WEIGHT_BULK
#define BY_HASH   METHOD_KEY_HASH
#define BY_INDEX  METHOD_KEY_INDEX
#define BY_HEIGHT METHOD_KEY_HEIGHT
#define BY_RANGE  METHOD_KEY_RANGE
#define UNKEYED   METHOD_KEY_NONE

/* Methods inside POST /json_rpc, sorted by canonical name. */
static const struct method_info RPC_ROWS[] = {
    /* Merge-mining template builder: mining work, nothing a wallet needs. */
    DENY_RPC("add_aux_pow", NO_ALIAS, READS,
             "Adds merge-mining commitments to a block template (denied: mining)"),
    DENY_RPC("banned", NO_ALIAS, READS,
             "Tells whether an address is banned by the node (denied: restricted, peer bans)"),
    /* Restricted; one RandomX hash per call is also a cheap way to burn node CPU. */
    DENY_RPC("calc_pow", NO_ALIAS, READS,
             "Computes the proof-of-work hash of a block blob (denied: restricted, mining)"),
    DENY_RPC("flush_cache", NO_ALIAS, WRITES,
             "Drops the node's bad-tx and bad-block caches (denied: restricted, reconfigures)"),
    DENY_RPC("flush_txpool", NO_ALIAS, WRITES,
             "Removes transactions from the node's pool (denied: restricted, flushes the pool)"),
    DENY_RPC("generateblocks", NO_ALIAS, WRITES,
             "Mines blocks on a regtest node (denied: restricted, mines)"),
    DENY_RPC("get_alternate_chains", NO_ALIAS, READS,
             "Lists the node's alternative chains (denied: restricted)"),
    DENY_RPC("get_bans", NO_ALIAS, READS,
             "Lists the node's banned peers (denied: restricted, peer bans)"),
    /* By hash: fixed. By height: fixed once deep below the quorum tip. Blocks are never pruned,
     * only their transactions, so any node answers. block_header.depth is tip-relative. */
    IMM_RPC("get_block", "getblock", METHOD_KEY_HASH_OR_HEIGHT, ANY, BATCH,
            "A block by hash or height: header, blob, JSON and transaction hashes"),
    TENANT_ROW(METHOD_JSON_RPC, "get_block_count", "getblockcount", TIP, POINT, NAMES_TIP,
               "The chain height"),
    /* Also takes "hashes" (a batch); orphan_status can flip on a reorg, depth moves with the
     * tip. */
    IMM_RPC("get_block_header_by_hash", "getblockheaderbyhash", BY_HASH, ANY, POINT,
            "A block header (or several) by block hash"),
    IMM_RPC("get_block_header_by_height", "getblockheaderbyheight", BY_HEIGHT, ANY, POINT,
            "A block header by height; fixed once the height is deep"),
    IMM_RPC("get_block_headers_range", "getblockheadersrange", BY_RANGE, ANY, RANGE,
            "Block headers from start_height to end_height; fixed once end_height is deep"),
    /* Not in restricted monerod's refusals, but it is mining work and builds a template per
     * call. */
    DENY_RPC("get_block_template", "getblocktemplate", READS,
             "A block template to mine on (denied: mining)"),
    /* Restricted; also an O(count) scan of the chain per call. */
    DENY_RPC("get_coinbase_tx_sum", NO_ALIAS, READS,
             "Sums coinbase rewards and fees over a height range (denied: restricted)"),
    DENY_RPC("get_connections", NO_ALIAS, READS,
             "Lists the node's peer connections (denied: restricted, exposes peers)"),
    /* A node that inflates it takes the tenant's money: two own nodes must agree. */
    TENANT_ROW(METHOD_JSON_RPC, "get_fee_estimate", NO_ALIAS, TIP, POINT, AGREE,
               "The dynamic per-byte fee estimate and fee levels"),
    TENANT_ROW(METHOD_JSON_RPC, "get_info", NO_ALIAS, TIP, POINT, NAMES_TIP,
               "Node and chain state: height, top hash, difficulty, sync state"),
    /* Answers BUSY while the node is not synchronized. */
    TENANT_ROW(METHOD_JSON_RPC, "get_last_block_header", "getlastblockheader", TIP, POINT,
               NAMES_TIP, "The header of the top block"),
    DENY_RPC("get_miner_data", NO_ALIAS, READS,
             "Data for building a block template (denied: mining)"),
    /* to_height 0 means "up to the tip", which is what wallets send: a tip answer. With a
     * to_height deep below the quorum tip the router may treat it as immutable. Restricted
     * monerod only serves amounts == [0]. */
    TENANT_ROW(METHOD_JSON_RPC, "get_output_distribution", NO_ALIAS, TIP, BULK, AGREE,
               "Per-block output counts for decoy selection, as JSON"),
    /* Counts move with every block and recent_cutoff is wall-clock relative: never cached.
     * Restricted monerod refuses an empty amounts list and cutoffs older than 3 days. */
    RPC("get_output_histogram", NO_ALIAS, PASS, ANY, RANGE,
        "Output counts per amount (pre-RingCT decoy selection)"),
    TENANT_ROW(METHOD_JSON_RPC, "get_txpool_backlog", NO_ALIAS, PASS, BATCH, OWN_WRITES,
               "Weights and fees of the pool's transactions"),
    /* Fixed per node build; brief caching only evens out mixed-version backends. */
    RPC("get_version", NO_ALIAS, TIP, ANY, POINT, "The node's RPC version; wallets call it first"),
    RPC("hard_fork_info", NO_ALIAS, TIP, ANY, POINT, "Current hard-fork version and voting state"),
    /* The argument is a JSON array [height]. monerod 0.18 answers a height above the top with
     * an all-zero hash as a *result*, not an error: never cache that answer. */
    IMM_RPC("on_get_block_hash", "on_getblockhash", METHOD_KEY_HEIGHT_ARG, ANY, POINT,
            "The block hash at a height; fixed once the height is deep"),
    DENY_RPC("prune_blockchain", NO_ALIAS, WRITES,
             "Prunes the node's blockchain (denied: restricted, reconfigures)"),
    /* Broadcasting goes through send_raw_transaction only, so it reaches every node. */
    DENY_RPC("relay_tx", NO_ALIAS, WRITES,
             "Relays pool transactions by id (denied: restricted, floods)"),
    /* The rpc_access_* family is monerod's own pay-per-call scheme (credits mined per node).
     * The gateway bills by token; mining for credits on a backend is mining. A denial reads to
     * wallet2 as "this daemon needs no payment", which is true here. */
    DENY_RPC("rpc_access_account", NO_ALIAS, WRITES,
             "Adjusts an RPC-payment account (denied: restricted, own billing)"),
    DENY_RPC("rpc_access_data", NO_ALIAS, READS,
             "Lists RPC-payment accounts (denied: restricted, own billing)"),
    DENY_RPC("rpc_access_info", NO_ALIAS, READS,
             "RPC-payment mining parameters (denied: own billing)"),
    DENY_RPC("rpc_access_pay", NO_ALIAS, WRITES,
             "Pays RPC credits for a service (denied: own billing)"),
    DENY_RPC("rpc_access_submit_nonce", NO_ALIAS, WRITES,
             "Submits RPC-payment proof of work (denied: own billing, mining)"),
    DENY_RPC("rpc_access_tracking", NO_ALIAS, READS,
             "RPC-payment usage tracking (denied: restricted, own billing)"),
    DENY_RPC("set_bans", NO_ALIAS, WRITES, "Bans or unbans peers (denied: restricted, peer bans)"),
    /* Allowed by restricted monerod, but submitting blocks is mining. */
    DENY_RPC("submit_block", "submitblock", WRITES, "Submits a mined block (denied: mining)"),
    DENY_RPC("sync_info", NO_ALIAS, READS,
             "The node's peer and block-queue sync state (denied: restricted, exposes peers)"),
};

/* Plain JSON and epee binary endpoints, sorted by canonical path. */
static const struct method_info PATH_ROWS[] = {
    /* Open in 0.18.0.0, restricted from monerod 0.18.5.1 on; node-specific and unused by
     * wallets, so refused here for every backend version alike. */
    DENY_JSON("/get_alt_blocks_hashes", READS,
              "Hashes of the node's alternative blocks (denied: restricted in later 0.18)"),
    /* The chain supplement after the client's block_ids (up to 1000 blocks, to the tip) and
     * the current height: fixed for one body at one tip, so cached per tip (the wallet's
     * client field is stripped): synced wallets polling at the same tip send the same body
     * and share one answer (tip entries over CACHE_TIP_MAX_BYTES are not kept). A batch
     * that more blocks follow and whose blocks are settled was ended by monerod's block,
     * transaction or size limit, not by the tip: it is the same at every later tip, so it
     * is also cached as settled, whatever its size, and served with current_height made
     * the quorum's (plan.settles, plan_supplement_settled): wallets restoring from the same
     * height share every batch but the last. Stock wallets send prune=true, which any node
     * answers fully; prune=false needs the prunable data.
     * Pool information (wallets >= 0.18.3; upstream core_rpc_server.cpp on_get_blocks):
     * requested_info 1 (blocks and pool) or 2 (pool only) asks for the pool transactions
     * added and removed since pool_info_since, the daemon_time of the wallet's previous
     * answer, relative to that node's own pool. Such an answer changes without the tip
     * moving and is only meaningful against the node that gave the previous one, so
     * (plan_pool_rule): it is never served from or stored in the cache, and
     * pool_info_since is dropped from the request, which makes every node answer with its
     * whole pool (pool_info_extent full), which the wallet takes in place of what it had.
     * A wallet moved to another node therefore never skips a pool transaction, at the
     * cost of the whole pool's hashes per poll. */
    ROW_TENANT(
        METHOD_BIN_PATH, "/get_blocks.bin", "/getblocks.bin", TIP, METHOD_KEY_TIP, UNPRUNED, READS,
        BULK, true, NAMES_TIP,
        "Wallet sync: blocks, transactions and output indices after the client's known chain"),
    /* Returns whole transactions with no prune option: a pruned node silently drops the ones it
     * pruned. Stock wallets use it to find a restore height by date. */
    IMM_BIN("/get_blocks_by_height.bin", "/getblocks_by_height.bin", METHOD_KEY_HEIGHTS, FULL,
            RANGE,
            "Blocks with their full transactions, by height; fixed once every height is deep"),
    /* Like get_blocks.bin: relative to the client's block_ids and the current height. */
    BIN("/get_hashes.bin", "/gethashes.bin", PASS, ANY, RANGE,
        "Fast sync: block hashes after the client's known chain"),
    TENANT_ROW(METHOD_JSON_PATH, "/get_height", "/getheight", TIP, POINT, NAMES_TIP,
               "The chain height and top block hash"),
    TENANT_ROW(METHOD_JSON_PATH, "/get_info", "/getinfo", TIP, POINT, NAMES_TIP,
               "Node and chain state: height, top hash, difficulty, sync state"),
    /* Not refused by restricted monerod and harmless: the answering node's bandwidth caps. */
    JSON("/get_limit", NO_ALIAS, PASS, ANY, POINT, "The node's bandwidth limits"),
    DENY_JSON("/get_net_stats", READS, "The node's network traffic counters (denied: restricted)"),
    /* By txid; monerod answers "Failed" for a pool or unknown transaction. Fixed once the
     * transaction is deep, but neither request nor answer names its height, so the cache
     * cannot tell how deep it is: not stored. */
    IMM_BIN("/get_o_indexes.bin", NO_ALIAS, UNKEYED, ANY, POINT,
            "Global output indices of a mined transaction"),
    /* See get_output_distribution; the .bin form is what wallets call. A node that lies in
     * it steers the wallet's decoy selection: two own nodes must agree. */
    TENANT_ROW(METHOD_BIN_PATH, "/get_output_distribution.bin", NO_ALIAS, TIP, BULK, AGREE,
               "Per-block output counts for decoy selection, epee binary"),
    /* Output keys and commitments live in the output table, which pruning keeps: any node.
     * outs[].unlocked moves with the tip; cache only answers whose outputs are all unlocked
     * and deep. A node that lies in them chooses the wallet's ring members: two own nodes
     * must agree. */
    ROW_TENANT(METHOD_JSON_PATH, "/get_outs", NO_ALIAS, METHOD_IMMUTABLE, BY_INDEX, ANY, READS,
               BATCH, false, AGREE,
               "Output keys, commitments and heights by global index, as JSON"),
    ROW_TENANT(METHOD_BIN_PATH, "/get_outs.bin", NO_ALIAS, METHOD_IMMUTABLE, BY_INDEX, ANY, READS,
               BATCH, false, AGREE,
               "Ring members: output keys, commitments and heights by global index"),
    DENY_JSON("/get_peer_list", READS, "The node's peer list (denied: restricted, exposes peers)"),
    /* Allowed by restricted monerod; lists only peers that advertise a public RPC port. */
    JSON("/get_public_nodes", NO_ALIAS, PASS, ANY, BATCH, "Peers that advertise a public RPC port"),
    TENANT_ROW(METHOD_JSON_PATH, "/get_transaction_pool", NO_ALIAS, PASS, RANGE, OWN_WRITES,
               "Every pool transaction with its blob and spent key images"),
    TENANT_ROW(METHOD_JSON_PATH, "/get_transaction_pool_hashes", NO_ALIAS, PASS, BATCH, OWN_WRITES,
               "Hashes of the pool's transactions, hex"),
    /* Named .bin but mapped with MAP_URI_AUTO_JON2: a JSON endpoint. Polled by every wallet. */
    TENANT_ROW(METHOD_JSON_PATH, "/get_transaction_pool_hashes.bin", NO_ALIAS, PASS, BATCH,
               OWN_WRITES,
               "Hashes of the pool's transactions, as a JSON blob (JSON despite its name)"),
    TENANT_ROW(METHOD_JSON_PATH, "/get_transaction_pool_stats", NO_ALIAS, PASS, BATCH, OWN_WRITES,
               "Pool statistics: counts, sizes, fees, histogram"),
    /* Mined transactions are fixed; pool and missed ones are not, and confirmations is
     * tip-relative. Without prune=true a complete answer for an old transaction needs a full
     * node (a pruned one answers OK with the prunable part missing). */
    ROW_TENANT(METHOD_JSON_PATH, "/get_transactions", "/gettransactions", METHOD_IMMUTABLE, BY_HASH,
               UNPRUNED, READS, BATCH, false, OWN_WRITES,
               "Transactions by hash, from the chain or the pool"),
    DENY_JSON("/in_peers", WRITES,
              "Sets the node's incoming peer limit (denied: restricted, reconfigures)"),
    /* Spent status changes with every block and with the pool. */
    TENANT_ROW(METHOD_JSON_PATH, "/is_key_image_spent", NO_ALIAS, PASS, BATCH, OWN_WRITES,
               "Whether key images are spent on chain, in the pool, or unspent"),
    DENY_JSON("/mining_status", READS, "The node's miner state (denied: restricted, mining)"),
    DENY_JSON("/out_peers", WRITES,
              "Sets the node's outgoing peer limit (denied: restricted, reconfigures)"),
    DENY_JSON("/pop_blocks", WRITES,
              "Pops blocks off the node's chain (denied: restricted, rewrites the chain)"),
    DENY_JSON("/save_bc", WRITES, "Flushes the blockchain to disk (denied: restricted)"),
    ROW(METHOD_JSON_PATH, "/send_raw_transaction", "/sendrawtransaction", METHOD_BROADCAST,
        METHOD_FULL_NO, WRITES, METHOD_WEIGHT_RANGE,
        "Submits a signed transaction to the pool and relays it"),
    DENY_JSON("/set_bootstrap_daemon", WRITES,
              "Points the node at a bootstrap daemon (denied: restricted, reconfigures)"),
    DENY_JSON("/set_limit", WRITES,
              "Sets the node's bandwidth limits (denied: restricted, reconfigures)"),
    DENY_JSON("/set_log_categories", WRITES,
              "Sets the node's log categories (denied: restricted, reconfigures)"),
    DENY_JSON("/set_log_hash_rate", WRITES,
              "Toggles hash-rate logging (denied: restricted, reconfigures)"),
    DENY_JSON("/set_log_level", WRITES,
              "Sets the node's log level (denied: restricted, reconfigures)"),
    DENY_JSON("/start_mining", WRITES, "Starts the node's miner (denied: restricted, mining)"),
    DENY_JSON("/stop_daemon", WRITES, "Shuts the node down (denied: restricted, stops the node)"),
    DENY_JSON("/stop_mining", WRITES, "Stops the node's miner (denied: restricted, mining)"),
    DENY_JSON("/update", WRITES,
              "Checks for or downloads a monerod update (denied: restricted, reconfigures)"),
};

#define N_RPC  (sizeof RPC_ROWS / sizeof RPC_ROWS[0])
#define N_PATH (sizeof PATH_ROWS / sizeof PATH_ROWS[0])

/* memcmp order of a counted key against a NUL-terminated name; equals strcmp order. */
static int compare_name(const char *key, size_t len, const char *name)
{
    size_t name_len = strlen(name);
    int c = memcmp(key, name, len < name_len ? len : name_len);
    if (c != 0)
        return c;
    return (len > name_len) - (len < name_len);
}

static const struct method_info *find_canonical(const struct method_info *rows, size_t n,
                                                const char *key, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_name(key, len, rows[mid].name);
        if (c == 0)
            return &rows[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static const struct method_info *find_alias(const struct method_info *rows, size_t n,
                                            const char *key, size_t len)
{
    for (size_t i = 0; i < n; i++)
        for (size_t a = 0; a < METHODS_MAX_ALIASES && rows[i].aliases[a] != NULL; a++)
            if (compare_name(key, len, rows[i].aliases[a]) == 0)
                return &rows[i];
    return NULL;
}

static const struct method_info *find(const struct method_info *rows, size_t n, const char *key,
                                      size_t len)
{
    if (key == NULL || len == 0 || len >= METHODS_NAME_MAX)
        return NULL;
    const struct method_info *row = find_canonical(rows, n, key, len);
    return row != NULL ? row : find_alias(rows, n, key, len);
}

const struct method_info *methods_find_jsonrpc(const char *name, size_t len)
{
    return find(RPC_ROWS, N_RPC, name, len);
}

const struct method_info *methods_find_path(const char *path, size_t len)
{
    return find(PATH_ROWS, N_PATH, path, len);
}

const char *methods_class_name(enum method_class cls)
{
    switch (cls) {
    case METHOD_IMMUTABLE:
        return "immutable";
    case METHOD_TIP:
        return "tip";
    case METHOD_PASSTHROUGH:
        return "passthrough";
    case METHOD_BROADCAST:
        return "broadcast";
    case METHOD_DENIED:
        return "denied";
    }
    return "?";
}

const char *methods_kind_name(enum method_kind kind)
{
    switch (kind) {
    case METHOD_JSON_RPC:
        return "json-rpc";
    case METHOD_JSON_PATH:
        return "json";
    case METHOD_BIN_PATH:
        return "bin";
    }
    return "?";
}

const char *methods_key_name(enum method_key key)
{
    switch (key) {
    case METHOD_KEY_NONE:
        return "none";
    case METHOD_KEY_TIP:
        return "tip";
    case METHOD_KEY_HASH:
        return "hash";
    case METHOD_KEY_INDEX:
        return "index";
    case METHOD_KEY_HEIGHT:
        return "height";
    case METHOD_KEY_HASH_OR_HEIGHT:
        return "hash or height";
    case METHOD_KEY_RANGE:
        return "range";
    case METHOD_KEY_HEIGHT_ARG:
        return "[height]";
    case METHOD_KEY_HEIGHTS:
        return "heights";
    }
    return "?";
}

const char *methods_full_node_name(enum method_full_node need)
{
    switch (need) {
    case METHOD_FULL_NO:
        return "no";
    case METHOD_FULL_YES:
        return "yes";
    case METHOD_FULL_UNLESS_PRUNED:
        return "unless prune";
    }
    return "?";
}

size_t methods_count(void)
{
    return N_RPC + N_PATH;
}

const struct method_info *methods_at(size_t i)
{
    if (i < N_RPC)
        return &RPC_ROWS[i];
    if (i < N_RPC + N_PATH)
        return &PATH_ROWS[i - N_RPC];
    return NULL;
}
