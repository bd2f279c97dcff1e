/* qr — a QR code as a standalone SVG document (libqrencode), for the invoice page's
 * payment URI. Pure: no I/O. The SVG is one <path> of dark modules on a white square with
 * the 4-module quiet zone the standard asks for, so phone wallets scan it from a screen. */
#ifndef QR_H
#define QR_H

#include <stddef.h>

/* Error correction M: survives a smudged screen or a partly covered code, and keeps a
 * ~130-character monero: URI at version 8 (49×49 modules). */
#define QR_QUIET_ZONE 4

/* Encodes text (8-bit mode) and returns a malloc'd, NUL-terminated SVG document that the
 * caller frees, or NULL when text is empty or too long for a QR code, or on allocation
 * failure. `title` (may be NULL) becomes the SVG's <title>, for screen readers; it must
 * be plain text without markup characters (refused otherwise). */
__attribute__((warn_unused_result)) char *qr_svg(const char *text, const char *title);

#endif
