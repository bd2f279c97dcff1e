/* qr — QR code to SVG; see qr.h. */
#include "api/qr.h"

#include <qrencode.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing string; on allocation failure it stays failed and qr_svg returns NULL. */
struct buf {
    char *data;
    size_t len, cap;
    bool failed;
};

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_printf(struct buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
}

static bool title_ok(const char *title)
{
    return strpbrk(title, "<>&\"'") == NULL;
}

/* Dark modules, one horizontal run per subpath, offset by the quiet zone. */
static void append_modules(struct buf *b, const QRcode *qr)
{
    int w = qr->width;
    for (int y = 0; y < w; y++) {
        for (int x = 0; x < w;) {
            if (!(qr->data[y * w + x] & 1)) {
                x++;
                continue;
            }
            int run = 1;
            while (x + run < w && (qr->data[y * w + x + run] & 1))
                run++;
            buf_printf(b, "M%d %dh%dv1h-%dz", x + QR_QUIET_ZONE, y + QR_QUIET_ZONE, run, run);
            x += run;
        }
    }
}

char *qr_svg(const char *text, const char *title)
{
    if (!text || !*text || (title && !title_ok(title)))
        return NULL;
    QRcode *qr = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M);
    if (!qr)
        return NULL;
    int size = qr->width + 2 * QR_QUIET_ZONE;
    struct buf b = {.data = malloc(4096), .cap = 4096};
    b.failed = b.data == NULL;
    buf_printf(&b,
               "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
               "shape-rendering=\"crispEdges\" role=\"img\">",
               size, size);
    if (title)
        buf_printf(&b, "<title>%s</title>", title);
    buf_printf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/><path fill=\"#000\" d=\"", size,
               size);
    append_modules(&b, qr);
    buf_printf(&b, "\"/></svg>\n");
    QRcode_free(qr);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
