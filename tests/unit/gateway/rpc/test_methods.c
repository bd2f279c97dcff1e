/* Table tests for gateway/methods: the table against monerod 0.18.0.0's own URI and JSON-RPC
 * maps, alias resolution, the denied set, classes, weights and lookup edge cases. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "rpc/methods.h"

/* Every name monerod 0.18.0.0 maps (src/rpc/core_rpc_server.h), in map order, with the macro's
 * kind, whether it is an `_IF(..., !m_restricted)` entry, and the handler it calls. Written down
 * independently of the table so the two check each other. */
struct monerod_name {
    const char *name;
    enum method_kind kind;
    bool restricted;
    const char *handler;
};

static const struct monerod_name MONEROD_0_18_0_0[] = {
    {"/get_height", METHOD_JSON_PATH, false, "on_get_height"},
    {"/getheight", METHOD_JSON_PATH, false, "on_get_height"},
    {"/get_blocks.bin", METHOD_BIN_PATH, false, "on_get_blocks"},
    {"/getblocks.bin", METHOD_BIN_PATH, false, "on_get_blocks"},
    {"/get_blocks_by_height.bin", METHOD_BIN_PATH, false, "on_get_blocks_by_height"},
    {"/getblocks_by_height.bin", METHOD_BIN_PATH, false, "on_get_blocks_by_height"},
    {"/get_hashes.bin", METHOD_BIN_PATH, false, "on_get_hashes"},
    {"/gethashes.bin", METHOD_BIN_PATH, false, "on_get_hashes"},
    {"/get_o_indexes.bin", METHOD_BIN_PATH, false, "on_get_indexes"},
    {"/get_outs.bin", METHOD_BIN_PATH, false, "on_get_outs_bin"},
    {"/get_transactions", METHOD_JSON_PATH, false, "on_get_transactions"},
    {"/gettransactions", METHOD_JSON_PATH, false, "on_get_transactions"},
    {"/get_alt_blocks_hashes", METHOD_JSON_PATH, false, "on_get_alt_blocks_hashes"},
    {"/is_key_image_spent", METHOD_JSON_PATH, false, "on_is_key_image_spent"},
    {"/send_raw_transaction", METHOD_JSON_PATH, false, "on_send_raw_tx"},
    {"/sendrawtransaction", METHOD_JSON_PATH, false, "on_send_raw_tx"},
    {"/start_mining", METHOD_JSON_PATH, true, "on_start_mining"},
    {"/stop_mining", METHOD_JSON_PATH, true, "on_stop_mining"},
    {"/mining_status", METHOD_JSON_PATH, true, "on_mining_status"},
    {"/save_bc", METHOD_JSON_PATH, true, "on_save_bc"},
    {"/get_peer_list", METHOD_JSON_PATH, true, "on_get_peer_list"},
    {"/get_public_nodes", METHOD_JSON_PATH, false, "on_get_public_nodes"},
    {"/set_log_hash_rate", METHOD_JSON_PATH, true, "on_set_log_hash_rate"},
    {"/set_log_level", METHOD_JSON_PATH, true, "on_set_log_level"},
    {"/set_log_categories", METHOD_JSON_PATH, true, "on_set_log_categories"},
    {"/get_transaction_pool", METHOD_JSON_PATH, false, "on_get_transaction_pool"},
    {"/get_transaction_pool_hashes.bin", METHOD_JSON_PATH, false,
     "on_get_transaction_pool_hashes_bin"},
    {"/get_transaction_pool_hashes", METHOD_JSON_PATH, false, "on_get_transaction_pool_hashes"},
    {"/get_transaction_pool_stats", METHOD_JSON_PATH, false, "on_get_transaction_pool_stats"},
    {"/set_bootstrap_daemon", METHOD_JSON_PATH, true, "on_set_bootstrap_daemon"},
    {"/stop_daemon", METHOD_JSON_PATH, true, "on_stop_daemon"},
    {"/get_info", METHOD_JSON_PATH, false, "on_get_info"},
    {"/getinfo", METHOD_JSON_PATH, false, "on_get_info"},
    {"/get_net_stats", METHOD_JSON_PATH, true, "on_get_net_stats"},
    {"/get_limit", METHOD_JSON_PATH, false, "on_get_limit"},
    {"/set_limit", METHOD_JSON_PATH, true, "on_set_limit"},
    {"/out_peers", METHOD_JSON_PATH, true, "on_out_peers"},
    {"/in_peers", METHOD_JSON_PATH, true, "on_in_peers"},
    {"/get_outs", METHOD_JSON_PATH, false, "on_get_outs"},
    {"/update", METHOD_JSON_PATH, true, "on_update"},
    {"/get_output_distribution.bin", METHOD_BIN_PATH, false, "on_get_output_distribution_bin"},
    {"/pop_blocks", METHOD_JSON_PATH, true, "on_pop_blocks"},
    {"get_block_count", METHOD_JSON_RPC, false, "on_getblockcount"},
    {"getblockcount", METHOD_JSON_RPC, false, "on_getblockcount"},
    {"on_get_block_hash", METHOD_JSON_RPC, false, "on_getblockhash"},
    {"on_getblockhash", METHOD_JSON_RPC, false, "on_getblockhash"},
    {"get_block_template", METHOD_JSON_RPC, false, "on_getblocktemplate"},
    {"getblocktemplate", METHOD_JSON_RPC, false, "on_getblocktemplate"},
    {"get_miner_data", METHOD_JSON_RPC, false, "on_getminerdata"},
    {"calc_pow", METHOD_JSON_RPC, true, "on_calcpow"},
    {"add_aux_pow", METHOD_JSON_RPC, false, "on_add_aux_pow"},
    {"submit_block", METHOD_JSON_RPC, false, "on_submitblock"},
    {"submitblock", METHOD_JSON_RPC, false, "on_submitblock"},
    {"generateblocks", METHOD_JSON_RPC, true, "on_generateblocks"},
    {"get_last_block_header", METHOD_JSON_RPC, false, "on_get_last_block_header"},
    {"getlastblockheader", METHOD_JSON_RPC, false, "on_get_last_block_header"},
    {"get_block_header_by_hash", METHOD_JSON_RPC, false, "on_get_block_header_by_hash"},
    {"getblockheaderbyhash", METHOD_JSON_RPC, false, "on_get_block_header_by_hash"},
    {"get_block_header_by_height", METHOD_JSON_RPC, false, "on_get_block_header_by_height"},
    {"getblockheaderbyheight", METHOD_JSON_RPC, false, "on_get_block_header_by_height"},
    {"get_block_headers_range", METHOD_JSON_RPC, false, "on_get_block_headers_range"},
    {"getblockheadersrange", METHOD_JSON_RPC, false, "on_get_block_headers_range"},
    {"get_block", METHOD_JSON_RPC, false, "on_get_block"},
    {"getblock", METHOD_JSON_RPC, false, "on_get_block"},
    {"get_connections", METHOD_JSON_RPC, true, "on_get_connections"},
    {"get_info", METHOD_JSON_RPC, false, "on_get_info_json"},
    {"hard_fork_info", METHOD_JSON_RPC, false, "on_hard_fork_info"},
    {"set_bans", METHOD_JSON_RPC, true, "on_set_bans"},
    {"get_bans", METHOD_JSON_RPC, true, "on_get_bans"},
    {"banned", METHOD_JSON_RPC, true, "on_banned"},
    {"flush_txpool", METHOD_JSON_RPC, true, "on_flush_txpool"},
    {"get_output_histogram", METHOD_JSON_RPC, false, "on_get_output_histogram"},
    {"get_version", METHOD_JSON_RPC, false, "on_get_version"},
    {"get_coinbase_tx_sum", METHOD_JSON_RPC, true, "on_get_coinbase_tx_sum"},
    {"get_fee_estimate", METHOD_JSON_RPC, false, "on_get_base_fee_estimate"},
    {"get_alternate_chains", METHOD_JSON_RPC, true, "on_get_alternate_chains"},
    {"relay_tx", METHOD_JSON_RPC, true, "on_relay_tx"},
    {"sync_info", METHOD_JSON_RPC, true, "on_sync_info"},
    {"get_txpool_backlog", METHOD_JSON_RPC, false, "on_get_txpool_backlog"},
    {"get_output_distribution", METHOD_JSON_RPC, false, "on_get_output_distribution"},
    {"prune_blockchain", METHOD_JSON_RPC, true, "on_prune_blockchain"},
    {"flush_cache", METHOD_JSON_RPC, true, "on_flush_cache"},
    {"rpc_access_info", METHOD_JSON_RPC, false, "on_rpc_access_info"},
    {"rpc_access_submit_nonce", METHOD_JSON_RPC, false, "on_rpc_access_submit_nonce"},
    {"rpc_access_pay", METHOD_JSON_RPC, false, "on_rpc_access_pay"},
    {"rpc_access_tracking", METHOD_JSON_RPC, true, "on_rpc_access_tracking"},
    {"rpc_access_data", METHOD_JSON_RPC, true, "on_rpc_access_data"},
    {"rpc_access_account", METHOD_JSON_RPC, true, "on_rpc_access_account"},
};

