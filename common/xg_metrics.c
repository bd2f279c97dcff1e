/* xg_metrics — the registry, the atomic series and the text exposition. */
#include "xg_metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLLECTORS 16

/* A gauge never set holds this NaN payload (a set NaN is stored as the canonical NaN). */
#define GAUGE_UNSET UINT64_C(0x7ff8dead0000beef)

struct xg_metric_labels {
    struct xg_metric_labels *next; /* the registry's list, for freeing */
    struct xg_metrics *reg;
    const char *name;
    const char *const *fixed; /* NULL for a dynamic set */
    unsigned capacity;        /* values before "other" */
    atomic_uint used;         /* dynamic: values published so far */
    char (*dynamic)[XG_METRICS_VALUE_MAX + 1];
};

struct xg_metric {
    struct xg_metric *next; /* registration order */
    const char *name;
    const char *help;
    enum xg_metric_type type;
    struct xg_metric_labels *labels[XG_METRICS_MAX_LABELS];
    size_t nlabels;
    size_t nseries;
    size_t stride; /* atomics per series: 1, or buckets + 1 (+Inf) + count + sum */
    double bounds[XG_METRICS_MAX_BUCKETS];
    size_t nbounds;
    _Atomic uint64_t *cells;
};

struct xg_metrics {
    pthread_mutex_t lock;        /* registration, dynamic label values */
    pthread_mutex_t render_lock; /* one render at a time: collectors write shared gauges */
    struct xg_metric *first, *last;
    struct xg_metric_labels *label_sets;
    struct {
        xg_metrics_collect_fn fn;
        void *ctx;
    } collectors[MAX_COLLECTORS];
    size_t ncollectors;
};

/* ---- names --------------------------------------------------------------------------- */

static bool name_char(char c, bool first, bool colon)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
        return true;
    if (colon && c == ':')
        return true;
    return !first && c >= '0' && c <= '9';
}

static bool name_valid(const char *name, bool colon)
{
    if (!name || !*name)
        return false;
    for (const char *p = name; *p; p++)
        if (!name_char(*p, p == name, colon))
            return false;
    return true;
}

bool xg_metrics_name_valid(const char *name)
{
    return name_valid(name, true);
}

bool xg_metrics_label_name_valid(const char *name)
{
    return name_valid(name, false) && strncmp(name, "__", 2) != 0 && strcmp(name, "le") != 0;
}

/* ---- registry ------------------------------------------------------------------------ */

struct xg_metrics *xg_metrics_new(void)
{
    struct xg_metrics *reg = calloc(1, sizeof *reg);
    if (reg) {
        pthread_mutex_init(&reg->lock, NULL);
        pthread_mutex_init(&reg->render_lock, NULL);
    }
    return reg;
}

void xg_metrics_free(struct xg_metrics *reg)
{
    if (!reg)
        return;
    for (struct xg_metric *m = reg->first, *next; m; m = next) {
        next = m->next;
        free(m->cells);
        free(m);
    }
    for (struct xg_metric_labels *l = reg->label_sets, *next; l; l = next) {
        next = l->next;
        free(l->dynamic);
        free(l);
    }
    pthread_mutex_destroy(&reg->lock);
    pthread_mutex_destroy(&reg->render_lock);
    free(reg);
}

static struct xg_metric_labels *labels_new(struct xg_metrics *reg, const char *name)
{
    if (!reg || !xg_metrics_label_name_valid(name))
        return NULL;
    struct xg_metric_labels *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->reg = reg;
    l->name = name;
    return l;
}

static void labels_link(struct xg_metrics *reg, struct xg_metric_labels *l)
{
    pthread_mutex_lock(&reg->lock);
    l->next = reg->label_sets;
    reg->label_sets = l;
    pthread_mutex_unlock(&reg->lock);
}

struct xg_metric_labels *xg_metric_labels_fixed(struct xg_metrics *reg, const char *name,
                                                const char *const *values)
{
    struct xg_metric_labels *l = labels_new(reg, name);
    if (!l)
        return NULL;
    l->fixed = values;
    while (values && values[l->capacity])
        l->capacity++;
    labels_link(reg, l);
    return l;
}

struct xg_metric_labels *xg_metric_labels_dynamic(struct xg_metrics *reg, const char *name,
                                                  unsigned max)
{
    struct xg_metric_labels *l = labels_new(reg, name);
    if (!l)
        return NULL;
    l->capacity = max;
    l->dynamic = calloc(max ? max : 1, sizeof *l->dynamic);
    if (!l->dynamic) {
        free(l);
        return NULL;
    }
    labels_link(reg, l);
    return l;
}

