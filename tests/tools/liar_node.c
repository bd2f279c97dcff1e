/* liar_node — a stand-in own node that lies about decoys and fees: it forwards every
 * request to a real monerod and passes its answers on, except that it
 *   - multiplies get_fee_estimate's "fee" and every "fees" tier by FEE_FACTOR,
 *   - changes one byte of one output key in every OUTS_EVERY-th answer of /get_outs and
 *     of /get_outs.bin (counted apart, the first one included),
 *   - with --dist, changes the first value of get_output_distribution (JSON-RPC and .bin).
 * Each change is said on stderr ("liar: get_outs.bin #3"), so a test can show the lies
 * were told. Its health probes are passed on unchanged: it stays up and synchronized.
 *
 *   liar_node PORT UPSTREAM_URL [--outs-every N] [--fee-factor F] [--dist]
 *
 * (defaults: N 100, i.e. 1 % of get_outs answers; F 10). One thread per connection. */
#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/epee.h"
#include "stand_in.h"

static const char *upstream;
static long outs_every = 100;
static long fee_factor = 10;
static bool tamper_dist;
static atomic_long outs_json_seen, outs_bin_seen, told;

struct fetched {
    char *data;
    size_t len;
};

static size_t on_data(char *ptr, size_t size, size_t n, void *arg)
{
    struct fetched *f = arg;
    char *grown = realloc(f->data, f->len + size * n + 1);
    if (!grown)
        return 0;
    memcpy(grown + f->len, ptr, size * n);
    f->data = grown;
    f->len += size * n;
    f->data[f->len] = '\0';
    return size * n;
}

/* The upstream's answer to the same request; its status in *status (0: no answer). */
static struct fetched forward(const char *url, const char *method, const struct stand_in_body *b,
                              bool bin, long *status, char *ctype, size_t ctype_size)
{
    struct fetched f = {0};
    char full[1024];
    snprintf(full, sizeof full, "%s%s", upstream, url);
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, bin ? "Content-Type: application/octet-stream"
                                                       : "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, full);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &f);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, b->data ? b->data : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)b->len);
    }
    *status = 0;
    ctype[0] = '\0';
    if (curl_easy_perform(c) == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
        char *ct = NULL;
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        if (ct)
            snprintf(ctype, ctype_size, "%s", ct);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return f;
}

static void say(const char *what, long n)
{
    atomic_fetch_add(&told, 1);
    fprintf(stderr, "liar: %s #%ld\n", what, n);
}

/* Whether this answer of a counted kind is the one in outs_every to lie in. */
static bool lie_now(atomic_long *seen, long *n)
{
    *n = atomic_fetch_add(seen, 1);
    return outs_every > 0 && *n % outs_every == 0;
}

/* Re-encodes a changed JSON answer into f. */
static void put_json(struct fetched *f, json_t *root)
{
    char *s = json_dumps(root, JSON_COMPACT);
    if (s) {
        free(f->data);
        f->data = s;
        f->len = strlen(s);
    }
}

static void lie_json_rpc(struct fetched *f, const char *body)
{
    bool fee = body && strstr(body, "\"get_fee_estimate\"");
    bool dist = tamper_dist && body && strstr(body, "\"get_output_distribution\"");
    if (!fee && !dist)
        return;
    json_t *root = json_loadb(f->data, f->len, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *res = json_object_get(root, "result");
    if (fee && json_is_integer(json_object_get(res, "fee"))) {
        json_t *v = json_object_get(res, "fee");
        json_integer_set(v, json_integer_value(v) * fee_factor);
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(res, "fees"), i, t)
            json_integer_set(t, json_integer_value(t) * fee_factor);
        put_json(f, root);
        say("get_fee_estimate", 0);
    }
    json_t *d0 = json_array_get(json_object_get(res, "distributions"), 0);
    json_t *first = json_array_get(json_object_get(d0, "distribution"), 0);
    if (dist && json_is_integer(first)) {
        json_integer_set(first, json_integer_value(first) + 1);
        put_json(f, root);
        say("get_output_distribution", 0);
    }
    json_decref(root);
}