#define N_MONEROD (sizeof MONEROD_0_18_0_0 / sizeof MONEROD_0_18_0_0[0])

static bool is_path_kind(enum method_kind kind)
{
    return kind == METHOD_JSON_PATH || kind == METHOD_BIN_PATH;
}

/* Looks a name up in the namespace its kind lives in. */
static const struct method_info *find_as(enum method_kind kind, const char *name)
{
    return is_path_kind(kind) ? methods_find_path(name, strlen(name))
                              : methods_find_jsonrpc(name, strlen(name));
}

static const struct method_info *rpc(const char *name)
{
    const struct method_info *m = methods_find_jsonrpc(name, strlen(name));
    if (m == NULL)
        fail_msg("JSON-RPC method %s not found", name);
    return m;
}

static const struct method_info *path(const char *name)
{
    const struct method_info *m = methods_find_path(name, strlen(name));
    if (m == NULL)
        fail_msg("path %s not found", name);
    return m;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static size_t alias_count(const struct method_info *m)
{
    size_t n = 0;
    while (n < METHODS_MAX_ALIASES && m->aliases[n] != NULL)
        n++;
    return n;
}

static void test_every_monerod_name_resolves_with_its_kind(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_MONEROD; i++) {
        const struct monerod_name *mn = &MONEROD_0_18_0_0[i];
        const struct method_info *m = find_as(mn->kind, mn->name);
        if (m == NULL)
            fail_msg("%s is not in the table", mn->name);
        if (m->kind != mn->kind)
            fail_msg("%s: kind %s, monerod maps it as %s", mn->name, methods_kind_name(m->kind),
                     methods_kind_name(mn->kind));
        if (mn->restricted && m->cls != METHOD_DENIED)
            fail_msg("%s is refused by restricted monerod but is %s", mn->name,
                     methods_class_name(m->cls));
    }
}

