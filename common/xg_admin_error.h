/* xg_admin_error — the registry of every error an admin port answers (xg_admin's own
 * routes and each daemon's admin API): one row per error, its snake_case code, HTTP status
 * and default message, in one table (xg_admin_error.c). The body is
 * {"error":{"code":"<code>","message":"<message>"}}, as billing's API answers; a call site
 * names the error by its enum and may word the message for the case at hand
 * (xg_admin.h: xg_admin_reply_error). The codes and statuses are a contract with the
 * operator's scripts and xmrgate-admin: change one only with them. Pure: no I/O. */
#ifndef XG_ADMIN_ERROR_H
#define XG_ADMIN_ERROR_H

#include <jansson.h>

enum xg_admin_error {
    /* the credential and the route */
    XG_ADMIN_ERROR_UNAUTHORIZED,
    XG_ADMIN_ERROR_DISABLED,
    XG_ADMIN_ERROR_NOT_FOUND,
    XG_ADMIN_ERROR_METHOD_NOT_ALLOWED,
    /* the request */
    XG_ADMIN_ERROR_INVALID,
    XG_ADMIN_ERROR_CONFLICT,
    XG_ADMIN_ERROR_UNKNOWN_NODE,
    XG_ADMIN_ERROR_UNKNOWN_TENANT,
    /* our side */
    XG_ADMIN_ERROR_DATABASE_UNAVAILABLE,
    XG_ADMIN_ERROR_OUT_OF_MEMORY,
    XG_ADMIN_ERROR_COUNT
};

struct xg_admin_error_info {
    const char *code;    /* snake_case, the "code" scripts match on */
    unsigned int status; /* the HTTP status it is answered with */
    const char *message; /* the default "message" */
};

/* The registry entry of e; e must be one of the enum's errors (asserted). */
const struct xg_admin_error_info *xg_admin_error_info(enum xg_admin_error e);

/* {"error":{"code":…,"message":…}}, message NULL for the default one (new reference;
 * NULL when out of memory). */
json_t *xg_admin_error_json(enum xg_admin_error e, const char *message);

#endif
