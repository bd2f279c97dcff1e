/* xg_migrate — the numbered migrations and the sql/functions* files.
 *
 * Each migration runs in its own transaction together with its schema_migrations row,
 * so a failed migration leaves no trace and a crash cannot record a half-applied one.
 * A session advisory lock serializes concurrent starters (two replicas booting at once):
 * the second waits, then finds nothing pending. */
#include "xg_migrate.h"

#include "xg_file.h"

#include "xg_log.h"
#include "xg_pg.h"
#include "xg_sql.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pg_advisory_lock key: "xmrgate1" in ASCII, far from the keys anything else uses */
#define MIGRATE_LOCK_KEY "8677717845355029809"
#define FUNCTIONS_PREFIX "functions"

/* ---- pure parts ------------------------------------------------------------------- */

bool xg_migration_parse_name(const char *file, int *version, char *name, size_t name_len)
{
    static const char suffix[] = ".sql";
    size_t len = strlen(file);
    if (len < 4 + 1 + 1 + strlen(suffix) || strcmp(file + len - strlen(suffix), suffix) != 0)
        return false;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        if (!isdigit((unsigned char)file[i]))
            return false;
        v = v * 10 + (file[i] - '0');
    }
    if (v == 0 || file[4] != '_')
        return false;
    const char *start = file + 5, *end = file + len - strlen(suffix);
    for (const char *p = start; p < end; p++)
        if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
            return false;
    if ((size_t)(end - start) >= name_len)
        return false;
    memcpy(name, start, (size_t)(end - start));
    name[end - start] = '\0';
    *version = v;
    return true;
}

void xg_migration_checksum(const char *data, size_t len, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    if (!EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) || md_len != 32) {
        /* only out of memory gets here; an impossible checksum refuses every migration */
        memset(out, '!', 64);
        out[64] = '\0';
        return;
    }
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

#define HEADER_KEY "compatible-with:"

/* One line [line, end): is it a comment, and does it state the header? *value is the
 * header's text (trimmed) when it does. */
static bool comment_line(const char *line, const char *end, const char **value,
                         const char **value_end)
{
    *value = NULL;
    while (line < end && (*line == ' ' || *line == '\t'))
        line++;
    while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    if (line == end)
        return true; /* blank */
    if (end - line < 2 || line[0] != '-' || line[1] != '-')
        return false;
    line += 2;
    while (line < end && (*line == ' ' || *line == '\t'))
        line++;
    size_t klen = strlen(HEADER_KEY);
    if ((size_t)(end - line) >= klen && strncmp(line, HEADER_KEY, klen) == 0) {
        line += klen;
        while (line < end && (*line == ' ' || *line == '\t'))
            line++;
        *value = line;
        *value_end = end;
    }
    return true;
}

bool xg_migration_parse_header(const char *sql, int version, int *compatible_with, char *err,
                               size_t errlen)
{
    int floor = 0;
    for (const char *line = sql; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        const char *v, *v_end;
        if (!comment_line(line, end, &v, &v_end))
            break;
        if (v) {
            int n = 0;
            bool digits = v < v_end && v_end - v <= 4;
            for (const char *p = v; digits && p < v_end; p++) {
                digits = isdigit((unsigned char)*p);
                n = n * 10 + (*p - '0');
            }
            if (floor) {
                snprintf(err, errlen, "the header \"-- %s\" is given twice", HEADER_KEY);
                return false;
            }
            if (!digits || n < 1 || n > version) {
                snprintf(err, errlen,
                         "the header \"-- %s %.*s\" must name a schema version from 1 to "
                         "%d (the oldest build it keeps working for, at most its own)",
                         HEADER_KEY, (int)(v_end - v), v, version);
                return false;
            }
            floor = n;
        }
        line = *end ? end + 1 : end;
    }
    *compatible_with = floor ? floor : version;
    return true;
}

