/* client_prefix — see client_prefix.h. */
#include "api/client_prefix.h"

#include "xg_proxy_admit.h"

#include <stdio.h>
#include <string.h>

bool client_prefix_policy_ok(const struct client_prefix_policy *p)
{
    return p->ipv4_bits >= 1 && p->ipv4_bits <= 32 && p->ipv6_bits >= 1 && p->ipv6_bits <= 128 &&
           p->ipv4_network_bits >= 1 && p->ipv4_network_bits <= p->ipv4_bits &&
           p->ipv6_network_bits >= 1 && p->ipv6_network_bits <= p->ipv6_bits;
}

/* The bits are cut by the one rule both daemons count networks with (xg_proxy_admit.h). */
bool client_prefix_key(const char *addr, int ipv4_bits, int ipv6_bits,
                       char out[CLIENT_PREFIX_KEY_SIZE])
{
    struct xg_proxy_ip ip;
    if (!xg_proxy_ip_parse(addr, strlen(addr), &ip)) {
        snprintf(out, CLIENT_PREFIX_KEY_SIZE, "%s", addr);
        return false;
    }
    struct xg_proxy_ip net = xg_proxy_ip_network(&ip, ipv4_bits, ipv6_bits);
    int bits = net.family == 4 ? (ipv4_bits < 1    ? 1
                                  : ipv4_bits > 32 ? 32
                                                   : ipv4_bits)
                               : (ipv6_bits < 1     ? 1
                                  : ipv6_bits > 128 ? 128
                                                    : ipv6_bits);
    char text[XG_PROXY_ADDR_TEXT];
    xg_proxy_ip_format(&net, text, sizeof text);
    snprintf(out, CLIENT_PREFIX_KEY_SIZE, "%d:%s/%d", net.family, text, bits);
    return true;
}

bool client_prefix_keys(const char *addr, const struct client_prefix_policy *p,
                        char client[CLIENT_PREFIX_KEY_SIZE], char network[CLIENT_PREFIX_KEY_SIZE])
{
    bool ip = client_prefix_key(addr, p->ipv4_bits, p->ipv6_bits, client);
    (void)client_prefix_key(addr, p->ipv4_network_bits, p->ipv6_network_bits, network);
    return ip;
}
