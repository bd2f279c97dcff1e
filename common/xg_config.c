/* xg_config — the INI file (libinih), XMRGATE_* overrides and their validation.
 *
 * Loading is two-phase so that a failure never leaves a half-filled target: first every
 * value is collected as text and validated (file, then environment, then required keys),
 * then all of them are converted into the target. libinih does not pass line numbers to
 * the handler in Debian's build, so the file is fed to ini_parse_stream by a reader that
 * counts lines itself. */
#include "xg_config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define ENV_PREFIX "XMRGATE_"

union cfg_value {
    char *s;
    int64_t i;
    bool b;
};

struct key_source {
    char *file_value; /* owned; NULL when the file does not set the key */
    int file_line;
    const char *env_value; /* points into the environment; NULL when not set */
    char env_name[128];
};

struct load_ctx {
    const struct xg_cfg_key *keys;
    size_t nkeys;
    struct key_source *src;
    const char *path;
    const char *cursor; /* the reader's position in the file text */
    int line;           /* number of the line the reader handed out last */
    bool line_indented;
    bool have_prev_key; /* libinih's "previous name", which makes indented lines continue */
    int err_line;       /* first error found by us; 0 when none */
    char *err;
    size_t errlen;
};

/* ---- value parsers ---------------------------------------------------------------- */

