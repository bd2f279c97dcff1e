/* xg_version — which release and which commit this binary was built from.
 *
 * One source: the VERSION file at the top of the tree, which the Makefile writes into
 * $(BUILD)/gen/xg_build_id.h together with the git commit it was built from ("unknown"
 * when built outside a git checkout, e.g. from a release tarball). --version prints both;
 * both daemons export them as the gauge xmrgate_build_info{version,commit} = 1.
 *
 * Ownership: the strings are static. */
#ifndef XG_VERSION_H
#define XG_VERSION_H

#include <stdbool.h>

struct xg_metrics;

/* "0.3.0" */
const char *xg_version(void);

/* the commit, abbreviated ("3f2a9c1d0b7e"), or "unknown" */
const char *xg_version_commit(void);

/* Registers xmrgate_build_info{version,commit} and sets it to 1 (start-up, one thread, as
 * every registration). False when the registry refused it (out of memory, name taken). */
__attribute__((warn_unused_result)) bool xg_version_register_metric(struct xg_metrics *reg);

#endif
