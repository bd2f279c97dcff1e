/* client_prefix — see client_prefix.h. */
#include "api/client_prefix.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const uint8_t V4_MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool client_prefix_policy_ok(const struct client_prefix_policy *p)
{
    return p->ipv4_bits >= 1 && p->ipv4_bits <= 32 && p->ipv6_bits >= 1 && p->ipv6_bits <= 128 &&
           p->ipv4_network_bits >= 1 && p->ipv4_network_bits <= p->ipv4_bits &&
           p->ipv6_network_bits >= 1 && p->ipv6_network_bits <= p->ipv6_bits;
}

/* Clears every bit of the len-byte address past the first bits. */
static void mask(uint8_t *a, size_t len, int bits)
{
    for (size_t i = 0; i < len; i++) {
        int keep = bits - (int)(i * 8);
        if (keep >= 8)
            continue;
        a[i] &= keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
    }
}

static int clamp(int bits, int max)
{
    return bits < 1 ? 1 : bits > max ? max : bits;
}

bool client_prefix_key(const char *addr, int ipv4_bits, int ipv6_bits,
                       char out[CLIENT_PREFIX_KEY_SIZE])
{
    uint8_t a[16];
    char text[INET6_ADDRSTRLEN];
    if (inet_pton(AF_INET6, addr, a) == 1 && memcmp(a, V4_MAPPED, sizeof V4_MAPPED) != 0) {
        int bits = clamp(ipv6_bits, 128);
        mask(a, 16, bits);
        if (inet_ntop(AF_INET6, a, text, sizeof text)) {
            snprintf(out, CLIENT_PREFIX_KEY_SIZE, "6:%s/%d", text, bits);
            return true;
        }
    } else if (inet_pton(AF_INET6, addr, a) == 1 || inet_pton(AF_INET, addr, a + 12) == 1) {
        int bits = clamp(ipv4_bits, 32);
        mask(a + 12, 4, bits);
        if (inet_ntop(AF_INET, a + 12, text, sizeof text)) {
            snprintf(out, CLIENT_PREFIX_KEY_SIZE, "4:%s/%d", text, bits);
            return true;
        }
    }
    snprintf(out, CLIENT_PREFIX_KEY_SIZE, "%s", addr);
    return false;
}

bool client_prefix_keys(const char *addr, const struct client_prefix_policy *p,
                        char client[CLIENT_PREFIX_KEY_SIZE], char network[CLIENT_PREFIX_KEY_SIZE])
{
    bool ip = client_prefix_key(addr, p->ipv4_bits, p->ipv6_bits, client);
    (void)client_prefix_key(addr, p->ipv4_network_bits, p->ipv6_network_bits, network);
    return ip;
}