static void test_names_sharing_a_handler_share_a_row(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_MONEROD; i++) {
        for (size_t j = i + 1; j < N_MONEROD; j++) {
            const struct monerod_name *a = &MONEROD_0_18_0_0[i], *b = &MONEROD_0_18_0_0[j];
            if (is_path_kind(a->kind) != is_path_kind(b->kind))
                continue;
            bool same_handler = strcmp(a->handler, b->handler) == 0;
            bool same_row = find_as(a->kind, a->name) == find_as(b->kind, b->name);
            if (same_handler != same_row)
                fail_msg("%s and %s: same handler %d, same row %d", a->name, b->name, same_handler,
                         same_row);
        }
    }
}

static bool is_monerod_name(const char *name, bool as_path)
{
    for (size_t i = 0; i < N_MONEROD; i++)
        if (is_path_kind(MONEROD_0_18_0_0[i].kind) == as_path &&
            strcmp(MONEROD_0_18_0_0[i].name, name) == 0)
            return true;
    return false;
}

static void test_table_has_no_name_monerod_lacks(void **state)
{
    (void)state;
    size_t names = 0;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        bool as_path = is_path_kind(m->kind);
        if (!is_monerod_name(m->name, as_path))
            fail_msg("%s is not a monerod 0.18.0.0 name", m->name);
        names++;
        for (size_t a = 0; a < alias_count(m); a++) {
            if (!is_monerod_name(m->aliases[a], as_path))
                fail_msg("alias %s is not a monerod 0.18.0.0 name", m->aliases[a]);
            names++;
        }
    }
    assert_int_equal(names, N_MONEROD);
    /* Newer monerod only, and light-wallet server endpoints wallet2 can also speak. */
    assert_null(methods_find_jsonrpc("get_txids_loose", strlen("get_txids_loose")));
    assert_null(methods_find_path("/get_address_info", strlen("/get_address_info")));
    assert_null(methods_find_path("/get_random_outs", strlen("/get_random_outs")));
    assert_null(methods_find_path("/login", strlen("/login")));
}