enum xg_plan_status xg_migrate_plan(const struct xg_migration *files, size_t nfiles,
                                    const struct xg_applied_migration *applied, size_t napplied,
                                    size_t *first_pending, int *bad_version)
{
    *first_pending = 0;
    *bad_version = 0;
    for (size_t i = 0; i < nfiles; i++) {
        if (files[i].version != (int)i + 1) {
            bool repeat = i > 0 && files[i].version == files[i - 1].version;
            *bad_version = repeat ? files[i].version : (int)i + 1;
            return XG_PLAN_GAP;
        }
    }
    for (size_t i = 0; i < napplied; i++) {
        int v = applied[i].version;
        if (v < 1 || (size_t)v > nfiles) {
            *bad_version = v;
            return XG_PLAN_MISSING;
        }
        if (strcmp(files[v - 1].checksum, applied[i].checksum) != 0) {
            *bad_version = v;
            return XG_PLAN_CHANGED;
        }
        if (v != (int)i + 1) {
            *bad_version = (int)i + 1;
            return XG_PLAN_DB_GAP;
        }
    }
    *first_pending = napplied;
    return XG_PLAN_OK;
}

static const struct xg_migration *file_of(const struct xg_migration *files, size_t nfiles,
                                          int version, size_t nth)
{
    for (size_t i = 0; i < nfiles; i++)
        if (files[i].version == version && nth-- == 0)
            return &files[i];
    return NULL;
}

static const char *recorded_checksum(const struct xg_applied_migration *applied, size_t napplied,
                                     int version)
{
    for (size_t i = 0; i < napplied; i++)
        if (applied[i].version == version)
            return applied[i].checksum;
    return "?";
}

void xg_migrate_describe(enum xg_plan_status status, const struct xg_migration *files,
                         size_t nfiles, const struct xg_applied_migration *applied, size_t napplied,
                         int bad_version, char *buf, size_t len)
{
    const struct xg_migration *f = file_of(files, nfiles, bad_version, 0);
    const struct xg_migration *again = file_of(files, nfiles, bad_version, 1);
    switch (status) {
    case XG_PLAN_OK:
        snprintf(buf, len, "nothing wrong");
        return;
    case XG_PLAN_CHANGED:
        snprintf(buf, len,
                 "migration %04d_%s.sql was changed after it was applied (checksum %.12s… "
                 "recorded, %.12s… on disk); migrations are append-only: add a new one instead",
                 bad_version, f ? f->name : "?", recorded_checksum(applied, napplied, bad_version),
                 f ? f->checksum : "?");
        return;
    case XG_PLAN_MISSING:
        snprintf(buf, len,
                 "the database has migration %04d applied but there is no file for it: the "
                 "schema is newer than this build (which knows up to %04zu); run a newer build",
                 bad_version, nfiles);
        return;
    case XG_PLAN_GAP:
        if (f && again)
            snprintf(buf, len,
                     "two migration files are numbered %04d (%04d_%s.sql and %04d_%s.sql); "
                     "each number is used once",
                     bad_version, bad_version, f->name, bad_version, again->name);
        else
            snprintf(buf, len, "migration files skip %04d; numbers run 0001, 0002, … without gaps",
                     bad_version);
        return;
    case XG_PLAN_DB_GAP:
        snprintf(buf, len,
                 "schema_migrations has no row for migration %04d although later ones are "
                 "recorded; the table was edited by hand",
                 bad_version);
        return;
    }
    snprintf(buf, len, "unknown plan status %d", (int)status);
}

enum xg_schema_verdict xg_schema_verdict(int db_version, int db_floor, int build_version)
{
    if (db_version < build_version)
        return XG_SCHEMA_BEHIND;
    if (db_version == build_version)
        return XG_SCHEMA_CURRENT;
    return db_floor <= build_version ? XG_SCHEMA_AHEAD : XG_SCHEMA_CONTRACTED;
}

void xg_schema_describe(enum xg_schema_verdict verdict, int db_version, int db_floor,
                        int build_version, char *buf, size_t len)
{
    switch (verdict) {
    case XG_SCHEMA_CURRENT:
        snprintf(buf, len, "database schema is at version %d, as this build expects", db_version);
        return;
    case XG_SCHEMA_AHEAD:
        snprintf(buf, len,
                 "database schema is at version %d, ahead of this build's %d but compatible: "
                 "the migrations after %d are expand migrations that keep builds from %d on "
                 "working",
                 db_version, build_version, build_version, db_floor);
        return;
    case XG_SCHEMA_BEHIND:
        if (db_version == 0)
            snprintf(buf, len, "the database has no schema yet: run the migrations");
        else
            snprintf(buf, len,
                     "database schema is at version %d, this build expects %d: run the "
                     "migrations",
                     db_version, build_version);
        return;
    case XG_SCHEMA_CONTRACTED:
        snprintf(buf, len,
                 "database schema is at version %d, this build expects %d and a migration "
                 "after it no longer works for builds before %d: run a newer build",
                 db_version, build_version, db_floor);
        return;
    }
    snprintf(buf, len, "unknown schema verdict %d", (int)verdict);
}

