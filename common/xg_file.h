/* xg_file — reading a whole (small) file: TLS certificates, migrations. */
#ifndef XG_FILE_H
#define XG_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* Reads path into a malloc'd, NUL-terminated buffer (the caller frees *out); *len gets
 * its size and may be NULL. False on any I/O error or when memory runs out. */
__attribute__((warn_unused_result)) bool xg_file_read(const char *path, char **out, size_t *len);

#endif