static void test_every_alias_resolves_to_its_canonical_row(void **state)
{
    (void)state;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        assert_ptr_equal(find_as(m->kind, m->name), m);
        for (size_t a = 0; a < alias_count(m); a++)
            if (find_as(m->kind, m->aliases[a]) != m)
                fail_msg("alias %s does not resolve to %s", m->aliases[a], m->name);
        for (size_t a = alias_count(m); a < METHODS_MAX_ALIASES; a++)
            assert_null(m->aliases[a]);
    }
    assert_ptr_equal(rpc("getblockcount"), rpc("get_block_count"));
    assert_ptr_equal(rpc("on_getblockhash"), rpc("on_get_block_hash"));
    assert_ptr_equal(path("/sendrawtransaction"), path("/send_raw_transaction"));
    assert_ptr_equal(path("/getheight"), path("/get_height"));
    assert_ptr_equal(path("/gettransactions"), path("/get_transactions"));
    assert_ptr_equal(path("/getinfo"), path("/get_info"));
    assert_ptr_equal(path("/getblocks.bin"), path("/get_blocks.bin"));
    assert_string_equal(path("/getblocks.bin")->name, "/get_blocks.bin");
}

static void collect_names(const char **out, size_t cap, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        assert_true(*n < cap);
        out[(*n)++] = m->name;
        for (size_t a = 0; a < alias_count(m); a++) {
            assert_true(*n < cap);
            out[(*n)++] = m->aliases[a];
        }
    }
}

static void test_names_are_unique(void **state)
{
    (void)state;
    const char *names[256];
    size_t n;
    collect_names(names, sizeof names / sizeof names[0], &n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[i], names[j]) == 0)
                fail_msg("%s appears twice", names[i]);
}

static void test_rows_are_sorted_rpc_then_paths(void **state)
{
    (void)state;
    const struct method_info *prev = NULL;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        if (prev != NULL && is_path_kind(prev->kind) == is_path_kind(m->kind) &&
            strcmp(prev->name, m->name) >= 0)
            fail_msg("%s sorts before %s", m->name, prev->name);
        if (prev != NULL && is_path_kind(prev->kind) && !is_path_kind(m->kind))
            fail_msg("JSON-RPC row %s after the paths", m->name);
        prev = m;
    }
    assert_null(methods_at(methods_count()));
    assert_null(methods_at((size_t)-1));
}