static void lie_outs_json(struct fetched *f)
{
    long n;
    if (!lie_now(&outs_json_seen, &n))
        return;
    json_t *root = json_loadb(f->data, f->len, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *out = json_array_get(json_object_get(root, "outs"), 0);
    const char *key = json_string_value(json_object_get(out, "key"));
    if (key && key[0]) {
        char *changed = strdup(key);
        changed[0] = changed[0] == '0' ? '1' : '0';
        json_object_set_new(out, "key", json_string(changed));
        free(changed);
        put_json(f, root);
        say("get_outs", n);
    }
    json_decref(root);
}

/* The first element of the root's array field name, as an object. */
static bool first_object(const struct epee_section *root, const char *name,
                         struct epee_section *out)
{
    struct epee_value v, e;
    struct epee_array a;
    return epee_find(root, name, &v) && epee_get_array(&v, &a) && epee_array_next(&a, &e) &&
           epee_get_object(&e, out);
}

/* Flips the last byte of a string value, or of an array's first element. */
static bool flip(const struct epee_value *v)
{
    const char *s;
    size_t len;
    struct epee_array a;
    struct epee_value e;
    if (epee_get_string(v, &s, &len) && len > 0) {
        ((char *)s)[len - 1] ^= 0x01;
        return true;
    }
    if (epee_get_array(v, &a) && epee_array_next(&a, &e) && e.len > 0) {
        ((uint8_t *)e.data)[0] ^= 0x01;
        return true;
    }
    return false;
}

static void lie_bin(struct fetched *f, const char *url)
{
    struct epee_section root, obj;
    struct epee_value v;
    long n = 0;
    if (epee_open(f->data, f->len, &root) != EPEE_OK)
        return;
    if (strcmp(url, "/get_outs.bin") == 0 && lie_now(&outs_bin_seen, &n) &&
        first_object(&root, "outs", &obj) && epee_find(&obj, "key", &v) && flip(&v))
        say("get_outs.bin", n);
    if (tamper_dist && strcmp(url, "/get_output_distribution.bin") == 0 &&
        first_object(&root, "distributions", &obj) && epee_find(&obj, "distribution", &v) &&
        flip(&v))
        say("get_output_distribution.bin", 0);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    (void)cls;
    (void)version;
    enum MHD_Result rc;
    struct stand_in_body *b = stand_in_collect(state, data, size, &rc);
    if (!b)
        return rc;
    size_t ulen = strlen(url);
    bool bin = ulen > 4 && strcmp(url + ulen - 4, ".bin") == 0;
    long status;
    char ctype[128];
    struct fetched f = forward(url, method, b, bin, &status, ctype, sizeof ctype);
    if (!status) {
        free(f.data);
        return MHD_NO; /* the upstream did not answer: nor do we */
    }
    if (status == 200 && f.data) {
        if (strcmp(url, "/json_rpc") == 0)
            lie_json_rpc(&f, b->data);
        else if (strcmp(url, "/get_outs") == 0)
            lie_outs_json(&f);
        else if (bin)
            lie_bin(&f, url);
    }
    struct MHD_Response *resp =
        f.data ? MHD_create_response_from_buffer(f.len, f.data, MHD_RESPMEM_MUST_FREE)
               : MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (ctype[0])
        MHD_add_response_header(resp, "Content-Type", ctype);
    rc = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: liar_node PORT UPSTREAM_URL [--outs-every N] [--fee-factor F] "
                        "[--dist]\n");
        return 2;
    }
    upstream = argv[2];
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--outs-every") == 0 && i + 1 < argc)
            outs_every = atol(argv[++i]);
        else if (strcmp(argv[i], "--fee-factor") == 0 && i + 1 < argc)
            fee_factor = atol(argv[++i]);
        else if (strcmp(argv[i], "--dist") == 0)
            tamper_dist = true;
        else {
            fprintf(stderr, "liar_node: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    stand_in_catch_signals();
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
                         (uint16_t)atoi(argv[1]), NULL, NULL, on_request, NULL,
                         MHD_OPTION_NOTIFY_COMPLETED, stand_in_free_body, NULL, MHD_OPTION_END);
    int code = stand_in_run(d, "liar_node", argv[1]);
    fprintf(stderr, "liar: told %ld lies\n", atomic_load(&told));
    curl_global_cleanup();
    return code;
}
