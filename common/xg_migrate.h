/* xg_migrate — numbered SQL migrations (migrations/NNNN_name.sql), each applied once in
 * its own transaction and recorded in schema_migrations with its SHA-256; an applied
 * migration whose file changed is refused. After the migrations, every file of sql/
 * whose name starts with "functions" is (re)applied: CREATE OR REPLACE definitions
 * (NOTIFY triggers), idempotent by construction.
 *
 * The pure parts (file names, checksums, the plan) are separate from the I/O. */
#ifndef XG_MIGRATE_H
#define XG_MIGRATE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

/* The schema version this build expects: the highest migration number. A unit test
 * checks that it matches the files in migrations/. */
#define XG_SCHEMA_VERSION 7

struct xg_migration {
    int version;       /* NNNN                     */
    char name[128];    /* the part after NNNN_      */
    char checksum[65]; /* lowercase hex SHA-256     */
    char *sql;         /* file contents (owned)     */
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

/* Readiness: true when schema_migrations' highest version equals XG_SCHEMA_VERSION. */
__attribute__((warn_unused_result)) bool xg_schema_current(PGconn *conn, char *err, size_t errlen);

#endif
