/* Tests for xg_migrate's pure parts: file names, checksums, the plan and its messages,
 * loading a directory, and that XG_SCHEMA_VERSION matches migrations/ in this tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "xg_migrate.h"

static void test_parse_name(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        bool ok;
        int version;
        const char *name;
    } cases[] = {
        {"0001_first_schema.sql", true, 1, "first_schema"},
        {"0042_add_index.sql", true, 42, "add_index"},
        {"9999_x.sql", true, 9999, "x"},
        {"0002_v2_tiers.sql", true, 2, "v2_tiers"},
        {"0000_zero.sql", false, 0, NULL},
        {"0001.sql", false, 0, NULL},
        {"0001_.sql", false, 0, NULL},
        {"001_short.sql", false, 0, NULL},
        {"00001_long.sql", false, 0, NULL},
        {"abcd_name.sql", false, 0, NULL},
        {"0001-name.sql", false, 0, NULL},
        {"0001_name.txt", false, 0, NULL},
        {"0001_name.sql~", false, 0, NULL},
        {"0001_Name.sql", false, 0, NULL},
        {"0001_two words.sql", false, 0, NULL},
        {"", false, 0, NULL},
        {"README.md", false, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int version = -1;
        char name[128] = "";
        bool ok = xg_migration_parse_name(cases[i].file, &version, name, sizeof name);
        if (ok != cases[i].ok)
            fail_msg("\"%s\": expected %s", cases[i].file, cases[i].ok ? "ok" : "failure");
        if (ok) {
            assert_int_equal(version, cases[i].version);
            assert_string_equal(name, cases[i].name);
        }
    }
}

static void test_parse_name_too_long_for_buffer(void **state)
{
    (void)state;
    int version;
    char name[8];
    assert_false(xg_migration_parse_name("0001_much_too_long.sql", &version, name, sizeof name));
    assert_true(xg_migration_parse_name("0001_seven77.sql", &version, name, sizeof name));
    assert_string_equal(name, "seven77");
}

static void test_checksum(void **state)
{
    (void)state;
    char out[65];
    xg_migration_checksum("abc", 3, out);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    xg_migration_checksum("", 0, out);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    /* bytes, not a C string: an embedded NUL counts */
    char other[65];
    xg_migration_checksum("ab\0c", 4, other);
    assert_string_not_equal(other, out);
}

/* ---- the compatible-with header ------------------------------------------------------ */

