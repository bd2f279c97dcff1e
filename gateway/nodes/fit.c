/* fit — whether a node has the settings of the gateway's pool (pure). */
#include "nodes/fit.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const network_names[] = {
    [FIT_NET_ANY] = "any",           [FIT_NET_MAINNET] = "mainnet", [FIT_NET_TESTNET] = "testnet",
    [FIT_NET_STAGENET] = "stagenet", [FIT_NET_REGTEST] = "regtest",
};

const char *fit_network_name(enum fit_network n)
{
    return (unsigned)n < sizeof network_names / sizeof network_names[0] ? network_names[n] : "any";
}

bool fit_network_parse(const char *s, enum fit_network *out)
{
    for (size_t i = 0; s && i < sizeof network_names / sizeof network_names[0]; i++)
        if (strcmp(s, network_names[i]) == 0) {
            *out = (enum fit_network)i;
            return true;
        }
    return false;
}

/* An unsigned decimal of 1–5 digits up to 65535, ending at *end. */
static bool parse_part(const char *s, const char **end, uint32_t *out)
{
    size_t digits = strspn(s, "0123456789");
    if (digits == 0 || digits > 5)
        return false;
    uint32_t v = 0;
    for (size_t i = 0; i < digits; i++)
        v = v * 10 + (uint32_t)(s[i] - '0');
    if (v > 0xffff)
        return false;
    *end = s + digits;
    *out = v;
    return true;
}

bool fit_rpc_version_parse(const char *s, uint32_t *out)
{
    if (!s)
        return false;
    if (strcmp(s, "") == 0 || strcmp(s, "0") == 0) {
        *out = 0;
        return true;
    }
    uint32_t major, minor;
    const char *p;
    if (!parse_part(s, &p, &major) || *p != '.' || !parse_part(p + 1, &p, &minor) || *p != '\0')
        return false;
    *out = major << 16 | minor;
    return true;
}

void fit_rpc_version_format(uint32_t v, char *buf, size_t len)
{
    if (v == 0)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "%u.%u", (unsigned)(v >> 16), (unsigned)(v & 0xffff));
}

/* The JSON-RPC result object of an HTTP 200 answer with status OK, or NULL (the caller owns
 * *root). */
static const json_t *ok_result(long http, const char *body, json_t **root)
{
    *root = http == 200 && body ? json_loads(body, 0, NULL) : NULL;
    const json_t *result = json_object_get(*root, "result");
    const char *status = json_string_value(json_object_get(result, "status"));
    return json_is_object(result) && status && strcmp(status, "OK") == 0 ? result : NULL;
}

/* get_info's network: nettype where the node has it, else its flags (older nodes). */
static enum fit_network info_network(const json_t *info)
{
    const char *nettype = json_string_value(json_object_get(info, "nettype"));
    if (nettype) {
        enum fit_network n;
        if (strcmp(nettype, "fakechain") == 0)
            return FIT_NET_REGTEST;
        return fit_network_parse(nettype, &n) && n != FIT_NET_ANY ? n : FIT_NET_ANY;
    }
    if (json_is_true(json_object_get(info, "mainnet")))
        return FIT_NET_MAINNET;
    if (json_is_true(json_object_get(info, "testnet")))
        return FIT_NET_TESTNET;
    if (json_is_true(json_object_get(info, "stagenet")))
        return FIT_NET_STAGENET;
    return FIT_NET_ANY;
}

void fit_facts_parse(struct fit_facts *out, long info_http, const char *info_body,
                     long version_http, const char *version_body)
{
    memset(out, 0, sizeof *out);
    json_t *info_root, *version_root;
    const json_t *info = ok_result(info_http, info_body, &info_root);
    const json_t *ver = ok_result(version_http, version_body, &version_root);
    if (info) {
        out->network = info_network(info);
        const json_t *restricted = json_object_get(info, "restricted");
        out->restricted_known = json_is_boolean(restricted);
        out->restricted = json_is_true(restricted);
        const char *release = json_string_value(json_object_get(info, "version"));
        if (release && strlen(release) <= FIT_VERSION_LEN)
            memcpy(out->version, release, strlen(release) + 1);
    }
    json_int_t v = json_integer_value(json_object_get(ver, "version"));
    if (v > 0 && v <= (json_int_t)UINT32_MAX)
        out->rpc_version = (uint32_t)v;
    json_decref(info_root);
    json_decref(version_root);
}

bool fit_check(const struct fit_facts *f, const struct fit_settings *s, char *reason, size_t len)
{
    char have[16], want[16];
    if (s->network != FIT_NET_ANY && f->network != s->network) {
        if (f->network == FIT_NET_ANY)
            snprintf(reason, len, "network unknown (get_info has no nettype), gateway is on %s",
                     fit_network_name(s->network));
        else
            snprintf(reason, len, "wrong network: node is on %s, gateway is on %s",
                     fit_network_name(f->network), fit_network_name(s->network));
        return false;
    }
    if (s->min_rpc_version && f->rpc_version < s->min_rpc_version) {
        fit_rpc_version_format(s->min_rpc_version, want, sizeof want);
        fit_rpc_version_format(f->rpc_version, have, sizeof have);
        if (f->rpc_version == 0)
            snprintf(reason, len, "RPC version unknown (no get_version answer), minimum is %s",
                     want);
        else
            snprintf(reason, len, "RPC version %s below the minimum %s", have, want);
        return false;
    }
    if (s->require_restricted && !(f->restricted_known && f->restricted)) {
        snprintf(reason, len, "%s",
                 f->restricted_known ? "not in restricted RPC mode, which is required"
                                     : "restricted mode unknown (get_info has no restricted), "
                                       "which is required");
        return false;
    }
    if (len > 0)
        reason[0] = '\0';
    return true;
}