unsigned xg_metric_label_count(const struct xg_metric_labels *labels)
{
    return labels->capacity + 1;
}

static const char *label_value(const struct xg_metric_labels *l, unsigned i)
{
    if (i >= l->capacity)
        return XG_METRICS_OTHER;
    return l->fixed ? l->fixed[i] : l->dynamic[i];
}

static bool label_present(const struct xg_metric_labels *l, unsigned used, const char *value,
                          unsigned *out)
{
    for (unsigned i = 0; i < used; i++)
        if (strcmp(label_value(l, i), value) == 0) {
            *out = i;
            return true;
        }
    return false;
}

unsigned xg_metric_label_index(struct xg_metric_labels *l, const char *value)
{
    unsigned i;
    if (!value)
        return l->capacity;
    if (l->fixed)
        return label_present(l, l->capacity, value, &i) ? i : l->capacity;
    if (label_present(l, atomic_load_explicit(&l->used, memory_order_acquire), value, &i))
        return i;
    /* Too long to keep whole: folding it is safer than truncating into another's name. */
    if (strlen(value) > XG_METRICS_VALUE_MAX)
        return l->capacity;
    pthread_mutex_lock(&l->reg->lock);
    unsigned used = atomic_load_explicit(&l->used, memory_order_relaxed);
    if (!label_present(l, used, value, &i)) {
        i = l->capacity;
        if (used < l->capacity) {
            strcpy(l->dynamic[used], value);
            atomic_store_explicit(&l->used, used + 1, memory_order_release);
            i = used;
        }
    }
    pthread_mutex_unlock(&l->reg->lock);
    return i;
}

