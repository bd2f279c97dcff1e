/* client_prefix — which network a client address is counted as, for every per-client rule
 * of billing (client_limit.h: free grants, invoice creation, token rotations, XMR402
 * challenges and proofs; free_grant.h: the free tenants kept in PostgreSQL).
 *
 * One address is cheap to many: an IPv6 customer is routed a /64 (often a /56 or /48),
 * and a rented server brings a /24 of IPv4. So an address is counted by two keys:
 *   - its client key: the address's [clients] ipv4_prefix bits (32: the address itself) or
 *     ipv6_prefix bits (64: the customer's link);
 *   - its network key: a wider aggregate, ipv4_network_prefix (24) or ipv6_network_prefix
 *     (48: a site), that a whole rented range shares.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) counts as the IPv4 address it maps.
 * Keys are text, "4:203.0.113.0/24" or "6:2001:db8::/48", equal for every address of the
 * same prefix whatever its spelling. Pure: no I/O, no allocation. */
#ifndef CLIENT_PREFIX_H
#define CLIENT_PREFIX_H

#include <stdbool.h>
#include <stddef.h>

/* "6:" + the longest IPv6 text (45) + "/128" + NUL fits */
#define CLIENT_PREFIX_KEY_SIZE 64

/* Prefix lengths: ipv4 ones 1..32, ipv6 ones 1..128, each network prefix no longer than
 * its client prefix (bl_config checks them; client_prefix_policy_ok says so). */
struct client_prefix_policy {
    int ipv4_bits, ipv6_bits;                 /* the client key */
    int ipv4_network_bits, ipv6_network_bits; /* the network key */
};

/* The defaults: /32 and /64 per client, /24 and /48 per network. */
#define CLIENT_PREFIX_POLICY_DEFAULT                                                               \
    (struct client_prefix_policy)                                                                  \
    {                                                                                              \
        32, 64, 24, 48                                                                             \
    }

/* True when every length is in range and no network prefix is longer than its client's. */
bool client_prefix_policy_ok(const struct client_prefix_policy *p);

/* The key of addr (text, IPv4 or IPv6, as xg_httpd_client_addr writes it) at bits for its
 * family (ipv4_bits is applied to an IPv4 or mapped address, ipv6_bits to the others) into
 * out (CLIENT_PREFIX_KEY_SIZE). Returns false, with out left as addr's text, when addr is no
 * IP address ("unknown", an agent's name): it then counts as itself. */
bool client_prefix_key(const char *addr, int ipv4_bits, int ipv6_bits,
                       char out[CLIENT_PREFIX_KEY_SIZE]);

/* Both keys of addr under policy p: client_prefix_key at the client and at the network
 * lengths. Returns false (both keys = addr's text) when addr is no IP address. */
bool client_prefix_keys(const char *addr, const struct client_prefix_policy *p,
                        char client[CLIENT_PREFIX_KEY_SIZE], char network[CLIENT_PREFIX_KEY_SIZE]);

#endif