/* ---- files ------------------------------------------------------------------------ */

void xg_migrations_free(struct xg_migration *m, size_t count)
{
    for (size_t i = 0; m && i < count; i++)
        free(m[i].sql);
    free(m);
}

static int by_version(const void *a, const void *b)
{
    const struct xg_migration *x = a, *y = b;
    if (x->version != y->version)
        return x->version < y->version ? -1 : 1;
    return strcmp(x->name, y->name);
}

static bool load_one(const char *dir, const char *file, struct xg_migration *m, char *err,
                     size_t errlen)
{
    char path[4096];
    size_t len;
    memset(m, 0, sizeof *m);
    if (!xg_migration_parse_name(file, &m->version, m->name, sizeof m->name)) {
        snprintf(err, errlen,
                 "%s/%s: not a migration file name (expected NNNN_name.sql, lower case)", dir,
                 file);
        return false;
    }
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (!xg_file_read(path, &m->sql, &len)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return false;
    }
    if (strlen(m->sql) != len) {
        snprintf(err, errlen, "%s: contains a NUL byte", path);
        return false;
    }
    char why[256];
    if (!xg_migration_parse_header(m->sql, m->version, &m->compatible_with, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s", path, why);
        return false;
    }
    xg_migration_checksum(m->sql, len, m->checksum);
    return true;
}

bool xg_migrations_load(const char *dir, struct xg_migration **out, size_t *count, char *err,
                        size_t errlen)
{
    bool ok = false;
    /* Allocated before the first file: an empty directory gives an empty array, never a
     * null one (qsort, even of nothing, must be given an array). */
    size_t n = 0, cap = 16;
    struct xg_migration *list = malloc(cap * sizeof *list);
    DIR *d = NULL;
    if (!list) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
        goto out;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 4, ".sql") != 0)
            continue;
        if (n == cap) {
            cap *= 2;
            struct xg_migration *grown = realloc(list, cap * sizeof *list);
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
            list = grown;
        }
        bool loaded = load_one(dir, e->d_name, &list[n], err, errlen);
        n++; /* counted even on failure: load_one may have allocated its sql */
        if (!loaded)
            goto out;
    }
    qsort(list, n, sizeof *list, by_version);
    *out = list;
    *count = n;
    list = NULL;
    ok = true;
out:
    if (d)
        closedir(d);
    xg_migrations_free(list, n);
    return ok;
}

/* ---- database --------------------------------------------------------------------- */

/* Converts PostgreSQL's error position (1-based, in characters) into a line of `sql`. */
static int error_line(const char *sql, const PGresult *res)
{
    const char *pos = PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION);
    if (!pos)
        return 0;
    long chars = strtol(pos, NULL, 10);
    int line = 1;
    for (const char *p = sql; *p && chars > 1; p++) {
        if (((unsigned char)*p & 0xC0) != 0x80) /* UTF-8 continuation bytes are no chars */
            chars--;
        if (*p == '\n')
            line++;
    }
    return line;
}

static void sql_error(const char *what, const char *sql, const PGresult *res, PGconn *conn,
                      char *err, size_t errlen)
{
    const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    int line = sql ? error_line(sql, res) : 0;
    if (!primary)
        primary = PQerrorMessage(conn);
    if (line > 0)
        snprintf(err, errlen, "%s: line %d: %s", what, line, primary);
    else
        snprintf(err, errlen, "%s: %s", what, primary);
    size_t n = strlen(err);
    while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
        err[--n] = '\0';
}

/* Runs sql (possibly several statements) and reports failures as "what: line N: …". */
static bool run(PGconn *conn, const char *sql, const char *what, char *err, size_t errlen)
{
    PGresult *res = PQexec(conn, sql);
    ExecStatusType st = PQresultStatus(res);
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY;
    if (!ok)
        sql_error(what, sql, res, conn, err, errlen);
    PQclear(res);
    return ok;
}

static void rollback(PGconn *conn)
{
    PQclear(PQexec(conn, "ROLLBACK"));
}

