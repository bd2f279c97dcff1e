/* xg_file — whole-file reads. */
#include "xg_file.h"

#include <stdio.h>
#include <stdlib.h>

bool xg_file_read(const char *path, char **out, size_t *len)
{
    bool ok = false;
    char *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        goto out;
    long size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out;
    text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size)
        goto out;
    text[size] = '\0';
    *out = text;
    if (len)
        *len = (size_t)size;
    text = NULL;
    ok = true;
out:
    if (f)
        fclose(f);
    free(text);
    return ok;
}