static void test_parse_header(void **state)
{
    (void)state;
    static const struct {
        const char *sql;
        int version;
        bool ok;
        int floor;
    } cases[] = {
        {"CREATE TABLE t ();\n", 8, true, 8},
        {"", 8, true, 8},
        {"-- 0008: a table\n-- compatible-with: 7\nCREATE TABLE t ();\n", 8, true, 7},
        {"-- compatible-with: 7", 8, true, 7}, /* no newline at the end */
        {"--compatible-with:7\n", 8, true, 7},
        {"  --   compatible-with:   3  \r\nSELECT 1;\n", 8, true, 3},
        {"\n\n-- compatible-with: 1\n", 8, true, 1},
        {"-- compatible-with: 8\n", 8, true, 8},    /* its own version: a contract */
        {"-- compatible-with: 0007\n", 8, true, 7}, /* leading zeros, as in file names */
        /* only the leading comment block counts */
        {"CREATE TABLE t ();\n-- compatible-with: 7\n", 8, true, 8},
        {"SELECT 1; -- compatible-with: 7\n", 8, true, 8},
        /* other comments that mention it are no header */
        {"-- the compatible-with: header is below\n", 8, true, 8},
        {"-- compatible-with: 9\n", 8, false, 0}, /* newer than itself */
        {"-- compatible-with: 0\n", 8, false, 0},
        {"-- compatible-with: -1\n", 8, false, 0},
        {"-- compatible-with: seven\n", 8, false, 0},
        {"-- compatible-with: 7 8\n", 8, false, 0},
        {"-- compatible-with:\n", 8, false, 0},
        {"-- compatible-with: 12345\n", 99, false, 0},
        {"-- compatible-with: 7\n-- compatible-with: 7\n", 8, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int floor = -1;
        char err[256] = "";
        bool ok =
            xg_migration_parse_header(cases[i].sql, cases[i].version, &floor, err, sizeof err);
        if (ok != cases[i].ok)
            fail_msg("case %zu \"%s\": expected %s (%s)", i, cases[i].sql,
                     cases[i].ok ? "ok" : "failure", err);
        if (ok)
            assert_int_equal(floor, cases[i].floor);
        else
            assert_non_null(strstr(err, "compatible-with"));
    }
}

/* ---- the verdict ------------------------------------------------------------------ */

static void test_schema_verdict(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        int db_version, db_floor, build;
        enum xg_schema_verdict want;
    } cases[] = {
        {"equal", 7, 0, 7, XG_SCHEMA_CURRENT},
        {"equal, first version", 1, 0, 1, XG_SCHEMA_CURRENT},
        {"no schema at all", 0, 0, 7, XG_SCHEMA_BEHIND},
        {"one behind", 6, 0, 7, XG_SCHEMA_BEHIND},
        {"far behind", 2, 0, 9, XG_SCHEMA_BEHIND},
        {"one expand ahead", 8, 7, 7, XG_SCHEMA_AHEAD},
        {"expand ahead, keeping older builds too", 8, 5, 7, XG_SCHEMA_AHEAD},
        {"two expands ahead", 9, 7, 7, XG_SCHEMA_AHEAD},
        {"one contract ahead", 8, 8, 7, XG_SCHEMA_CONTRACTED},
        {"expand then contract", 9, 9, 7, XG_SCHEMA_CONTRACTED},
        /* a contract, then an expand for builds from the contract on: max floor is 8 */
        {"contract then expand", 9, 8, 7, XG_SCHEMA_CONTRACTED},
        {"contract then expand, build at the contract", 9, 8, 8, XG_SCHEMA_AHEAD},
        {"ahead, floor one past the build", 20, 11, 10, XG_SCHEMA_CONTRACTED},
        {"ahead, floor at the build", 20, 10, 10, XG_SCHEMA_AHEAD},
        {"ahead, no floor known", 8, 0, 7, XG_SCHEMA_AHEAD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum xg_schema_verdict got =
            xg_schema_verdict(cases[i].db_version, cases[i].db_floor, cases[i].build);
        if (got != cases[i].want)
            fail_msg("%s: expected verdict %d, got %d", cases[i].what, (int)cases[i].want,
                     (int)got);
    }
}

static void test_schema_describe(void **state)
{
    (void)state;
    char msg[512];
    xg_schema_describe(XG_SCHEMA_CURRENT, 7, 0, 7, msg, sizeof msg);
    assert_string_equal(msg, "database schema is at version 7, as this build expects");
    xg_schema_describe(XG_SCHEMA_BEHIND, 6, 0, 7, msg, sizeof msg);
    assert_string_equal(msg, "database schema is at version 6, this build expects 7: run the "
                             "migrations");
    xg_schema_describe(XG_SCHEMA_BEHIND, 0, 0, 7, msg, sizeof msg);
    assert_string_equal(msg, "the database has no schema yet: run the migrations");
    xg_schema_describe(XG_SCHEMA_AHEAD, 9, 7, 7, msg, sizeof msg);
    assert_string_equal(msg, "database schema is at version 9, ahead of this build's 7 but "
                             "compatible: the migrations after 7 are expand migrations that keep "
                             "builds from 7 on working");
    xg_schema_describe(XG_SCHEMA_CONTRACTED, 9, 8, 7, msg, sizeof msg);
    assert_string_equal(msg, "database schema is at version 9, this build expects 7 and a "
                             "migration after it no longer works for builds before 8: run a "
                             "newer build");
}

/* ---- plan ------------------------------------------------------------------------- */

#define MAXF 5

struct plan_case {
    const char *what;
    int file_versions[MAXF]; /* 0-terminated */
    int applied_versions[MAXF];
    int changed_version; /* its recorded checksum differs from the file's; 0: none */
    enum xg_plan_status status;
    size_t first_pending;
    int bad_version;
};

static size_t fill_files(const int *versions, struct xg_migration *files)
{
    size_t n = 0;
    for (; n < MAXF && versions[n]; n++) {
        memset(&files[n], 0, sizeof files[n]);
        files[n].version = versions[n];
        snprintf(files[n].name, sizeof files[n].name, "step_%zu", n);
        char body[32];
        snprintf(body, sizeof body, "-- migration %d", versions[n]);
        xg_migration_checksum(body, strlen(body), files[n].checksum);
    }
    return n;
}

static size_t fill_applied(const struct plan_case *c, struct xg_applied_migration *applied)
{
    size_t n = 0;
    for (; n < MAXF && c->applied_versions[n]; n++) {
        int v = c->applied_versions[n];
        char body[32];
        snprintf(body, sizeof body, "-- migration %d%s", v, v == c->changed_version ? "!" : "");
        applied[n].version = v;
        xg_migration_checksum(body, strlen(body), applied[n].checksum);
    }
    return n;
}

static void test_plan(void **state)
{
    (void)state;
    static const struct plan_case cases[] = {
        {"fresh database", {1, 2, 3}, {0}, 0, XG_PLAN_OK, 0, 0},
        {"partially applied", {1, 2, 3}, {1, 2}, 0, XG_PLAN_OK, 2, 0},
        {"fully applied", {1, 2, 3}, {1, 2, 3}, 0, XG_PLAN_OK, 3, 0},
        {"no files, empty database", {0}, {0}, 0, XG_PLAN_OK, 0, 0},
        {"changed checksum", {1, 2, 3}, {1, 2}, 2, XG_PLAN_CHANGED, 0, 2},
        {"changed first", {1, 2}, {1, 2}, 1, XG_PLAN_CHANGED, 0, 1},
        {"missing file (newer schema)", {1, 2}, {1, 2, 3}, 0, XG_PLAN_MISSING, 0, 3},
        {"missing file, no files", {0}, {1}, 0, XG_PLAN_MISSING, 0, 1},
        {"gap in files", {1, 2, 4}, {1}, 0, XG_PLAN_GAP, 0, 3},
        {"files start late", {2, 3}, {0}, 0, XG_PLAN_GAP, 0, 1},
        {"duplicate file number", {1, 2, 2, 3}, {0}, 0, XG_PLAN_GAP, 0, 2},
        {"gap in the database", {1, 2, 3}, {1, 3}, 0, XG_PLAN_DB_GAP, 0, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct plan_case *c = &cases[i];
        struct xg_migration files[MAXF];
        struct xg_applied_migration applied[MAXF];
        size_t nfiles = fill_files(c->file_versions, files);
        size_t napplied = fill_applied(c, applied);
        size_t first = 99;
        int bad = -1;
        enum xg_plan_status st = xg_migrate_plan(files, nfiles, applied, napplied, &first, &bad);
        if (st != c->status || bad != c->bad_version ||
            (st == XG_PLAN_OK && first != c->first_pending))
            fail_msg("%s: got status %d bad %d first %zu; expected %d bad %d first %zu", c->what,
                     st, bad, first, c->status, c->bad_version, c->first_pending);
    }
}

static void test_describe(void **state)
{
    (void)state;
    struct xg_migration files[3] = {
        {.version = 1, .name = "first_schema"},
        {.version = 2, .name = "tiers"},
        {.version = 2, .name = "usage"},
    };
    snprintf(files[0].checksum, 65, "%s",
             "def4567890abcdef0000000000000000000000000000000000000000000000ff");
    struct xg_applied_migration applied[1] = {{.version = 1}};
    snprintf(applied[0].checksum, 65, "%s",
             "abc1234567890abc0000000000000000000000000000000000000000000000ee");
    char msg[512];

    xg_migrate_describe(XG_PLAN_CHANGED, files, 1, applied, 1, 1, msg, sizeof msg);
    assert_string_equal(msg, "migration 0001_first_schema.sql was changed after it was applied "
                             "(checksum abc123456789… recorded, def4567890ab… on disk); "
                             "migrations are append-only: add a new one instead");

    xg_migrate_describe(XG_PLAN_GAP, files, 3, NULL, 0, 2, msg, sizeof msg);
    assert_string_equal(msg, "two migration files are numbered 0002 (0002_tiers.sql and "
                             "0002_usage.sql); each number is used once");

    xg_migrate_describe(XG_PLAN_GAP, files, 2, NULL, 0, 3, msg, sizeof msg);
    assert_string_equal(msg, "migration files skip 0003; numbers run 0001, 0002, … without gaps");

    xg_migrate_describe(XG_PLAN_MISSING, files, 1, applied, 1, 4, msg, sizeof msg);
    assert_non_null(strstr(msg, "migration 0004 applied but there is no file for it"));
    assert_non_null(strstr(msg, "knows up to 0001"));

    xg_migrate_describe(XG_PLAN_DB_GAP, files, 2, applied, 1, 2, msg, sizeof msg);
    assert_non_null(strstr(msg, "no row for migration 0002"));
}

/* ---- loading a directory ---------------------------------------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static void test_load_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/xg_test_migrations_XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, "0002_second.sql", "CREATE TABLE b ();\n");
    write_file(dir, "0001_first.sql", "abc");
    write_file(dir, "README.md", "not a migration\n");
    write_file(dir, ".0003_hidden.sql", "ignored\n");

    struct xg_migration *m = NULL;
    size_t n = 0;
    char err[512] = "";
    assert_true(xg_migrations_load(dir, &m, &n, err, sizeof err));
    assert_int_equal(n, 2);
    assert_int_equal(m[0].version, 1);
    assert_string_equal(m[0].name, "first");
    assert_string_equal(m[0].sql, "abc");
    assert_string_equal(m[0].checksum,
                        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(m[1].version, 2);
    assert_string_equal(m[1].sql, "CREATE TABLE b ();\n");
    xg_migrations_free(m, n);

    write_file(dir, "0003-bad-name.sql", "SELECT 1;\n");
    m = NULL;
    assert_false(xg_migrations_load(dir, &m, &n, err, sizeof err));
    assert_null(m);
    char expected[600];
    snprintf(expected, sizeof expected,
             "%s/0003-bad-name.sql: not a migration file name (expected NNNN_name.sql, lower "
             "case)",
             dir);
    assert_string_equal(err, expected);
    snprintf(expected, sizeof expected, "%s/0003-bad-name.sql", dir);
    unlink(expected);

    /* the header is read on load, and a bad one names the file */
    write_file(dir, "0003_expand.sql", "-- 0003\n-- compatible-with: 2\nCREATE TABLE c ();\n");
    assert_true(xg_migrations_load(dir, &m, &n, err, sizeof err));
    assert_int_equal(n, 3);
    assert_int_equal(m[0].compatible_with, 1);
    assert_int_equal(m[1].compatible_with, 2);
    assert_int_equal(m[2].compatible_with, 2);
    xg_migrations_free(m, n);
    write_file(dir, "0003_expand.sql", "-- compatible-with: 4\n");
    m = NULL;
    assert_false(xg_migrations_load(dir, &m, &n, err, sizeof err));
    assert_null(m);
    assert_non_null(strstr(err, "/0003_expand.sql: the header \"-- compatible-with: 4\" must "
                                "name a schema version from 1 to 3"));
    remove_dir(dir);

    assert_false(xg_migrations_load("/nonexistent/migrations", &m, &n, err, sizeof err));
    assert_string_equal(err, "cannot open /nonexistent/migrations: No such file or directory");
}

/* A directory without a migration loads as none, and sorting nothing is given an array
 * (a null one is undefined behaviour for qsort, which UBSan's nonnull check stops on). */
static void test_load_empty_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/xg_test_migrations_XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, "README.md", "not a migration\n");
    struct xg_migration *m = NULL;
    size_t n = 99;
    char err[512] = "";
    assert_true(xg_migrations_load(dir, &m, &n, err, sizeof err));
    assert_int_equal(n, 0);
    xg_migrations_free(m, n);
    remove_dir(dir);
}