static struct xg_metric *family_new(struct xg_metrics *reg, const char *name, const char *help,
                                    enum xg_metric_type type,
                                    struct xg_metric_labels *const *labels, size_t nlabels,
                                    const double *bounds, size_t nbounds)
{
    if (!reg || !xg_metrics_name_valid(name) || nlabels > XG_METRICS_MAX_LABELS ||
        nbounds > XG_METRICS_MAX_BUCKETS || (type == XG_METRIC_HISTOGRAM && nbounds == 0))
        return NULL;
    size_t nseries = 1;
    for (size_t i = 0; i < nlabels; i++) {
        if (!labels[i])
            return NULL;
        nseries *= xg_metric_label_count(labels[i]);
        if (nseries > XG_METRICS_MAX_SERIES)
            return NULL;
    }
    for (size_t i = 0; i < nbounds; i++)
        if (!isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
            return NULL;
    struct xg_metric *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    *m = (struct xg_metric){.name = name,
                            .help = help ? help : "",
                            .type = type,
                            .nlabels = nlabels,
                            .nseries = nseries,
                            .nbounds = nbounds,
                            .stride = type == XG_METRIC_HISTOGRAM ? nbounds + 3 : 1};
    if (nlabels)
        memcpy(m->labels, labels, nlabels * sizeof labels[0]);
    if (nbounds)
        memcpy(m->bounds, bounds, nbounds * sizeof bounds[0]);
    m->cells = calloc(nseries * m->stride, sizeof *m->cells);
    if (!m->cells) {
        free(m);
        return NULL;
    }
    if (type == XG_METRIC_GAUGE)
        xg_metric_reset(m);
    pthread_mutex_lock(&reg->lock);
    bool taken = false;
    for (struct xg_metric *o = reg->first; o && !taken; o = o->next)
        taken = strcmp(o->name, name) == 0;
    if (!taken) {
        if (reg->last)
            reg->last->next = m;
        else
            reg->first = m;
        reg->last = m;
    }
    pthread_mutex_unlock(&reg->lock);
    if (taken) {
        free(m->cells);
        free(m);
        return NULL;
    }
    return m;
}

struct xg_metric *xg_metric_counter(struct xg_metrics *reg, const char *name, const char *help,
                                    struct xg_metric_labels *const *labels, size_t nlabels)
{
    return family_new(reg, name, help, XG_METRIC_COUNTER, labels, nlabels, NULL, 0);
}

struct xg_metric *xg_metric_gauge(struct xg_metrics *reg, const char *name, const char *help,
                                  struct xg_metric_labels *const *labels, size_t nlabels)
{
    return family_new(reg, name, help, XG_METRIC_GAUGE, labels, nlabels, NULL, 0);
}

struct xg_metric *xg_metric_histogram(struct xg_metrics *reg, const char *name, const char *help,
                                      struct xg_metric_labels *const *labels, size_t nlabels,
                                      const double *bounds, size_t nbounds)
{
    return family_new(reg, name, help, XG_METRIC_HISTOGRAM, labels, nlabels, bounds, nbounds);
}

bool xg_metrics_add_collector(struct xg_metrics *reg, xg_metrics_collect_fn fn, void *ctx)
{
    if (!reg || !fn || reg->ncollectors == MAX_COLLECTORS)
        return false;
    reg->collectors[reg->ncollectors].fn = fn;
    reg->collectors[reg->ncollectors].ctx = ctx;
    reg->ncollectors++;
    return true;
}

const char *xg_metrics_family_name(const struct xg_metrics *reg, size_t i)
{
    const struct xg_metric *m = reg->first;
    while (m && i-- > 0)
        m = m->next;
    return m ? m->name : NULL;
}

/* ---- updates ------------------------------------------------------------------------- */

static _Atomic uint64_t *series_cells(struct xg_metric *m, const unsigned *idx)
{
    size_t at = 0;
    for (size_t i = 0; i < m->nlabels; i++) {
        unsigned n = xg_metric_label_count(m->labels[i]);
        unsigned v = idx[i] < n ? idx[i] : n - 1;
        at = at * n + v;
    }
    return &m->cells[at * m->stride];
}

static uint64_t double_bits(double v)
{
    uint64_t bits;
    if (isnan(v))
        v = NAN;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

static double bits_double(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

void xg_metric_add(struct xg_metric *m, const unsigned *idx, uint64_t n)
{
    if (!m || m->type != XG_METRIC_COUNTER)
        return;
    atomic_fetch_add_explicit(series_cells(m, idx), n, memory_order_relaxed);
}

void xg_metric_store(struct xg_metric *m, const unsigned *idx, uint64_t total)
{
    if (!m || m->type != XG_METRIC_COUNTER)
        return;
    atomic_store_explicit(series_cells(m, idx), total, memory_order_relaxed);
}

void xg_metric_inc(struct xg_metric *m, const unsigned *idx)
{
    xg_metric_add(m, idx, 1);
}

void xg_metric_set(struct xg_metric *m, const unsigned *idx, double value)
{
    if (!m || m->type != XG_METRIC_GAUGE)
        return;
    atomic_store_explicit(series_cells(m, idx), double_bits(value), memory_order_relaxed);
}

static void add_double(_Atomic uint64_t *cell, double v)
{
    uint64_t old = atomic_load_explicit(cell, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(cell, &old, double_bits(bits_double(old) + v),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

void xg_metric_observe(struct xg_metric *m, const unsigned *idx, double value)
{
    if (!m || m->type != XG_METRIC_HISTOGRAM || isnan(value))
        return;
    _Atomic uint64_t *cells = series_cells(m, idx);
    size_t b = 0;
    while (b < m->nbounds && value > m->bounds[b])
        b++;
    /* Buckets are stored non-cumulative; the render adds them up. */
    atomic_fetch_add_explicit(&cells[b], 1, memory_order_relaxed);
    add_double(&cells[m->nbounds + 2], value);
    atomic_fetch_add_explicit(&cells[m->nbounds + 1], 1, memory_order_relaxed);
}

void xg_metric_reset(struct xg_metric *m)
{
    if (!m || m->type != XG_METRIC_GAUGE)
        return;
    for (size_t i = 0; i < m->nseries; i++)
        atomic_store_explicit(&m->cells[i], GAUGE_UNSET, memory_order_relaxed);
}

double xg_metric_value(struct xg_metric *m, const unsigned *idx)
{
    if (!m)
        return NAN;
    _Atomic uint64_t *cells = series_cells(m, idx);
    switch (m->type) {
    case XG_METRIC_COUNTER:
        return (double)atomic_load_explicit(cells, memory_order_relaxed);
    case XG_METRIC_GAUGE: {
        uint64_t bits = atomic_load_explicit(cells, memory_order_relaxed);
        return bits == GAUGE_UNSET ? NAN : bits_double(bits);
    }
    case XG_METRIC_HISTOGRAM:
        return (double)atomic_load_explicit(&cells[m->nbounds + 1], memory_order_relaxed);
    }
    return NAN;
}

/* ---- exposition ---------------------------------------------------------------------- */

/* Help text: backslash and newline escaped. Label values: also the double quote. */
static void put_escaped(FILE *out, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", out);
        else if (*s == '\n')
            fputs("\\n", out);
        else if (quote && *s == '"')
            fputs("\\\"", out);
        else
            fputc(*s, out);
    }
}

static void put_double(FILE *out, double v)
{
    if (isnan(v))
        fputs("NaN", out);
    else if (isinf(v))
        fputs(v > 0 ? "+Inf" : "-Inf", out);
    else if (v == (double)(int64_t)v && fabs(v) < 1e15)
        fprintf(out, "%lld", (long long)v);
    else
        fprintf(out, "%.17g", v);
}

/* {a="x",b="y"[,le="…"]} or nothing when there are no labels at all. */
static void put_labels(FILE *out, const struct xg_metric *m, const unsigned *idx, const char *le)
{
    if (m->nlabels == 0 && !le)
        return;
    fputc('{', out);
    for (size_t i = 0; i < m->nlabels; i++) {
        fprintf(out, "%s%s=\"", i ? "," : "", m->labels[i]->name);
        put_escaped(out, label_value(m->labels[i], idx[i]), true);
        fputc('"', out);
    }
    if (le)
        fprintf(out, "%sle=\"%s\"", m->nlabels ? "," : "", le);
    fputc('}', out);
}

/* Splits a series number into label indexes; false for a dynamic value not yet in use. */
static bool series_labels(const struct xg_metric *m, size_t series, unsigned *idx)
{
    for (size_t i = m->nlabels; i-- > 0;) {
        const struct xg_metric_labels *l = m->labels[i];
        unsigned n = xg_metric_label_count(l);
        idx[i] = (unsigned)(series % n);
        series /= n;
        if (!l->fixed && idx[i] < l->capacity &&
            idx[i] >= atomic_load_explicit(&l->used, memory_order_acquire))
            return false;
    }
    return true;
}

static void render_histogram(FILE *out, const struct xg_metric *m, const unsigned *idx,
                             _Atomic uint64_t *cells)
{
    uint64_t count = atomic_load_explicit(&cells[m->nbounds + 1], memory_order_relaxed);
    if (count == 0)
        return;
    uint64_t cumulative = 0;
    char le[32];
    for (size_t b = 0; b <= m->nbounds; b++) {
        cumulative += atomic_load_explicit(&cells[b], memory_order_relaxed);
        if (b < m->nbounds)
            snprintf(le, sizeof le, "%g", m->bounds[b]);
        else
            strcpy(le, "+Inf");
        fprintf(out, "%s_bucket", m->name);
        put_labels(out, m, idx, le);
        /* The +Inf bucket must equal the count; buckets read a moment apart may not. */
        fprintf(out, " %llu\n", (unsigned long long)(b == m->nbounds ? count : cumulative));
    }
    fprintf(out, "%s_sum", m->name);
    put_labels(out, m, idx, NULL);
    fputc(' ', out);
    put_double(out,
               bits_double(atomic_load_explicit(&cells[m->nbounds + 2], memory_order_relaxed)));
    fprintf(out, "\n%s_count", m->name);
    put_labels(out, m, idx, NULL);
    fprintf(out, " %llu\n", (unsigned long long)count);
}

static void render_family(FILE *out, const struct xg_metric *m)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    fprintf(out, "# HELP %s ", m->name);
    put_escaped(out, m->help, false);
    fprintf(out, "\n# TYPE %s %s\n", m->name, types[m->type]);
    unsigned idx[XG_METRICS_MAX_LABELS] = {0};
    for (size_t s = 0; s < m->nseries; s++) {
        if (!series_labels(m, s, idx))
            continue;
        _Atomic uint64_t *cells = &m->cells[s * m->stride];
        if (m->type == XG_METRIC_HISTOGRAM) {
            render_histogram(out, m, idx, cells);
            continue;
        }
        uint64_t raw = atomic_load_explicit(cells, memory_order_relaxed);
        if (m->type == XG_METRIC_GAUGE && raw == GAUGE_UNSET)
            continue;
        if (m->type == XG_METRIC_COUNTER && raw == 0 && m->nlabels > 0)
            continue;
        fputs(m->name, out);
        put_labels(out, m, idx, NULL);
        fputc(' ', out);
        if (m->type == XG_METRIC_COUNTER)
            fprintf(out, "%llu", (unsigned long long)raw);
        else
            put_double(out, bits_double(raw));
        fputc('\n', out);
    }
}

char *xg_metrics_render(struct xg_metrics *reg, size_t *len)
{
    char *text = NULL;
    size_t size = 0;
    pthread_mutex_lock(&reg->render_lock);
    for (size_t i = 0; i < reg->ncollectors; i++)
        reg->collectors[i].fn(reg->collectors[i].ctx);
    FILE *out = open_memstream(&text, &size);
    if (out) {
        for (const struct xg_metric *m = reg->first; m; m = m->next)
            render_family(out, m);
        if (fclose(out) != 0) {
            free(text);
            text = NULL;
        }
    }
    pthread_mutex_unlock(&reg->render_lock);
    if (text && len)
        *len = size;
    return text;
}
