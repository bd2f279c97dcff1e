/* web — the buy, invoice and renew pages: static files from [server] web_dir, served by
 * billing's API listener (routes in api.c, handlers in api_web.c).
 *
 *   /                   index.html   (the plans)
 *   /invoice/<uuid>     invoice.html (one invoice; the page reads the id from its URL)
 *   /renew              renew.html
 *   /assets/<name>      web_dir/assets/: a flat directory of CSS, JS and images
 *
 * Files are read on each request (edits show up without a restart), revalidated with an
 * ETag (Cache-Control: no-cache), and sent with a Content-Security-Policy that allows
 * only this origin: the pages load nothing from anywhere else. Only names of the form
 * [A-Za-z0-9_-][A-Za-z0-9._-]* with a known extension are served: no directory
 * traversal, no dotfiles, no symlinks. */
#ifndef WEB_H
#define WEB_H

#include "xg_httpd.h"

#include <stdbool.h>
#include <stddef.h>

#define WEB_MAX_FILE (1024 * 1024)

struct web;

/* Copies web_dir. Returns NULL on allocation failure. */
struct web *web_new(const char *web_dir);
void web_free(struct web *web);

/* Pure: the page file for a page path ("/", "/renew", "/invoice/<uuid>"), or NULL. */
const char *web_page_for_path(const char *path);

/* Pure: true for a servable asset name (see above). */
bool web_name_ok(const char *name);

/* Pure: the Content-Type for a file name by its extension, or NULL if not served. */
const char *web_content_type(const char *name);

/* Pure: the ETag ("\"<hex size>-<hex mtime ns>\"") for a file's size and mtime. */
void web_etag(long long size, long long mtime_ns, char *out, size_t outlen);

/* Queues the file web_dir/subdir/name (subdir: NULL for web_dir itself, else a fixed
 * name of ours such as "assets"; name is checked with web_name_ok): 200, 304 when the
 * request's If-None-Match equals its ETag, 404 not_found when it is missing or not
 * servable, 500 on a read error (the errors from billing's registry, api_shared.h). */
enum xg_httpd_result web_serve(const struct web *web, const struct xg_httpd_request *req,
                               const char *subdir, const char *name);

#endif
