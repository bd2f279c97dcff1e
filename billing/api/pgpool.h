/* pgpool — a fixed set of PostgreSQL connections for the API threads: a request
 * borrows one (waiting while all are busy) and gives it back. Each connection prepares
 * the listed queries when it (re)connects; one the server ended while it sat in the pool
 * (a PostgreSQL restart, a primary that moved) is replaced when it is borrowed, and one
 * that breaks under a statement is handled by xg_pg (retry rules in xg_pg.h).
 * Thread-safe; the borrowed handle is used by one thread at a time. */
#ifndef PGPOOL_H
#define PGPOOL_H

#include "xg_pg.h"

#include <stddef.h>

struct pgpool;

/* `queries`: NULL-terminated, must outlive the pool. NULL when out of memory. */
struct pgpool *pgpool_new(const char *conninfo, const char *const *queries, size_t size);
void pgpool_free(struct pgpool *pool);

/* Borrows a handle, connected when possible (check xg_pg_ok or let xg_pg_transaction
 * connect). Never NULL. */
struct xg_pg *pgpool_get(struct pgpool *pool);
void pgpool_put(struct pgpool *pool, struct xg_pg *pg);

#endif
