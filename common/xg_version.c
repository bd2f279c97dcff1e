/* xg_version — see xg_version.h. */
#include "xg_version.h"

#include "xg_build_id.h" /* generated: XG_VERSION, XG_COMMIT */
#include "xg_metrics.h"

#include <stddef.h>

/* The label value sets: one value each, the build's. They outlive every registry. */
static const char *const version_values[] = {XG_VERSION, NULL};
static const char *const commit_values[] = {XG_COMMIT, NULL};

const char *xg_version(void)
{
    return XG_VERSION;
}

const char *xg_version_commit(void)
{
    return XG_COMMIT;
}

bool xg_version_register_metric(struct xg_metrics *reg)
{
    struct xg_metric_labels *labels[] = {xg_metric_labels_fixed(reg, "version", version_values),
                                         xg_metric_labels_fixed(reg, "commit", commit_values)};
    if (!labels[0] || !labels[1])
        return false;
    struct xg_metric *info = xg_metric_gauge(
        reg, "xmrgate_build_info",
        "The release and the git commit this daemon was built from (always 1)", labels, 2);
    if (!info)
        return false;
    xg_metric_set(info, (const unsigned[]){0, 0}, 1);
    return true;
}