static void test_dangerous_methods_are_denied(void **state)
{
    (void)state;
    static const char *const rpc_denied[] = {
        "generateblocks",
        "set_bans",
        "get_bans",
        "banned",
        "flush_txpool",
        "relay_tx",
        "sync_info",
        "get_connections",
        "prune_blockchain",
        "flush_cache",
        "calc_pow",
        "add_aux_pow",
        "get_block_template",
        "getblocktemplate",
        "get_miner_data",
        "submit_block",
        "submitblock",
        "get_coinbase_tx_sum",
        "get_alternate_chains",
        "rpc_access_info",
        "rpc_access_submit_nonce",
        "rpc_access_pay",
        "rpc_access_tracking",
        "rpc_access_data",
        "rpc_access_account",
    };
    static const char *const path_denied[] = {
        "/start_mining", "/stop_mining",   "/mining_status",     "/save_bc",
        "/stop_daemon",  "/set_log_level", "/set_log_hash_rate", "/set_log_categories",
        "/set_limit",    "/out_peers",     "/in_peers",          "/set_bootstrap_daemon",
        "/update",       "/pop_blocks",    "/get_peer_list",     "/get_net_stats",
    };
    for (size_t i = 0; i < sizeof rpc_denied / sizeof rpc_denied[0]; i++)
        if (rpc(rpc_denied[i])->cls != METHOD_DENIED)
            fail_msg("%s is not denied", rpc_denied[i]);
    for (size_t i = 0; i < sizeof path_denied / sizeof path_denied[0]; i++)
        if (path(path_denied[i])->cls != METHOD_DENIED)
            fail_msg("%s is not denied", path_denied[i]);
}

static void test_what_wallets_need_is_not_denied(void **state)
{
    (void)state;
    static const char *const rpc_open[] = {
        "get_version",
        "get_info",
        "hard_fork_info",
        "get_fee_estimate",
        "getblockheaderbyheight",
        "getblockheadersrange",
        "get_output_histogram",
        "get_output_distribution",
        "get_txpool_backlog",
        "get_last_block_header",
        "get_block_count",
        "get_block",
    };
    static const char *const path_open[] = {
        "/getblocks.bin",           "/gethashes.bin",
        "/getblocks_by_height.bin", "/get_outs.bin",
        "/get_o_indexes.bin",       "/get_output_distribution.bin",
        "/gettransactions",         "/is_key_image_spent",
        "/sendrawtransaction",      "/get_transaction_pool_hashes.bin",
        "/get_public_nodes",        "/getheight",
    };
    for (size_t i = 0; i < sizeof rpc_open / sizeof rpc_open[0]; i++)
        if (rpc(rpc_open[i])->cls == METHOD_DENIED)
            fail_msg("%s is denied", rpc_open[i]);
    for (size_t i = 0; i < sizeof path_open / sizeof path_open[0]; i++)
        if (path(path_open[i])->cls == METHOD_DENIED)
            fail_msg("%s is denied", path_open[i]);
}

static void test_classes_of_key_methods(void **state)
{
    (void)state;
    assert_int_equal(rpc("get_info")->cls, METHOD_TIP);
    assert_int_equal(path("/getinfo")->cls, METHOD_TIP);
    assert_int_equal(path("/get_height")->cls, METHOD_TIP);
    assert_int_equal(rpc("getblockcount")->cls, METHOD_TIP);
    assert_int_equal(rpc("get_last_block_header")->cls, METHOD_TIP);
    assert_int_equal(rpc("get_fee_estimate")->cls, METHOD_TIP);
    assert_int_equal(rpc("hard_fork_info")->cls, METHOD_TIP);
    assert_int_equal(rpc("get_version")->cls, METHOD_TIP);

    assert_int_equal(rpc("get_block")->cls, METHOD_IMMUTABLE);
    assert_int_equal(rpc("getblockheaderbyhash")->cls, METHOD_IMMUTABLE);
    assert_int_equal(rpc("get_block_header_by_height")->cls, METHOD_IMMUTABLE);
    assert_int_equal(rpc("on_getblockhash")->cls, METHOD_IMMUTABLE);
    assert_int_equal(path("/gettransactions")->cls, METHOD_IMMUTABLE);
    assert_int_equal(path("/get_outs")->cls, METHOD_IMMUTABLE);
    assert_int_equal(path("/get_outs.bin")->cls, METHOD_IMMUTABLE);
    assert_int_equal(path("/get_o_indexes.bin")->cls, METHOD_IMMUTABLE);
    assert_int_equal(path("/getblocks_by_height.bin")->cls, METHOD_IMMUTABLE);

    /* One answer per body and tip: synced wallets polling at one tip share it. */
    assert_int_equal(path("/getblocks.bin")->cls, METHOD_TIP);
    assert_int_equal(path("/gethashes.bin")->cls, METHOD_PASSTHROUGH);
    assert_int_equal(path("/is_key_image_spent")->cls, METHOD_PASSTHROUGH);
    assert_int_equal(path("/get_transaction_pool")->cls, METHOD_PASSTHROUGH);
    assert_int_equal(path("/get_transaction_pool_hashes.bin")->cls, METHOD_PASSTHROUGH);
    assert_int_equal(rpc("get_txpool_backlog")->cls, METHOD_PASSTHROUGH);

    assert_int_equal(path("/sendrawtransaction")->cls, METHOD_BROADCAST);
}

