/* xg_sql — named queries in the embedded sql/ files. */
#include "xg_sql.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NAME_TAG       "-- name:"
#define IDEMPOTENT_TAG "-- idempotent"

static const char *line_end(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl : p + strlen(p);
}

static const char *next_line(const char *p)
{
    const char *end = line_end(p);
    return *end ? end + 1 : end;
}

/* True when the line at `line` is a "-- name:" header; its name is [*name, *name_end). */
static bool header_name(const char *line, const char **name, const char **name_end)
{
    if (strncmp(line, NAME_TAG, strlen(NAME_TAG)) != 0)
        return false;
    const char *p = line + strlen(NAME_TAG);
    const char *end = line_end(p);
    while (p < end && isspace((unsigned char)*p))
        p++;
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    *name = p;
    *name_end = end;
    return true;
}

static char *trimmed_copy(const char *start, const char *end)
{
    while (start < end && isspace((unsigned char)*start))
        start++;
    while (end > start && isspace((unsigned char)end[-1]))
        end--;
    return strndup(start, (size_t)(end - start));
}

char *xg_sql_find_named(const char *text, const char *name)
{
    size_t want = strlen(name);
    const char *body = NULL;
    for (const char *line = text; *line; line = next_line(line)) {
        const char *n, *n_end;
        if (!header_name(line, &n, &n_end))
            continue;
        if (body)
            return trimmed_copy(body, line);
        if ((size_t)(n_end - n) == want && memcmp(n, name, want) == 0)
            body = next_line(line);
    }
    return body ? trimmed_copy(body, body + strlen(body)) : NULL;
}

char *xg_sql_query(const char *name)
{
    for (size_t i = 0; i < xg_sql_file_count; i++) {
        char *q = xg_sql_find_named(xg_sql_files[i].text, name);
        if (q)
            return q;
    }
    return NULL;
}

bool xg_sql_marked_idempotent(const char *body)
{
    for (const char *line = body; line && *line; line = next_line(line)) {
        while (*line == ' ' || *line == '\t')
            line++;
        if (strncmp(line, IDEMPOTENT_TAG, strlen(IDEMPOTENT_TAG)) == 0) {
            char after = line[strlen(IDEMPOTENT_TAG)];
            if (after == '\0' || after == ':' || after == '\n' || isspace((unsigned char)after))
                return true;
        }
    }
    return false;
}

bool xg_sql_query_idempotent(const char *name)
{
    char *q = xg_sql_query(name);
    bool yes = q && xg_sql_marked_idempotent(q);
    free(q);
    return yes;
}

const char *xg_sql_file(const char *name)
{
    for (size_t i = 0; i < xg_sql_file_count; i++)
        if (strcmp(xg_sql_files[i].name, name) == 0)
            return xg_sql_files[i].text;
    return NULL;
}