/* ---- this tree -------------------------------------------------------------------- */

/* Tests run from the repository root. */
static void test_schema_version_matches_files(void **state)
{
    (void)state;
    DIR *d = opendir("migrations");
    assert_non_null(d);
    int highest = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        int v = 0, digits = 0;
        while (digits < 4 && e->d_name[digits] >= '0' && e->d_name[digits] <= '9')
            v = v * 10 + (e->d_name[digits++] - '0');
        if (digits == 4 && e->d_name[4] == '_' && v > highest)
            highest = v;
    }
    closedir(d);
    if (highest != XG_SCHEMA_VERSION)
        fail_msg("XG_SCHEMA_VERSION is %d but the highest migration in migrations/ is %04d: "
                 "update common/xg_migrate.h",
                 XG_SCHEMA_VERSION, highest);

    /* and the tree's migrations load and plan cleanly against an empty database */
    struct xg_migration *m = NULL;
    size_t n = 0, first = 99;
    int bad = -1;
    char err[512] = "";
    if (!xg_migrations_load("migrations", &m, &n, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(n, XG_SCHEMA_VERSION);
    assert_int_equal(xg_migrate_plan(m, n, NULL, 0, &first, &bad), XG_PLAN_OK);
    assert_int_equal(first, 0);
    /* 0007 adds the floor column and keeps the 6-era schema's tables as they were */
    assert_int_equal(m[XG_SCHEMA_FLOOR_SINCE - 1].version, XG_SCHEMA_FLOOR_SINCE);
    assert_int_equal(m[XG_SCHEMA_FLOOR_SINCE - 1].compatible_with, 6);
    xg_migrations_free(m, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_name),
        cmocka_unit_test(test_parse_name_too_long_for_buffer),
        cmocka_unit_test(test_checksum),
        cmocka_unit_test(test_parse_header),
        cmocka_unit_test(test_schema_verdict),
        cmocka_unit_test(test_schema_describe),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_load_dir),
        cmocka_unit_test(test_load_empty_dir),
        cmocka_unit_test(test_schema_version_matches_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