static bool read_applied(PGconn *conn, struct xg_applied_migration **out, size_t *count, char *err,
                         size_t errlen)
{
    PGresult *res = PQexec(conn, "SELECT version, checksum FROM schema_migrations ORDER BY 1");
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        sql_error("reading schema_migrations", NULL, res, conn, err, errlen);
        PQclear(res);
        return false;
    }
    size_t n = (size_t)PQntuples(res);
    struct xg_applied_migration *list = calloc(n ? n : 1, sizeof *list);
    if (!list) {
        snprintf(err, errlen, "out of memory");
        PQclear(res);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        list[i].version = atoi(PQgetvalue(res, (int)i, 0));
        snprintf(list[i].checksum, sizeof list[i].checksum, "%s", PQgetvalue(res, (int)i, 1));
    }
    PQclear(res);
    *out = list;
    *count = n;
    return true;
}

static bool is_expand(const struct xg_migration *m)
{
    return m->compatible_with < m->version;
}

static void describe_kind(const struct xg_migration *m, char *buf, size_t len)
{
    if (is_expand(m))
        snprintf(buf, len, "expand (builds from schema %d on keep working)", m->compatible_with);
    else
        snprintf(buf, len, "contract (builds before schema %d stop)", m->version);
}

static bool apply_migration(PGconn *conn, const struct xg_migration *m, char *err, size_t errlen)
{
    char file[160], version[16], floor[16], kind[96];
    snprintf(file, sizeof file, "%04d_%s.sql", m->version, m->name);
    snprintf(version, sizeof version, "%d", m->version);
    snprintf(floor, sizeof floor, "%d", m->compatible_with);
    describe_kind(m, kind, sizeof kind);
    if (!run(conn, "BEGIN", file, err, errlen))
        return false;
    if (!run(conn, m->sql, file, err, errlen))
        goto fail;
    /* Before XG_SCHEMA_FLOOR_SINCE the column does not exist yet (that migration adds it,
     * above, in this transaction). */
    bool with_floor = m->version >= XG_SCHEMA_FLOOR_SINCE;
    const char *params[] = {version, m->name, m->checksum, floor};
    PGresult *res = PQexecParams(conn,
                                 with_floor ? "INSERT INTO schema_migrations (version, name, "
                                              "checksum, compatible_with) VALUES ($1, $2, $3, $4)"
                                            : "INSERT INTO schema_migrations (version, name, "
                                              "checksum) VALUES ($1, $2, $3)",
                                 with_floor ? 4 : 3, NULL, params, NULL, NULL, 0);
    bool recorded = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!recorded)
        sql_error(file, NULL, res, conn, err, errlen);
    PQclear(res);
    if (!recorded || !run(conn, "COMMIT", file, err, errlen))
        goto fail;
    xg_log_fields(XG_LOG_INFO, "migration_applied",
                  json_pack("{s:i,s:s,s:s,s:i}", "version", m->version, "name", m->name, "kind",
                            is_expand(m) ? "expand" : "contract", "compatible_with",
                            m->compatible_with),
                  "applied %s: %s", file, kind);
    return true;
fail:
    rollback(conn);
    return false;
}

static int by_file_name(const void *a, const void *b)
{
    const struct xg_sql_file *const *x = a, *const *y = b;
    return strcmp((*x)->name, (*y)->name);
}

/* CREATE OR REPLACE definitions: re-run on every start, all or nothing. */
static bool apply_functions(PGconn *conn, char *err, size_t errlen)
{
    bool ok = false;
    size_t n = 0;
    const struct xg_sql_file **list = calloc(xg_sql_file_count + 1, sizeof *list);
    if (!list) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    for (size_t i = 0; i < xg_sql_file_count; i++)
        if (strncmp(xg_sql_files[i].name, FUNCTIONS_PREFIX, strlen(FUNCTIONS_PREFIX)) == 0)
            list[n++] = &xg_sql_files[i];
    qsort(list, n, sizeof *list, by_file_name);
    if (!run(conn, "BEGIN", "sql/functions", err, errlen))
        goto out;
    for (size_t i = 0; i < n; i++) {
        char what[160];
        snprintf(what, sizeof what, "sql/%s", list[i]->name);
        if (!run(conn, list[i]->text, what, err, errlen)) {
            rollback(conn);
            goto out;
        }
    }
    if (!run(conn, "COMMIT", "sql/functions", err, errlen)) {
        rollback(conn);
        goto out;
    }
    xg_log_fields(XG_LOG_INFO, "schema_functions_applied", json_pack("{s:i}", "files", (int)n),
                  "applied %zu sql/functions* file(s)", n);
    ok = true;
out:
    free(list);
    return ok;
}

