/* xg_config — strict, declarative configuration: an INI file plus XMRGATE_* overrides.
 *
 * Each daemon describes its keys in a table of struct xg_cfg_key (section, name, type,
 * offset of the field in the daemon's config struct, default). Loading parses the file
 * with libinih, then applies environment overrides named XMRGATE_<SECTION>_<NAME> (upper
 * case, '.' and '-' become '_'), then checks that every key without a default is set.
 * Any unknown section or key, a value of the wrong type or out of range, or a missing
 * required key is an error whose text names the key and, for the file, the line. An
 * XMRGATE_* variable that names no key is ignored (other tools share the prefix). File
 * lines are limited to 197 bytes (libinih's buffer) and indented continuation lines are
 * refused, so a value is always exactly what its one line says.
 *
 * Strings in the target struct are malloc'd and owned by it: free with xg_config_free. */
#ifndef XG_CONFIG_H
#define XG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xg_cfg_type {
    XG_CFG_STRING,   /* char *                                                  */
    XG_CFG_INT,      /* int64_t, decimal, within [min, max]                     */
    XG_CFG_BOOL,     /* bool: true/false/yes/no/on/off/1/0                      */
    XG_CFG_DURATION, /* int64_t milliseconds: "250ms", "2s", "5m", "17h", "1d"   */
    XG_CFG_SIZE,     /* int64_t bytes: "1024", "64k", "1m", "256m", "1g" (binary) */
};

struct xg_cfg_key {
    const char *section; /* "" for keys before any [section]                 */
    const char *name;
    enum xg_cfg_type type;
    size_t offset;             /* offsetof(the daemon's struct, field)             */
    size_t size;               /* sizeof the field: checked against the type on load */
    const char *default_value; /* NULL: required                                   */
    int64_t min, max;          /* for INT, DURATION and SIZE; both 0: unbounded     */
    bool reloadable;           /* may change on SIGHUP without a restart           */
    const char *help;          /* one line, used for the configuration reference  */
};

/* Loads `path` (NULL: defaults and environment only) into `target`, which must be
 * zeroed or previously freed. `env` is an environ-style array (NULL: the process's).
 * On failure returns false, writes a message naming the key (and line) into err, and
 * leaves `target` freed. */
__attribute__((warn_unused_result)) bool xg_config_load(const struct xg_cfg_key *keys, size_t nkeys,
                                                        void *target, const char *path,
                                                        char *const *env, char *err, size_t errlen);

/* Frees the strings that xg_config_load stored in `target` and zeroes them. */
void xg_config_free(const struct xg_cfg_key *keys, size_t nkeys, void *target);

/* Compares two loaded configurations key by key, among the keys whose `reloadable` flag
 * equals `reloadable`. Returns how many differ and writes their names ("[section] key",
 * comma-separated, truncated to fit) into out. A reload applies the reloadable ones and
 * warns about the others, which need a restart. */
size_t xg_config_diff(const struct xg_cfg_key *keys, size_t nkeys, const void *a, const void *b,
                      bool reloadable, char *out, size_t outlen);

/* A SIGHUP reload, from the table: every key marked reloadable whose value differs takes
 * its value from `fresh` into `running`, the keys needing a restart keep theirs. Values are
 * exchanged, so `fresh` then holds what `running` had and is freed with xg_config_free as
 * usual (a string a component still points to must be copied by it first). Returns how many
 * keys took a new value. The daemon then hands the running values to what uses them. */
size_t xg_config_take_reloadable(const struct xg_cfg_key *keys, size_t nkeys, void *running,
                                 void *fresh);

/* Writes a Markdown table of the keys (section, key, type, default, env name, help). */
void xg_config_print_reference(const struct xg_cfg_key *keys, size_t nkeys, const char *title);

/* Parsers used by the loader, exposed for table tests. */
__attribute__((warn_unused_result)) bool xg_parse_duration_ms(const char *text, int64_t *out);
__attribute__((warn_unused_result)) bool xg_parse_size(const char *text, int64_t *out);
__attribute__((warn_unused_result)) bool xg_parse_bool(const char *text, bool *out);
__attribute__((warn_unused_result)) bool xg_parse_int(const char *text, int64_t *out);

#endif
