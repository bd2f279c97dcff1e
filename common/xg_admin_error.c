/* xg_admin_error — see xg_admin_error.h. */
#include "xg_admin_error.h"

#include <assert.h>

/* Ordered as the enum; designated so a missing entry is a NULL code, which the unit test
 * catches. */
static const struct xg_admin_error_info table[XG_ADMIN_ERROR_COUNT] = {
    [XG_ADMIN_ERROR_UNAUTHORIZED] = {"unauthorized", 401,
                                     "the admin API needs Authorization: Bearer <admin token>"},
    [XG_ADMIN_ERROR_DISABLED] = {"admin_api_disabled", 403,
                                 "the admin API is disabled: set [admin] token"},
    [XG_ADMIN_ERROR_NOT_FOUND] = {"not_found", 404, "no such admin route"},
    [XG_ADMIN_ERROR_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405,
                                           "this route does not take that method"},
    [XG_ADMIN_ERROR_INVALID] = {"invalid", 400, "the request is not valid for this route"},
    [XG_ADMIN_ERROR_CONFLICT] = {"conflict", 409, "that would duplicate what exists"},
    [XG_ADMIN_ERROR_UNKNOWN_NODE] = {"unknown_node", 404, "no such node"},
    [XG_ADMIN_ERROR_UNKNOWN_TENANT] = {"unknown_tenant", 404, "no tenant by that id"},
    [XG_ADMIN_ERROR_DATABASE_UNAVAILABLE] = {"database_unavailable", 503,
                                             "PostgreSQL did not answer; nothing was changed"},
    [XG_ADMIN_ERROR_OUT_OF_MEMORY] = {"out_of_memory", 500, "out of memory"},
};

const struct xg_admin_error_info *xg_admin_error_info(enum xg_admin_error e)
{
    assert(e >= 0 && e < XG_ADMIN_ERROR_COUNT);
    return &table[e];
}

json_t *xg_admin_error_json(enum xg_admin_error e, const char *message)
{
    const struct xg_admin_error_info *info = xg_admin_error_info(e);
    return json_pack("{s:{s:s,s:s}}", "error", "code", info->code, "message",
                     message ? message : info->message);
}
