/* web — static pages from web_dir; see web.h. */
#include "api/web.h"

#include "api/api_shared.h"
#include "xg_log.h"
#include "xg_reply.h"
#include "xg_str.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pages load scripts, styles and images from this origin only; QR codes are images
 * from the API; the API is the only thing scripts talk to. */
#define WEB_CSP                                                                                    \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "                    \
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

struct web {
    char *dir;
};

struct web *web_new(const char *web_dir)
{
    struct web *web = calloc(1, sizeof *web);
    if (!web)
        return NULL;
    web->dir = strdup(web_dir);
    if (!web->dir) {
        free(web);
        return NULL;
    }
    return web;
}

void web_free(struct web *web)
{
    if (!web)
        return;
    free(web->dir);
    free(web);
}

const char *web_page_for_path(const char *path)
{
    if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)
        return "index.html";
    if (strcmp(path, "/renew") == 0)
        return "renew.html";
    if (strncmp(path, "/invoice/", 9) == 0 && xg_str_is_uuid(path + 9))
        return "invoice.html";
    return NULL;
}

bool web_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || name[0] == '.')
        return false;
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

const char *web_content_type(const char *name)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    if (!dot)
        return NULL;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return NULL;
}

void web_etag(long long size, long long mtime_ns, char *out, size_t outlen)
{
    snprintf(out, outlen, "\"%llx-%llx\"", (unsigned long long)size, (unsigned long long)mtime_ns);
}

enum read_result { READ_OK, READ_MISSING, READ_FAILED };

/* Reads a regular file (no symlink) of at most WEB_MAX_FILE bytes into a malloc'd buffer. */
static enum read_result read_file(const char *path, char **data, size_t *len, struct stat *st)
{
    enum read_result r = READ_FAILED;
    *data = NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? READ_MISSING : READ_FAILED;
    if (fstat(fd, st) != 0)
        goto out;
    if (!S_ISREG(st->st_mode) || st->st_size > WEB_MAX_FILE) {
        r = READ_MISSING;
        goto out;
    }
    *data = malloc((size_t)st->st_size + 1);
    if (!*data)
        goto out;
    size_t got = 0;
    while (got < (size_t)st->st_size) {
        ssize_t n = read(fd, *data + got, (size_t)st->st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto out;
        got += (size_t)n;
    }
    *len = got;
    r = READ_OK;
out:
    if (r != READ_OK) {
        free(*data);
        *data = NULL;
    }
    close(fd);
    return r;
}

enum xg_httpd_result web_serve(const struct web *web, const struct xg_httpd_request *req,
                               const char *subdir, const char *name)
{
    const char *type = web_content_type(name);
    if (!web_name_ok(name) || !type)
        return api_error(req, BL_ERROR_NOT_FOUND);
    char path[4096], etag[64], *data = NULL;
    size_t len = 0;
    struct stat st;
    snprintf(path, sizeof path, "%s/%s%s%s", web->dir, subdir ? subdir : "", subdir ? "/" : "",
             name);
    enum read_result r = read_file(path, &data, &len, &st);
    if (r == READ_MISSING)
        return api_error(req, BL_ERROR_NOT_FOUND);
    if (r == READ_FAILED) {
        xg_log(XG_LOG_ERROR, "web_read_failed", "%s: %s", path, strerror(errno));
        return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "the page cannot be read");
    }
    web_etag((long long)st.st_size,
             (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, etag, sizeof etag);
    const char *headers[] = {"Cache-Control",
                             "no-cache",
                             "ETag",
                             etag,
                             "Content-Security-Policy",
                             WEB_CSP,
                             "X-Content-Type-Options",
                             "nosniff",
                             "Referrer-Policy",
                             "no-referrer",
                             "X-Frame-Options",
                             "DENY",
                             NULL};
    const char *if_none_match = xg_httpd_header(req, "If-None-Match");
    enum xg_httpd_result mr;
    if (if_none_match && strcmp(if_none_match, etag) == 0)
        mr = xg_reply_bytes_with(req->conn, 304, NULL, "", 0, headers);
    else
        mr = xg_reply_bytes_with(req->conn, 200, type, data, len, headers);
    free(data);
    return mr;
}
