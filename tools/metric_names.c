/* metric-names — prints every metric family the two daemons register, one name a line
 * ("<daemon> <name>"), for scripts/check-observability.sh, which checks that every
 * dashboard query and alert rule names a metric that exists. The registries are built
 * exactly as the daemons build them, without starting anything. */
#include "ops/bl_metrics.h"
#include "ops/gw_metrics.h"
#include "xg_metrics.h"

#include <stdio.h>

static void print_names(const char *daemon, const struct xg_metrics *reg)
{
    const char *name;
    for (size_t i = 0; (name = xg_metrics_family_name(reg, i)) != NULL; i++)
        printf("%s %s\n", daemon, name);
}

int main(void)
{
    struct gw_metrics *gw = gw_metrics_new(0);
    struct bl_metrics_sources src = {.conninfo = "", .daemon_url = ""};
    struct bl_metrics *bl = bl_metrics_new(&src);
    if (!gw || !bl) {
        fprintf(stderr, "metric-names: cannot build the registries\n");
        return 1;
    }
    print_names("gateway", gw_metrics_registry(gw));
    print_names("billing", bl_metrics_registry(bl));
    gw_metrics_stop(gw);
    bl_metrics_free(bl);
    return 0;
}