static void test_only_broadcast_and_denied_rows_write(void **state)
{
    (void)state;
    size_t broadcasts = 0;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        if (m->writes && m->cls != METHOD_BROADCAST && m->cls != METHOD_DENIED)
            fail_msg("%s writes but is %s", m->name, methods_class_name(m->cls));
        if (m->cls == METHOD_BROADCAST) {
            assert_true(m->writes);
            broadcasts++;
        }
    }
    assert_int_equal(broadcasts, 1);
    assert_true(path("/send_raw_transaction")->writes);
    assert_true(rpc("relay_tx")->writes);
    assert_true(rpc("submit_block")->writes);
    assert_true(path("/stop_daemon")->writes);
    assert_false(rpc("get_info")->writes);
    assert_false(path("/getblocks.bin")->writes);
}

static void test_full_node_needs(void **state)
{
    (void)state;
    assert_int_equal(path("/gettransactions")->needs_full_node, METHOD_FULL_UNLESS_PRUNED);
    assert_int_equal(path("/getblocks.bin")->needs_full_node, METHOD_FULL_UNLESS_PRUNED);
    assert_int_equal(path("/getblocks_by_height.bin")->needs_full_node, METHOD_FULL_YES);
    /* Pruning keeps the output table and every block; only prunable tx data goes. */
    assert_int_equal(path("/get_outs.bin")->needs_full_node, METHOD_FULL_NO);
    assert_int_equal(path("/get_o_indexes.bin")->needs_full_node, METHOD_FULL_NO);
    assert_int_equal(path("/is_key_image_spent")->needs_full_node, METHOD_FULL_NO);
    assert_int_equal(rpc("get_block")->needs_full_node, METHOD_FULL_NO);
    assert_int_equal(rpc("get_info")->needs_full_node, METHOD_FULL_NO);
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        if (m->cls == METHOD_DENIED)
            assert_int_equal(m->needs_full_node, METHOD_FULL_NO);
    }
}

static void test_weights_follow_the_scale(void **state)
{
    (void)state;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        if (m->weight != METHOD_WEIGHT_POINT && m->weight != METHOD_WEIGHT_BATCH &&
            m->weight != METHOD_WEIGHT_RANGE && m->weight != METHOD_WEIGHT_BULK)
            fail_msg("%s has weight %u, off the scale", m->name, m->weight);
        if (m->cls == METHOD_DENIED)
            assert_int_equal(m->weight, METHOD_WEIGHT_POINT);
        /* Tip answers are one record, but for the two bulk transfers cached per tip. */
        if (m->cls == METHOD_TIP && strstr(m->name, "distribution") == NULL &&
            strcmp(m->name, "/get_blocks.bin") != 0)
            assert_int_equal(m->weight, METHOD_WEIGHT_POINT);
    }
    assert_int_equal(path("/getblocks.bin")->weight, METHOD_WEIGHT_BULK);
    assert_int_equal(path("/get_output_distribution.bin")->weight, METHOD_WEIGHT_BULK);
    assert_int_equal(rpc("get_info")->weight, 1);
    assert_int_equal(path("/getheight")->weight, 1);
    assert_true(path("/gettransactions")->weight > rpc("get_info")->weight);
    assert_true(path("/getblocks.bin")->weight > path("/gettransactions")->weight);
}

