/* xg_migrate — numbered SQL migrations (migrations/NNNN_name.sql), each applied once in
 * its own transaction and recorded in schema_migrations with its SHA-256; an applied
 * migration whose file changed is refused. After the migrations, every file of sql/
 * whose name starts with "functions" is (re)applied: CREATE OR REPLACE definitions
 * (NOTIFY triggers), idempotent by construction.
 *
 * Expand/contract: a migration's header line `-- compatible-with: N` states the oldest build
 * schema it keeps working for (an "expand" migration: tables, columns, indexes older builds
 * ignore); without it a migration breaks every build before it (a "contract" migration,
 * N = its own version). The floor is recorded per row (schema_migrations.compatible_with,
 * from 0007 on) and xg_schema_verdict judges a build against the database with it.
 *
 * The pure parts (file names, checksums, headers, the plan, the verdict) are separate from
 * the I/O. */
#ifndef XG_MIGRATE_H
#define XG_MIGRATE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

/* The schema version this build expects: the highest migration number. A unit test
 * checks that it matches the files in migrations/. */
#define XG_SCHEMA_VERSION 10

/* The migration that adds schema_migrations.compatible_with: its row and every later one
 * record their floor; earlier rows keep NULL (= their own version). */
#define XG_SCHEMA_FLOOR_SINCE 7

struct xg_migration {
    int version;         /* NNNN                     */
    char name[128];      /* the part after NNNN_      */
    char checksum[65];   /* lowercase hex SHA-256     */
    char *sql;           /* file contents (owned)     */
    int compatible_with; /* its header's floor; = version without one (contract) */
};

struct xg_applied_migration {
    int version;
    char checksum[65];
};

/* Pure: "0001_first_schema.sql" → 1, "first_schema". False for anything else. */
__attribute__((warn_unused_result)) bool xg_migration_parse_name(const char *file, int *version,
                                                                 char *name, size_t name_len);

/* Pure: lowercase hex SHA-256 of the bytes. */
void xg_migration_checksum(const char *data, size_t len, char out[65]);

/* Pure: the floor that sql's header states. The header is a line `-- compatible-with: N` in
 * the leading comment block (the lines before the first one that is neither blank nor a
 * `--` comment), 1 <= N <= version, at most once. No header: *compatible_with = version.
 * False with a message for a malformed, out-of-range or repeated one. */
__attribute__((warn_unused_result)) bool xg_migration_parse_header(const char *sql, int version,
                                                                   int *compatible_with, char *err,
                                                                   size_t errlen);

enum xg_plan_status {
    XG_PLAN_OK,      /* *first_pending is the index of the first file to apply */
    XG_PLAN_CHANGED, /* an applied migration's file changed: refuse             */
    XG_PLAN_MISSING, /* an applied migration has no file (newer schema)         */
    XG_PLAN_GAP,     /* the files skip a number or repeat one                   */
    XG_PLAN_DB_GAP,  /* schema_migrations skips a number (edited by hand)       */
};

/* Pure: compares the files (sorted by version) with what the database recorded (sorted
 * by version). Files must be numbered 1, 2, … n. On anything but OK, *bad_version names
 * the offending migration: the changed or missing one, the number the files skip or
 * repeat, or the number schema_migrations skips. */
enum xg_plan_status xg_migrate_plan(const struct xg_migration *files, size_t nfiles,
                                    const struct xg_applied_migration *applied, size_t napplied,
                                    size_t *first_pending, int *bad_version);

/* Pure: the refusal message for a plan status other than OK (same arguments as the plan
 * plus its outcome), naming the file and saying what to do. */
void xg_migrate_describe(enum xg_plan_status status, const struct xg_migration *files,
                         size_t nfiles, const struct xg_applied_migration *applied, size_t napplied,
                         int bad_version, char *buf, size_t len);

/* Reads every NNNN_name.sql of `dir` (sorted by version; other files are ignored, but a
 * .sql file with another name is an error; a directory without one gives *count 0). The
 * caller frees *out with xg_migrations_free. */
__attribute__((warn_unused_result)) bool xg_migrations_load(const char *dir,
                                                            struct xg_migration **out,
                                                            size_t *count, char *err,
                                                            size_t errlen);
void xg_migrations_free(struct xg_migration *m, size_t count);

/* Applies what is pending, then the sql/functions* files. Logs each step. Returns
 * false with a clear message (naming the file) on any refusal or SQL error. Serialized
 * across processes with an advisory lock. `conn` must be idle (not in a transaction);
 * its server notices are routed to the log from then on. */
__attribute__((warn_unused_result)) bool xg_migrate_apply(PGconn *conn, const char *dir, char *err,
                                                          size_t errlen);

/* How a build fits the database's schema. */
enum xg_schema_verdict {
    XG_SCHEMA_CURRENT,    /* the database is at the build's version */
    XG_SCHEMA_AHEAD,      /* newer, but every newer migration keeps this build working */
    XG_SCHEMA_BEHIND,     /* older: run the migrations */
    XG_SCHEMA_CONTRACTED, /* newer, and a newer migration broke this build: run a newer build */
};

/* Pure: a build expecting E works on a database at V iff V >= E and R <= E, where R
 * (db_floor) is the highest compatible-with floor among the applied migrations newer than
 * E (a row without one counts as its own version; 0 when there is none). Each migration
 * after E must keep E working; one that does not is a contract migration, and a later
 * expand migration cannot undo it, hence the highest floor. */
enum xg_schema_verdict xg_schema_verdict(int db_version, int db_floor, int build_version);

/* Pure: one line saying what the verdict means and what to do ("run the migrations", "run a
 * newer build"). */
void xg_schema_describe(enum xg_schema_verdict verdict, int db_version, int db_floor,
                        int build_version, char *buf, size_t len);

/* Reads schema_migrations and judges it for XG_SCHEMA_VERSION: *verdict and its description
 * in msg. A database without the table is XG_SCHEMA_BEHIND. False (the error in msg) when
 * the query failed. */
__attribute__((warn_unused_result)) bool
xg_schema_check(PGconn *conn, enum xg_schema_verdict *verdict, char *msg, size_t len);

#endif
