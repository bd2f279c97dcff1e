/* test_files — temporary files the tests write their inputs to (configuration files, key
 * files). Test helpers, not product code (include after cmocka.h). */
#ifndef TEST_FILES_H
#define TEST_FILES_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Writes text to a new file /tmp/<stem>XXXXXX and puts its path in path[0..len); the
 * caller unlinks it when it matters. */
static inline void temp_file_with(const char *stem, const char *text, char *path, size_t len)
{
    assert_true(snprintf(path, len, "/tmp/%sXXXXXX", stem) < (int)len);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

#endif