static void check_kind_matches_name(const struct method_info *m, const char *name)
{
    if (m->kind == METHOD_JSON_RPC) {
        if (strchr(name, '/') != NULL || strchr(name, '.') != NULL)
            fail_msg("JSON-RPC name %s looks like a path", name);
        return;
    }
    if (name[0] != '/')
        fail_msg("path %s does not start with '/'", name);
    bool bin_name = ends_with(name, ".bin");
    /* The one exception monerod has: mapped with MAP_URI_AUTO_JON2 despite its name. */
    bool json_named_bin = strcmp(name, "/get_transaction_pool_hashes.bin") == 0;
    if (m->kind == METHOD_BIN_PATH && !bin_name)
        fail_msg("binary endpoint %s is not named .bin", name);
    if (m->kind == METHOD_JSON_PATH && bin_name && !json_named_bin)
        fail_msg("JSON endpoint %s is named .bin", name);
}

static void test_kind_is_consistent_with_name(void **state)
{
    (void)state;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        check_kind_matches_name(m, m->name);
        for (size_t a = 0; a < alias_count(m); a++)
            check_kind_matches_name(m, m->aliases[a]);
    }
    assert_int_equal(path("/get_transaction_pool_hashes.bin")->kind, METHOD_JSON_PATH);
    assert_int_equal(path("/get_outs.bin")->kind, METHOD_BIN_PATH);
    assert_int_equal(path("/get_outs")->kind, METHOD_JSON_PATH);
}

static void test_unknown_empty_and_overlong_names(void **state)
{
    (void)state;
    char longname[4096];
    memset(longname, 'a', sizeof longname);

    assert_null(methods_find_jsonrpc(NULL, 0));
    assert_null(methods_find_jsonrpc(NULL, 8));
    assert_null(methods_find_path(NULL, 0));
    assert_null(methods_find_jsonrpc("", 0));
    assert_null(methods_find_path("", 0));
    assert_null(methods_find_path("/", 1));
    assert_null(methods_find_jsonrpc(longname, sizeof longname));
    longname[0] = '/';
    assert_null(methods_find_path(longname, sizeof longname));

    /* A real name padded past the limit must not match by prefix. */
    memcpy(longname, "/get_info", 9);
    assert_null(methods_find_path(longname, METHODS_NAME_MAX));

    static const char *const rpc_misses[] = {
        "get_inf",   "get_infoo", "GET_INFO",       "get_info ", " get_info", "getinfo",
        "/get_info", "json_rpc",  "get_blocks.bin", "getheight", "zzz",       "a"};
    for (size_t i = 0; i < sizeof rpc_misses / sizeof rpc_misses[0]; i++)
        if (methods_find_jsonrpc(rpc_misses[i], strlen(rpc_misses[i])) != NULL)
            fail_msg("JSON-RPC lookup of '%s' matched", rpc_misses[i]);

    static const char *const path_misses[] = {
        "/json_rpc",        "get_info",
        "/get_info/",       "//get_info",
        "/get_info?x=1",    "/GET_INFO",
        "/get_block",       "/getblocks",
        "/get_blocks",      "/get_outs.bi",
        "/get_outs.binx",   "/~",
        "/get_block_count", "/get_transaction_pool_hashes.json"};
    for (size_t i = 0; i < sizeof path_misses / sizeof path_misses[0]; i++)
        if (methods_find_path(path_misses[i], strlen(path_misses[i])) != NULL)
            fail_msg("path lookup of '%s' matched", path_misses[i]);

    /* An embedded NUL is part of the name, not its end. */
    assert_null(methods_find_jsonrpc("get_info\0", 9));
    assert_null(methods_find_path("/getinfo\0x", 10));
}

