/* node_url — what a node's URL says beyond where the node is: the login an operator gives a
 * node started with `monerod --rpc-login user:pass` (the URL's userinfo,
 * `http://user:pass@host:port`), and the URL as it may be shown (pure: no I/O).
 *
 * The password never leaves the gateway except in a Digest response to that node: the
 * admin API, the CLI, logs and metrics show node_url_redact's form, `http://user:***@host`.
 * Nodes are told apart everywhere else by their name and id. */
#ifndef NODE_URL_H
#define NODE_URL_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the URL's authority carries a userinfo (`user[:pass]@`). */
bool node_url_has_login(const char *url);

/* Writes the URL with the password replaced by "***" (a URL without one is copied as is).
 * Always NUL-terminates out when len > 0; returns false when it did not fit (out then holds
 * the shown form cut short, which still carries no part of the password). */
bool node_url_redact(const char *url, char *out, size_t len);

#endif
