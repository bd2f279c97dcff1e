/* xg_http — blocking libcurl requests on one easy handle per client. The handle is
 * reset, not recreated, between requests: curl_easy_reset keeps the connection cache,
 * so calls to the same host reuse one keep-alive connection. */
#include "xg_http.h"

#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xg_http_client {
    CURL *easy;
};

struct body_buffer {
    char *data;
    size_t len, cap;
    bool too_large;
};

struct xg_http_client *xg_http_client_new(void)
{
    struct xg_http_client *client = calloc(1, sizeof *client);
    if (!client)
        return NULL;
    client->easy = curl_easy_init();
    if (!client->easy) {
        free(client);
        return NULL;
    }
    return client;
}

void xg_http_client_free(struct xg_http_client *client)
{
    if (!client)
        return;
    curl_easy_cleanup(client->easy);
    free(client);
}

void xg_http_response_clear(struct xg_http_response *out)
{
    free(out->body);
    memset(out, 0, sizeof *out);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
    struct body_buffer *buf = user;
    size_t n = size * nmemb;
    if (n > XG_HTTP_MAX_RESPONSE - buf->len) {
        buf->too_large = true;
        return 0; /* makes curl fail with CURLE_WRITE_ERROR */
    }
    if (buf->len + n + 1 > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 4096;
        while (cap < buf->len + n + 1)
            cap *= 2;
        char *grown = realloc(buf->data, cap);
        if (!grown)
            return 0;
        buf->data = grown;
        buf->cap = cap;
    }
    memcpy(buf->data + buf->len, data, n);
    buf->len += n;
    buf->data[buf->len] = '\0';
    return n;
}

static void set_method(CURL *easy, const char *method, const char *body, size_t body_len)
{
    if (body) {
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, body ? "POST" : "GET") != 0)
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
}

bool xg_http_request(struct xg_http_client *client, const char *method, const char *url,
                     const char *content_type, const char *body, size_t body_len, long timeout_ms,
                     struct xg_http_response *out)
{
    CURL *easy = client->easy;
    struct body_buffer buf = {0};
    struct curl_slist *headers = NULL;
    char content_header[256];
    bool ok = false;

    memset(out, 0, sizeof *out);
    curl_easy_reset(easy);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &buf);
    set_method(easy, method, body, body_len);

    /* "Expect: 100-continue" would cost a round trip on every POST over 1 KiB */
    headers = curl_slist_append(headers, "Expect:");
    if (content_type) {
        snprintf(content_header, sizeof content_header, "Content-Type: %s", content_type);
        struct curl_slist *more = curl_slist_append(headers, content_header);
        headers = more ? more : headers;
    }
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);

    CURLcode rc = curl_easy_perform(easy);
    if (rc != CURLE_OK) {
        if (buf.too_large)
            snprintf(out->error, sizeof out->error, "response larger than %u MiB",
                     XG_HTTP_MAX_RESPONSE >> 20);
        else
            snprintf(out->error, sizeof out->error, "%s", curl_easy_strerror(rc));
        goto out;
    }
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &out->status);
    out->body = buf.data;
    out->len = buf.len;
    buf.data = NULL;
    ok = true;
out:
    /* the handle must not keep pointers to this call's locals */
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, NULL);
    curl_slist_free_all(headers);
    free(buf.data);
    return ok;
}

static json_t *rpc_result(json_t *reply, char *err, size_t errlen)
{
    json_t *error = json_object_get(reply, "error");
    if (error && !json_is_null(error)) {
        const char *message = json_string_value(json_object_get(error, "message"));
        snprintf(err, errlen, "RPC error %" JSON_INTEGER_FORMAT ": %s",
                 json_integer_value(json_object_get(error, "code")),
                 message ? message : "(no message)");
        return NULL;
    }
    json_t *result = json_object_get(reply, "result");
    if (!result) {
        snprintf(err, errlen, "response has neither \"result\" nor \"error\"");
        return NULL;
    }
    return json_incref(result);
}

json_t *xg_jsonrpc_call(struct xg_http_client *client, const char *url, const char *method,
                        json_t *params, long timeout_ms, char *err, size_t errlen)
{
    json_t *result = NULL, *reply = NULL;
    char *body = NULL;
    struct xg_http_response resp = {0};
    json_t *request = json_pack("{s:s,s:s,s:s}", "jsonrpc", "2.0", "id", "0", "method", method);
    if (!request || (params && json_object_set(request, "params", params) != 0)) {
        snprintf(err, errlen, "%s: cannot build the request", method);
        goto out;
    }
    body = json_dumps(request, JSON_COMPACT);
    if (!body) {
        snprintf(err, errlen, "%s: cannot build the request", method);
        goto out;
    }
    if (!xg_http_request(client, "POST", url, "application/json", body, strlen(body), timeout_ms,
                         &resp)) {
        snprintf(err, errlen, "%s: %s", method, resp.error);
        goto out;
    }
    if (resp.status != 200) {
        snprintf(err, errlen, "%s: HTTP %ld: %.120s", method, resp.status,
                 resp.body ? resp.body : "");
        goto out;
    }
    json_error_t jerr;
    reply = json_loadb(resp.body ? resp.body : "", resp.len, 0, &jerr);
    if (!json_is_object(reply)) {
        snprintf(err, errlen, "%s: unparsable response: %s", method,
                 reply ? "not a JSON object" : jerr.text);
        goto out;
    }
    char why[200];
    result = rpc_result(reply, why, sizeof why);
    if (!result)
        snprintf(err, errlen, "%s: %s", method, why);
out:
    json_decref(params);
    json_decref(request);
    json_decref(reply);
    free(body);
    xg_http_response_clear(&resp);
    return result;
}