static void test_lookup_reads_only_len_bytes(void **state)
{
    (void)state;
    /* Names arrive as slices of a request buffer, not NUL-terminated strings. */
    const char body[] = "get_info_and_more";
    assert_ptr_equal(methods_find_jsonrpc(body, 8), rpc("get_info"));
    const char url[] = "/getinfoXYZ";
    assert_ptr_equal(methods_find_path(url, 8), path("/get_info"));
    const char heap_like[] = {'g', 'e', 't', 'b', 'l', 'o', 'c', 'k'};
    assert_ptr_equal(methods_find_jsonrpc(heap_like, sizeof heap_like), rpc("get_block"));
}

static void test_names_of_enums(void **state)
{
    (void)state;
    assert_string_equal(methods_class_name(METHOD_IMMUTABLE), "immutable");
    assert_string_equal(methods_class_name(METHOD_TIP), "tip");
    assert_string_equal(methods_class_name(METHOD_PASSTHROUGH), "passthrough");
    assert_string_equal(methods_class_name(METHOD_BROADCAST), "broadcast");
    assert_string_equal(methods_class_name(METHOD_DENIED), "denied");
    assert_string_equal(methods_class_name((enum method_class)42), "?");
    assert_string_equal(methods_kind_name(METHOD_JSON_RPC), "json-rpc");
    assert_string_equal(methods_kind_name(METHOD_JSON_PATH), "json");
    assert_string_equal(methods_kind_name(METHOD_BIN_PATH), "bin");
    assert_string_equal(methods_kind_name((enum method_kind)42), "?");
    assert_string_equal(methods_full_node_name(METHOD_FULL_NO), "no");
    assert_string_equal(methods_full_node_name(METHOD_FULL_YES), "yes");
    assert_string_equal(methods_full_node_name(METHOD_FULL_UNLESS_PRUNED), "unless prune");
    assert_string_equal(methods_full_node_name((enum method_full_node)42), "?");
}

static void test_descriptions_fit_one_table_cell(void **state)
{
    (void)state;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        assert_non_null(m->description);
        assert_true(strlen(m->description) > 10);
        if (strpbrk(m->description, "|\n") != NULL)
            fail_msg("%s: description breaks a Markdown cell", m->name);
        if ((m->cls == METHOD_DENIED) != (strstr(m->description, "(denied: ") != NULL))
            fail_msg("%s: a denied row, and only one, says why in its description", m->name);
        assert_true(strlen(m->name) < METHODS_NAME_MAX);
        for (size_t a = 0; a < alias_count(m); a++)
            assert_true(strlen(m->aliases[a]) < METHODS_NAME_MAX);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_monerod_name_resolves_with_its_kind),
        cmocka_unit_test(test_names_sharing_a_handler_share_a_row),
        cmocka_unit_test(test_table_has_no_name_monerod_lacks),
        cmocka_unit_test(test_every_alias_resolves_to_its_canonical_row),
        cmocka_unit_test(test_names_are_unique),
        cmocka_unit_test(test_rows_are_sorted_rpc_then_paths),
        cmocka_unit_test(test_dangerous_methods_are_denied),
        cmocka_unit_test(test_what_wallets_need_is_not_denied),
        cmocka_unit_test(test_classes_of_key_methods),
        cmocka_unit_test(test_only_broadcast_and_denied_rows_write),
        cmocka_unit_test(test_full_node_needs),
        cmocka_unit_test(test_weights_follow_the_scale),
        cmocka_unit_test(test_kind_is_consistent_with_name),
        cmocka_unit_test(test_unknown_empty_and_overlong_names),
        cmocka_unit_test(test_lookup_reads_only_len_bytes),
        cmocka_unit_test(test_names_of_enums),
        cmocka_unit_test(test_descriptions_fit_one_table_cell),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
