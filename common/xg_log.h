/* xg_log — JSON-lines logging to stderr, one object per line.
 *
 * Every line carries ts (RFC 3339, UTC, milliseconds), level, daemon and event (a short
 * snake_case name such as "pg_connected"); msg and extra fields are optional. The daemon
 * name and minimum level are set once at start-up before threads exist; logging itself
 * is thread-safe (one write(2) per line). Customer requests are never logged one by one. */
#ifndef XG_LOG_H
#define XG_LOG_H

#include <jansson.h>
#include <stdbool.h>

enum xg_log_level { XG_LOG_DEBUG, XG_LOG_INFO, XG_LOG_WARN, XG_LOG_ERROR };

/* Sets the daemon name (copied) and the minimum level written. */
void xg_log_init(const char *daemon, enum xg_log_level min_level);
void xg_log_set_level(enum xg_log_level min_level);

/* Parses "debug", "info", "warn" or "error" (any case). Returns false on anything else. */
__attribute__((warn_unused_result)) bool xg_log_level_parse(const char *text,
                                                            enum xg_log_level *out);

/* Writes {"ts","level","daemon","event","msg"} with msg printf-formatted (may be NULL). */
void xg_log(enum xg_log_level level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As xg_log, and merges the members of `fields` (an object, stolen; may be NULL). */
void xg_log_fields(enum xg_log_level level, const char *event, json_t *fields, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
