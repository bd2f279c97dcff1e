/* sse — Server-Sent Events framing (the WHATWG HTML "text/event-stream" format): one
 * event is "event: <name>\n", one "data: <line>\n" per line of its data, and a blank
 * line; a comment (": <text>\n\n") keeps an idle stream alive through proxies without
 * being an event. Pure: the streams themselves are written by a front end (front.h). */
#ifndef SSE_H
#define SSE_H

#include <stddef.h>

#define SSE_CONTENT_TYPE "text/event-stream"

/* One event named name (no CR or LF in it; NULL or "" for none) carrying data (any text:
 * each CRLF, CR or LF starts another data line; NULL for none). Returns the frame,
 * malloc'd and NUL-terminated (the caller frees it), with its length in *len; NULL when
 * name holds a line break or memory runs out. */
__attribute__((warn_unused_result)) char *sse_event(const char *name, const char *data,
                                                    size_t *len);

/* A comment line with text (no line break in it), or NULL as for sse_event. */
__attribute__((warn_unused_result)) char *sse_comment(const char *text, size_t *len);

#endif