static const char create_table_sql[] = "CREATE TABLE IF NOT EXISTS schema_migrations ("
                                       " version int PRIMARY KEY,"
                                       " name text NOT NULL,"
                                       " checksum text NOT NULL,"
                                       " applied_at timestamptz NOT NULL DEFAULT now())";

bool xg_migrate_apply(PGconn *conn, const char *dir, char *err, size_t errlen)
{
    bool ok = false, locked = false;
    struct xg_migration *files = NULL;
    struct xg_applied_migration *applied = NULL;
    size_t nfiles = 0, napplied = 0, first_pending = 0;
    int bad_version = 0;

    xg_pg_log_notices(conn);
    if (!xg_migrations_load(dir, &files, &nfiles, err, errlen))
        goto out;
    if (!run(conn, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", "taking the migration lock",
             err, errlen))
        goto out;
    locked = true;
    if (!run(conn, create_table_sql, "creating schema_migrations", err, errlen) ||
        !read_applied(conn, &applied, &napplied, err, errlen))
        goto out;
    enum xg_plan_status st =
        xg_migrate_plan(files, nfiles, applied, napplied, &first_pending, &bad_version);
    if (st != XG_PLAN_OK) {
        xg_migrate_describe(st, files, nfiles, applied, napplied, bad_version, err, errlen);
        goto out;
    }
    for (size_t i = first_pending; i < nfiles; i++)
        if (!apply_migration(conn, &files[i], err, errlen))
            goto out;
    if (!apply_functions(conn, err, errlen))
        goto out;
    xg_log_fields(XG_LOG_INFO, "schema_current", json_pack("{s:i}", "version", (int)nfiles),
                  "schema at version %zu (%zu migration(s) applied now)", nfiles,
                  nfiles - first_pending);
    ok = true;
out:
    if (locked)
        PQclear(PQexec(conn, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")"));
    xg_migrations_free(files, nfiles);
    free(applied);
    return ok;
}

/* The highest floor among the rows newer than build_version; a row without one counts as
 * its own version, and so does every row of a table without the column (edited by hand:
 * the column comes with XG_SCHEMA_FLOOR_SINCE). */
static bool read_floor(PGconn *conn, int build_version, int db_version, int *floor, char *msg,
                       size_t len)
{
    char build[16];
    snprintf(build, sizeof build, "%d", build_version);
    const char *params[] = {build};
    PGresult *res = PQexecParams(conn,
                                 "SELECT coalesce(max(coalesce(compatible_with, version)), 0) "
                                 "FROM schema_migrations WHERE version > $1::int",
                                 1, NULL, params, NULL, NULL, 0);
    bool ok = PQresultStatus(res) == PGRES_TUPLES_OK;
    if (ok) {
        *floor = atoi(PQgetvalue(res, 0, 0));
    } else {
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        ok = state && strcmp(state, "42703") == 0; /* undefined column */
        if (ok)
            *floor = db_version;
        else
            sql_error("reading schema_migrations", NULL, res, conn, msg, len);
    }
    PQclear(res);
    return ok;
}

bool xg_schema_check(PGconn *conn, enum xg_schema_verdict *verdict, char *msg, size_t len)
{
    bool ok = false;
    int version = 0, floor = 0;
    PGresult *res = PQexec(conn, "SELECT coalesce(max(version), 0) FROM schema_migrations");
    if (PQresultStatus(res) == PGRES_TUPLES_OK) {
        version = atoi(PQgetvalue(res, 0, 0));
    } else {
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        if (!state || strcmp(state, "42P01") != 0) { /* anything but "no such table" */
            sql_error("reading schema_migrations", NULL, res, conn, msg, len);
            goto out;
        }
    }
    if (version > XG_SCHEMA_VERSION &&
        !read_floor(conn, XG_SCHEMA_VERSION, version, &floor, msg, len))
        goto out;
    *verdict = xg_schema_verdict(version, floor, XG_SCHEMA_VERSION);
    xg_schema_describe(*verdict, version, floor, XG_SCHEMA_VERSION, msg, len);
    ok = true;
out:
    PQclear(res);
    return ok;
}
