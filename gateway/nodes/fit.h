/* fit — whether a node has the settings of the gateway's pool (pure: no I/O, no clock).
 *
 * The gateway pools only nodes that serve the same chain in the same way. What a monerod
 * says about itself, read from get_info and get_version, against what the operator asked:
 *   - the network: get_info.nettype ("mainnet", "testnet", "stagenet", and "fakechain" for
 *     a --regtest node), or its mainnet/testnet/stagenet flags where nettype is missing;
 *   - the RPC version: get_version.version, (major << 16) | minor (0.18.0 answers 3.10,
 *     0.18.4 answers 3.14). get_info.version, the release, is "" on a restricted node,
 *     so the minimum is of the RPC version, which every node tells;
 *   - restricted mode: get_info.restricted.
 * A node that does not fit is never healthy (health_probe.misfit); the reason says why.
 * Every setting is off by default, so an unconfigured gateway refuses no node. */
#ifndef FIT_H
#define FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fit_network {
    FIT_NET_ANY, /* settings: any network fits; facts: the node told none */
    FIT_NET_MAINNET,
    FIT_NET_TESTNET,
    FIT_NET_STAGENET,
    FIT_NET_REGTEST, /* monerod --regtest, which reports nettype "fakechain" */
};

#define FIT_VERSION_LEN 48 /* longest release string kept (get_info.version) */
#define FIT_REASON_LEN  128

struct fit_settings {
    enum fit_network network; /* FIT_NET_ANY: no check [any] */
    uint32_t min_rpc_version; /* (major << 16) | minor; 0: no minimum [0] */
    bool require_restricted;  /* only nodes in restricted RPC mode [false] */
};

/* What one node said about itself. Zero: it said nothing. */
struct fit_facts {
    enum fit_network network; /* FIT_NET_ANY: not told */
    bool restricted_known;
    bool restricted;
    uint32_t rpc_version;              /* 0: not told */
    char version[FIT_VERSION_LEN + 1]; /* the release, "" when not told (restricted nodes) */
};

/* Fills *out from the two JSON-RPC answers (either may be NULL: no answer; http_* their
 * HTTP statuses). Never fails: what cannot be read is left as not told. */
void fit_facts_parse(struct fit_facts *out, long info_http, const char *info_body,
                     long version_http, const char *version_body);

/* Whether the node fits. Refused, reason gets why ("" when it fits); a fact the node did not
 * tell fits only when nothing is asked of it. */
bool fit_check(const struct fit_facts *f, const struct fit_settings *s, char *reason, size_t len);

/* "any", "mainnet", "testnet", "stagenet", "regtest": false for anything else. */
bool fit_network_parse(const char *s, enum fit_network *out);
/* The name fit_network_parse reads ("any" for FIT_NET_ANY). */
const char *fit_network_name(enum fit_network n);

/* "MAJOR.MINOR" (each 0–65535) into (major << 16) | minor, "" or "0" into 0 (no minimum);
 * false for anything else. */
bool fit_rpc_version_parse(const char *s, uint32_t *out);
/* "MAJOR.MINOR" of an RPC version into buf ("" for 0). */
void fit_rpc_version_format(uint32_t v, char *buf, size_t len);

#endif
