/* xg_sql — the SQL files of sql/, embedded at build time (tools/embed.c), and lookup of
 * the named queries in them. A named query is the text from a line "-- name: <name>" to
 * the next such line or the end of the file. A line "-- idempotent: <why>" in a block marks
 * the query as safe to send again when the connection broke before its answer (xg_pg.h).
 *
 * xg_sql_files[] is generated (build/<mode>/gen/sql_embedded.c) and read-only. The
 * strings returned by xg_sql_query and xg_sql_find_named are malloc'd: the caller frees
 * them. */
#ifndef XG_SQL_H
#define XG_SQL_H

#include <stdbool.h>
#include <stddef.h>

struct xg_sql_file {
    const char *name; /* file name, e.g. "queries_gateway.sql" */
    const char *text;
};

extern const struct xg_sql_file xg_sql_files[];
extern const size_t xg_sql_file_count;

/* Returns a malloc'd copy of the named query's text (trimmed), or NULL if unknown.
 * Searches the embedded files in order; the first block with that name wins. */
char *xg_sql_query(const char *name);

/* True when the named query's block has a line starting "-- idempotent": running it twice
 * leaves the same result as running it once (a read, or a write of absolute values), so
 * xg_pg may send it again after a broken connection. False for unknown names. */
bool xg_sql_query_idempotent(const char *name);

/* Pure: the same test on a query's text (as xg_sql_find_named returns it). */
bool xg_sql_marked_idempotent(const char *body);

/* Returns the embedded file's text, or NULL. */
const char *xg_sql_file(const char *name);

/* Pure: finds the block headed "-- name: <name>" in `text` and returns a malloc'd copy of
 * its body (header line excluded, surrounding whitespace trimmed), or NULL when absent.
 * The header must start its line; spaces around the name are ignored. */
char *xg_sql_find_named(const char *text, const char *name);

#endif