bool xg_parse_int(const char *text, int64_t *out)
{
    if (!*text || isspace((unsigned char)*text))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

/* Parses the leading decimal digits of text (no sign) into *out; returns the rest. */
static const char *parse_count(const char *text, int64_t *out)
{
    if (!isdigit((unsigned char)*text))
        return NULL;
    int64_t v = 0;
    for (; isdigit((unsigned char)*text); text++) {
        int d = *text - '0';
        if (v > (INT64_MAX - d) / 10)
            return NULL;
        v = v * 10 + d;
    }
    *out = v;
    return text;
}

static bool scale(int64_t count, int64_t unit, int64_t *out)
{
    if (count > INT64_MAX / unit)
        return false;
    *out = count * unit;
    return true;
}

bool xg_parse_duration_ms(const char *text, int64_t *out)
{
    static const struct {
        const char *suffix;
        int64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    int64_t count;
    const char *rest = parse_count(text, &count);
    if (!rest)
        return false;
    if (*rest == '\0')
        return count == 0 && scale(0, 1, out); /* "0" needs no unit; anything else does */
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(rest, units[i].suffix) == 0)
            return scale(count, units[i].ms, out);
    return false;
}

bool xg_parse_size(const char *text, int64_t *out)
{
    int64_t count;
    const char *rest = parse_count(text, &count);
    if (!rest)
        return false;
    if (*rest == '\0')
        return scale(count, 1, out);
    if (rest[1] != '\0')
        return false;
    switch (tolower((unsigned char)*rest)) {
    case 'k':
        return scale(count, INT64_C(1) << 10, out);
    case 'm':
        return scale(count, INT64_C(1) << 20, out);
    case 'g':
        return scale(count, INT64_C(1) << 30, out);
    case 't':
        return scale(count, INT64_C(1) << 40, out);
    default:
        return false;
    }
}

bool xg_parse_bool(const char *text, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* ---- formatting ------------------------------------------------------------------- */

static void format_duration(int64_t ms, char *buf, size_t len)
{
    static const struct {
        const char *suffix;
        int64_t ms;
    } units[] = {{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ms != 0 && ms % units[i].ms == 0) {
            snprintf(buf, len, "%" PRId64 "%s", ms / units[i].ms, units[i].suffix);
            return;
        }
    }
    snprintf(buf, len, "%" PRId64 "ms", ms);
}

static void format_size(int64_t bytes, char *buf, size_t len)
{
    static const char suffixes[] = "tgmk";
    for (int i = 0; i < 4; i++) {
        int64_t unit = INT64_C(1) << (10 * (4 - i));
        if (bytes != 0 && bytes % unit == 0) {
            snprintf(buf, len, "%" PRId64 "%c", bytes / unit, suffixes[i]);
            return;
        }
    }
    snprintf(buf, len, "%" PRId64, bytes);
}

static void format_number(enum xg_cfg_type type, int64_t v, char *buf, size_t len)
{
    if (type == XG_CFG_DURATION)
        format_duration(v, buf, len);
    else if (type == XG_CFG_SIZE)
        format_size(v, buf, len);
    else
        snprintf(buf, len, "%" PRId64, v);
}

/* "[db] pool_size", or just "pool_size" for keys before any section. */
static void format_key(const struct xg_cfg_key *k, char *buf, size_t len)
{
    if (*k->section)
        snprintf(buf, len, "[%s] %s", k->section, k->name);
    else
        snprintf(buf, len, "%s", k->name);
}

static void env_name_of(const struct xg_cfg_key *k, char *buf, size_t len)
{
    if (*k->section)
        snprintf(buf, len, ENV_PREFIX "%s_%s", k->section, k->name);
    else
        snprintf(buf, len, ENV_PREFIX "%s", k->name);
    for (char *p = buf; *p; p++)
        *p = (*p == '.' || *p == '-') ? '_' : (char)toupper((unsigned char)*p);
}

static const char *type_name(enum xg_cfg_type type)
{
    switch (type) {
    case XG_CFG_STRING:
        return "string";
    case XG_CFG_INT:
        return "integer";
    case XG_CFG_BOOL:
        return "boolean";
    case XG_CFG_DURATION:
        return "duration";
    case XG_CFG_SIZE:
        return "size";
    }
    return "?";
}

/* ---- validation ------------------------------------------------------------------- */

static bool bounded(const struct xg_cfg_key *k)
{
    return k->min != 0 || k->max != 0;
}

/* Converts text to the key's type. On failure writes why (without the key's name). For
 * strings, out->s is NULL: the copy is made only when storing. */
static bool convert(const struct xg_cfg_key *k, const char *text, union cfg_value *out, char *why,
                    size_t whylen)
{
    bool ok = true;
    const char *expected = NULL;
    out->s = NULL;
    switch (k->type) {
    case XG_CFG_STRING:
        return true;
    case XG_CFG_BOOL:
        ok = xg_parse_bool(text, &out->b);
        expected = "true or false";
        break;
    case XG_CFG_INT:
        ok = xg_parse_int(text, &out->i);
        expected = "an integer";
        break;
    case XG_CFG_DURATION:
        ok = xg_parse_duration_ms(text, &out->i);
        expected = "a duration such as 250ms, 2s, 5m, 17h or 1d";
        break;
    case XG_CFG_SIZE:
        ok = xg_parse_size(text, &out->i);
        expected = "a size such as 4096, 64k, 1m or 1g";
        break;
    }
    if (!ok) {
        snprintf(why, whylen, "expected %s, got \"%s\"", expected, text);
        return false;
    }
    if (k->type != XG_CFG_BOOL && bounded(k) && (out->i < k->min || out->i > k->max)) {
        char lo[32], hi[32];
        format_number(k->type, k->min, lo, sizeof lo);
        format_number(k->type, k->max, hi, sizeof hi);
        snprintf(why, whylen, "\"%s\" is out of range (%s to %s)", text, lo, hi);
        return false;
    }
    return true;
}

static long find_key(const struct load_ctx *ctx, const char *section, const char *name)
{
    for (size_t i = 0; i < ctx->nkeys; i++)
        if (strcmp(ctx->keys[i].section, section) == 0 && strcmp(ctx->keys[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* Levenshtein distance, capped: enough to suggest the key a typo meant. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const char *closest_key(const struct load_ctx *ctx, const char *section, const char *name)
{
    const char *best = NULL;
    size_t best_d = 3; /* suggest only close matches */
    for (size_t i = 0; i < ctx->nkeys; i++) {
        if (strcmp(ctx->keys[i].section, section) != 0)
            continue;
        size_t d = edit_distance(name, ctx->keys[i].name);
        if (d < best_d) {
            best_d = d;
            best = ctx->keys[i].name;
        }
    }
    return best;
}

__attribute__((format(printf, 2, 3))) static int file_error(struct load_ctx *ctx, const char *fmt,
                                                            ...)
{
    if (ctx->err_line)
        return 0;
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(ctx->err, ctx->errlen, "%s:%d: %s", ctx->path, ctx->line, what);
    ctx->err_line = ctx->line;
    return 0;
}

static int unknown_key(struct load_ctx *ctx, const char *section, const char *name)
{
    const char *hint = closest_key(ctx, section, name);
    char where[96];
    if (*section)
        snprintf(where, sizeof where, "in [%.80s]", section);
    else
        snprintf(where, sizeof where, "before any [section]");
    if (hint)
        return file_error(ctx, "unknown key \"%.80s\" %s (did you mean \"%s\"?)", name, where,
                          hint);
    return file_error(ctx, "unknown key \"%.80s\" %s", name, where);
}

static int on_ini_value(void *user, const char *section, const char *name, const char *value)
{
    struct load_ctx *ctx = user;
    char label[160], why[320];
    bool continuation = ctx->line_indented && ctx->have_prev_key;
    ctx->have_prev_key = true;
    if (ctx->err_line)
        return 0;
    if (continuation)
        return file_error(ctx,
                          "indented line is read as a continuation of \"%.80s\"; remove the "
                          "leading whitespace",
                          name);
    long i = find_key(ctx, section, name);
    if (i < 0)
        return unknown_key(ctx, section, name);
    const struct xg_cfg_key *k = &ctx->keys[i];
    struct key_source *src = &ctx->src[i];
    format_key(k, label, sizeof label);
    if (src->file_value)
        return file_error(ctx, "duplicate key %s (first set on line %d)", label, src->file_line);
    union cfg_value v;
    if (!convert(k, value, &v, why, sizeof why))
        return file_error(ctx, "%s: %s", label, why);
    src->file_value = strdup(value);
    src->file_line = ctx->line;
    if (!src->file_value)
        return file_error(ctx, "out of memory");
    return 1;
}

/* Checked here rather than at the section's first key, so that the error names the
 * header's line and an empty unknown section is caught too. libinih takes the name as
 * everything up to the first ']'. */
static bool check_section_header(struct load_ctx *ctx, const char *header)
{
    ctx->have_prev_key = false;
    const char *end = strchr(header, ']');
    if (!end)
        return true; /* libinih reports the syntax error */
    size_t len = (size_t)(end - header - 1);
    for (size_t i = 0; i < ctx->nkeys; i++)
        if (strlen(ctx->keys[i].section) == len &&
            memcmp(ctx->keys[i].section, header + 1, len) == 0)
            return true;
    file_error(ctx, "unknown section [%.*s]", (int)(len > 80 ? 80 : len), header + 1);
    return false;
}

/* fgets-style reader over the file text that counts lines and notes what libinih needs
 * but does not report: indentation (continuations) and section headers. */
static char *on_ini_read(char *buf, int size, void *user)
{
    struct load_ctx *ctx = user;
    if (*ctx->cursor == '\0' || ctx->err_line)
        return NULL;
    const char *nl = strchr(ctx->cursor, '\n');
    size_t len = nl ? (size_t)(nl - ctx->cursor) + 1 : strlen(ctx->cursor);
    ctx->line++;
    if (len + 1 >= (size_t)size) {
        snprintf(ctx->err, ctx->errlen, "%s:%d: line longer than %d bytes", ctx->path, ctx->line,
                 size - 3);
        ctx->err_line = ctx->line;
        return NULL;
    }
    memcpy(buf, ctx->cursor, len);
    buf[len] = '\0';
    ctx->cursor += len;

    const char *p = buf;
    while (*p && isspace((unsigned char)*p))
        p++;
    ctx->line_indented = p > buf && *p;
    bool continues = ctx->line_indented && ctx->have_prev_key && *p != ';' && *p != '#';
    if (*p == '[' && !continues)
        return check_section_header(ctx, p) ? buf : NULL;
    return buf;
}

static bool read_file(const char *path, char **out, char *err, size_t errlen)
{
    bool ok = false;
    char *text = NULL;
    size_t len = 0, cap = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    for (;;) {
        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 8192;
            char *grown = realloc(text, cap);
            if (!grown) {
                snprintf(err, errlen, "cannot read %s: out of memory", path);
                goto out;
            }
            text = grown;
        }
        size_t n = fread(text + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    text[len] = '\0';
    if (strlen(text) != len) {
        snprintf(err, errlen, "%s: contains a NUL byte; not a text file", path);
        goto out;
    }
    *out = text;
    text = NULL;
    ok = true;
out:
    if (f)
        fclose(f);
    free(text);
    return ok;
}

static bool parse_file(struct load_ctx *ctx)
{
    char *text = NULL;
    if (!read_file(ctx->path, &text, ctx->err, ctx->errlen))
        return false;
    ctx->cursor = text;
    int rc = ini_parse_stream(on_ini_read, ctx, on_ini_value, ctx);
    free(text);
    if (rc > 0 && (!ctx->err_line || rc < ctx->err_line)) {
        snprintf(ctx->err, ctx->errlen,
                 "%s:%d: syntax error: expected \"[section]\" or \"key = value\"", ctx->path, rc);
        return false;
    }
    if (rc < 0 && !ctx->err_line) {
        snprintf(ctx->err, ctx->errlen, "cannot parse %s: out of memory", ctx->path);
        return false;
    }
    return ctx->err_line == 0;
}

/* Unknown XMRGATE_* variables are ignored: other tools share the prefix. */
static bool apply_env(struct load_ctx *ctx, char *const *env)
{
    for (size_t i = 0; i < ctx->nkeys; i++)
        env_name_of(&ctx->keys[i], ctx->src[i].env_name, sizeof ctx->src[i].env_name);
    for (; env && *env; env++) {
        const char *eq = strchr(*env, '=');
        if (strncmp(*env, ENV_PREFIX, strlen(ENV_PREFIX)) != 0 || !eq)
            continue;
        size_t name_len = (size_t)(eq - *env);
        for (size_t i = 0; i < ctx->nkeys; i++) {
            struct key_source *src = &ctx->src[i];
            if (strlen(src->env_name) != name_len || memcmp(src->env_name, *env, name_len) != 0 ||
                src->env_value)
                continue;
            char why[320];
            union cfg_value v;
            if (!convert(&ctx->keys[i], eq + 1, &v, why, sizeof why)) {
                snprintf(ctx->err, ctx->errlen, "%s: %s", src->env_name, why);
                return false;
            }
            src->env_value = eq + 1;
        }
    }
    return true;
}

static bool check_required(struct load_ctx *ctx)
{
    for (size_t i = 0; i < ctx->nkeys; i++) {
        const struct key_source *src = &ctx->src[i];
        if (ctx->keys[i].default_value || src->file_value || src->env_value)
            continue;
        char label[160];
        format_key(&ctx->keys[i], label, sizeof label);
        snprintf(ctx->err, ctx->errlen, "missing required key %s (or %s)", label, src->env_name);
        return false;
    }
    return true;
}

static bool store_all(struct load_ctx *ctx, void *target)
{
    for (size_t i = 0; i < ctx->nkeys; i++) {
        const struct xg_cfg_key *k = &ctx->keys[i];
        const struct key_source *src = &ctx->src[i];
        const char *text = src->env_value    ? src->env_value
                           : src->file_value ? src->file_value
                                             : k->default_value;
        char *field = (char *)target + k->offset;
        union cfg_value v;
        char why[320], label[160];
        if (!convert(k, text, &v, why, sizeof why)) {
            format_key(k, label, sizeof label);
            snprintf(ctx->err, ctx->errlen, "built-in default of %s is invalid: %s", label, why);
            return false;
        }
        switch (k->type) {
        case XG_CFG_STRING: {
            char **dst = (char **)(void *)field;
            *dst = strdup(text);
            if (!*dst) {
                snprintf(ctx->err, ctx->errlen, "out of memory");
                return false;
            }
            break;
        }
        case XG_CFG_BOOL:
            *(bool *)(void *)field = v.b;
            break;
        case XG_CFG_INT:
        case XG_CFG_DURATION:
        case XG_CFG_SIZE:
            *(int64_t *)(void *)field = v.i;
            break;
        }
    }
    return true;
}

/* A key's field must be as wide as its type stores: a table that names an `int` for an
 * XG_CFG_INT would have eight bytes written into four. Caught on the first load, in every test. */
static size_t type_size(enum xg_cfg_type type)
{
    switch (type) {
    case XG_CFG_STRING:
        return sizeof(char *);
    case XG_CFG_BOOL:
        return sizeof(bool);
    case XG_CFG_INT:
    case XG_CFG_DURATION:
    case XG_CFG_SIZE:
        return sizeof(int64_t);
    }
    return 0;
}

static bool check_table(const struct xg_cfg_key *keys, size_t nkeys, char *err, size_t errlen)
{
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].size != type_size(keys[i].type)) {
            char label[160];
            format_key(&keys[i], label, sizeof label);
            snprintf(err, errlen, "key table: the field of %s is %zu bytes, its type stores %zu",
                     label, keys[i].size, type_size(keys[i].type));
            return false;
        }
    }
    return true;
}

bool xg_config_load(const struct xg_cfg_key *keys, size_t nkeys, void *target, const char *path,
                    char *const *env, char *err, size_t errlen)
{
    if (!check_table(keys, nkeys, err, errlen))
        return false;
    bool ok = false;
    struct load_ctx ctx = {
        .keys = keys, .nkeys = nkeys, .path = path, .err = err, .errlen = errlen};
    ctx.src = calloc(nkeys ? nkeys : 1, sizeof *ctx.src);
    if (!ctx.src) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    if (path && !parse_file(&ctx))
        goto out;
    if (!apply_env(&ctx, env ? env : environ))
        goto out;
    if (!check_required(&ctx))
        goto out;
    if (!store_all(&ctx, target)) {
        xg_config_free(keys, nkeys, target);
        goto out;
    }
    ok = true;
out:
    for (size_t i = 0; i < nkeys; i++)
        free(ctx.src[i].file_value);
    free(ctx.src);
    return ok;
}

void xg_config_free(const struct xg_cfg_key *keys, size_t nkeys, void *target)
{
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].type != XG_CFG_STRING)
            continue;
        char **field = (char **)(void *)((char *)target + keys[i].offset);
        free(*field);
        *field = NULL;
    }
}

static bool field_equal(const struct xg_cfg_key *key, const void *a, const void *b)
{
    const char *fa = (const char *)a + key->offset, *fb = (const char *)b + key->offset;
    switch (key->type) {
    case XG_CFG_STRING: {
        const char *sa = *(char *const *)(const void *)fa, *sb = *(char *const *)(const void *)fb;
        return strcmp(sa ? sa : "", sb ? sb : "") == 0;
    }
    case XG_CFG_BOOL:
        return *(const bool *)(const void *)fa == *(const bool *)(const void *)fb;
    case XG_CFG_INT:
    case XG_CFG_DURATION:
    case XG_CFG_SIZE:
        return *(const int64_t *)(const void *)fa == *(const int64_t *)(const void *)fb;
    }
    return false;
}

size_t xg_config_diff(const struct xg_cfg_key *keys, size_t nkeys, const void *a, const void *b,
                      bool reloadable, char *out, size_t outlen)
{
    size_t count = 0, used = 0;
    if (outlen)
        out[0] = '\0';
    for (size_t i = 0; i < nkeys; i++) {
        if (keys[i].reloadable != reloadable || field_equal(&keys[i], a, b))
            continue;
        count++;
        if (used < outlen) {
            int n = snprintf(out + used, outlen - used, "%s[%s] %s", used ? ", " : "",
                             keys[i].section, keys[i].name);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    return count;
}

/* Exchanges one field of a and b: strings by pointer, so ownership moves with them. */
static void field_swap(const struct xg_cfg_key *key, void *a, void *b)
{
    char *fa = (char *)a + key->offset, *fb = (char *)b + key->offset;
    switch (key->type) {
    case XG_CFG_STRING: {
        char **sa = (char **)(void *)fa, **sb = (char **)(void *)fb, *t = *sa;
        *sa = *sb;
        *sb = t;
        return;
    }
    case XG_CFG_BOOL: {
        bool t = *(bool *)(void *)fa;
        *(bool *)(void *)fa = *(bool *)(void *)fb;
        *(bool *)(void *)fb = t;
        return;
    }
    case XG_CFG_INT:
    case XG_CFG_DURATION:
    case XG_CFG_SIZE: {
        int64_t t = *(int64_t *)(void *)fa;
        *(int64_t *)(void *)fa = *(int64_t *)(void *)fb;
        *(int64_t *)(void *)fb = t;
        return;
    }
    }
}

size_t xg_config_take_reloadable(const struct xg_cfg_key *keys, size_t nkeys, void *running,
                                 void *fresh)
{
    size_t count = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (!keys[i].reloadable || field_equal(&keys[i], running, fresh))
            continue;
        field_swap(&keys[i], running, fresh);
        count++;
    }
    return count;
}

/* ---- reference -------------------------------------------------------------------- */

static void print_cell(const char *text)
{
    for (; *text; text++) {
        if (*text == '|')
            fputs("\\|", stdout);
        else
            putchar(*text);
    }
}

void xg_config_print_reference(const struct xg_cfg_key *keys, size_t nkeys, const char *title)
{
    if (title)
        printf("### %s\n\n", title);
    printf("| Section | Key | Type | Default | Environment | Reload | Description |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < nkeys; i++) {
        const struct xg_cfg_key *k = &keys[i];
        char env[128], lo[32], hi[32];
        env_name_of(k, env, sizeof env);
        printf("| %s%s%s | `%s` | %s", *k->section ? "`[" : "", k->section, *k->section ? "]`" : "",
               k->name, type_name(k->type));
        if (k->type != XG_CFG_BOOL && k->type != XG_CFG_STRING && bounded(k)) {
            format_number(k->type, k->min, lo, sizeof lo);
            format_number(k->type, k->max, hi, sizeof hi);
            printf(" (%s–%s)", lo, hi);
        }
        if (!k->default_value)
            printf(" | *required* | ");
        else if (!*k->default_value)
            printf(" | (empty) | ");
        else {
            printf(" | `");
            print_cell(k->default_value);
            printf("` | ");
        }
        printf("`%s` | %s | ", env, k->reloadable ? "yes" : "no");
        print_cell(k->help ? k->help : "");
        printf(" |\n");
    }
}
