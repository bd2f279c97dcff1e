/* Fuzzes what a node (or anything that answers at its ZMQ address) publishes to the gateway
 * (gateway/nodes/blockpub.h): blockpub_parse over a ZMQ frame, as given (not
 * NUL-terminated), and blockpub_map_check / blockpub_map_find over a NUL-terminated copy
 * as a [nodes] zmq setting.
 *
 * Properties checked:
 *   - a chain_main names at least one block, its length is first_height + blocks, its
 *     top hash is 64 hex digits, and the frame starts with the topic and a ':';
 *   - every prefix of the frame and the frame with bytes after it parse without a crash,
 *     and a frame cut anywhere after the topic is never a different chain;
 *   - a setting that passes the check gives, for every name in it, an address that
 *     blockpub_addr_valid accepts. */
#include "fuzz.h"
#include "nodes/blockpub.h"

#include <ctype.h>

static void check_frame(const uint8_t *data, size_t size)
{
    struct blockpub_chain c;
    enum blockpub_kind kind = blockpub_parse((const char *)data, size, &c);
    FUZZ_CHECK(kind == BLOCKPUB_CHAIN_MAIN || kind == BLOCKPUB_OTHER || kind == BLOCKPUB_MALFORMED);
    if (kind != BLOCKPUB_CHAIN_MAIN)
        return;
    size_t tlen = strlen(BLOCKPUB_TOPIC_CHAIN_MAIN);
    FUZZ_CHECK(size > tlen && memcmp(data, BLOCKPUB_TOPIC_CHAIN_MAIN, tlen) == 0 &&
               data[tlen] == ':');
    FUZZ_CHECK(c.blocks >= 1 && c.first_height >= 0);
    FUZZ_CHECK(c.length == c.first_height + (int64_t)c.blocks);
    FUZZ_CHECK(strlen(c.top_hash) == BLOCKPUB_HASH_LEN);
    for (size_t i = 0; i < BLOCKPUB_HASH_LEN; i++)
        FUZZ_CHECK(isxdigit((unsigned char)c.top_hash[i]));
    /* A cut frame: never a crash; when it still parses (trailing blanks cut), the same. */
    size_t cuts[] = {tlen, tlen + 1, size / 2, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        struct blockpub_chain cut;
        if (cuts[i] < size &&
            blockpub_parse((const char *)data, cuts[i], &cut) == BLOCKPUB_CHAIN_MAIN)
            FUZZ_CHECK(cut.length == c.length && strcmp(cut.top_hash, c.top_hash) == 0);
    }
}

static void check_map(const uint8_t *data, size_t size)
{
    char *map = fuzz_cstr(data, size);
    if (!map)
        return;
    char err[160], addr[BLOCKPUB_ADDR_MAX + 1];
    if (blockpub_map_check(map, err, sizeof err)) {
        /* Every name=address pair: its address is found, and valid. */
        char *copy = strdup(map), *save = NULL;
        for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; item;
             item = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(item, '=');
            if (!eq)
                continue;
            *eq = '\0';
            char *name = item, *end = eq;
            while (isspace((unsigned char)*name))
                name++;
            while (end > name && isspace((unsigned char)end[-1]))
                *--end = '\0';
            FUZZ_CHECK(blockpub_map_find(map, name, addr));
            FUZZ_CHECK(blockpub_addr_valid(addr));
        }
        free(copy);
    } else {
        FUZZ_CHECK(err[0] != '\0');
    }
    free(map);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_frame(data, size);
    check_map(data, size);
    return 0;
}
