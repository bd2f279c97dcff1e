/* xg_log — JSON lines on stderr. The daemon name and level are the module's only state:
 * the name is written once before threads start, the level may change on reload and is
 * therefore atomic. */
#include "xg_log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static char log_daemon[64] = "xmrgate";
static atomic_int log_min_level = XG_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void xg_log_init(const char *daemon, enum xg_log_level min_level)
{
    snprintf(log_daemon, sizeof log_daemon, "%s", daemon);
    xg_log_set_level(min_level);
}

void xg_log_set_level(enum xg_log_level min_level)
{
    atomic_store(&log_min_level, (int)min_level);
}

bool xg_log_level_parse(const char *text, enum xg_log_level *out)
{
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
        if (strcasecmp(text, level_names[i]) == 0) {
            *out = (enum xg_log_level)i;
            return true;
        }
    }
    return false;
}

static void format_timestamp(char *buf, size_t len)
{
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03ldZ", now.tv_nsec / 1000000);
}

/* jansson refuses invalid UTF-8; a message built from peer data must still be logged. */
static json_t *json_string_lossy(const char *text)
{
    json_t *s = json_string(text);
    if (s)
        return s;
    char *copy = strdup(text);
    if (!copy)
        return NULL;
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    s = json_string(copy);
    free(copy);
    return s;
}

static void write_line(const char *line)
{
    size_t len = strlen(line);
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, line, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        line += n;
        len -= (size_t)n;
    }
}

static void log_emit(enum xg_log_level level, const char *event, json_t *fields, const char *fmt,
                     va_list ap)
{
    char ts[40];
    char *msg = NULL;
    json_t *line = json_object();
    if (!line)
        goto out;
    format_timestamp(ts, sizeof ts);
    json_object_set_new(line, "ts", json_string(ts));
    json_object_set_new(line, "level", json_string(level_names[level]));
    json_object_set_new(line, "daemon", json_string_lossy(log_daemon));
    json_object_set_new(line, "event", json_string_lossy(event));
    if (fmt && vasprintf(&msg, fmt, ap) >= 0)
        json_object_set_new(line, "msg", json_string_lossy(msg));
    if (json_is_object(fields))
        json_object_update_missing(line, fields);

    char *text = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text)
        goto out;
    size_t n = strlen(text);
    char *with_nl = realloc(text, n + 2);
    if (!with_nl) {
        free(text);
        goto out;
    }
    memcpy(with_nl + n, "\n", 2);
    write_line(with_nl);
    free(with_nl);
out:
    free(msg);
    json_decref(line);
}

void xg_log(enum xg_log_level level, const char *event, const char *fmt, ...)
{
    if ((int)level < atomic_load(&log_min_level))
        return;
    va_list ap;
    va_start(ap, fmt);
    log_emit(level, event, NULL, fmt, ap);
    va_end(ap);
}

void xg_log_fields(enum xg_log_level level, const char *event, json_t *fields, const char *fmt, ...)
{
    if ((int)level >= atomic_load(&log_min_level)) {
        va_list ap;
        va_start(ap, fmt);
        log_emit(level, event, fields, fmt, ap);
        va_end(ap);
    }
    json_decref(fields);
}
