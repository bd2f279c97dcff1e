/* xg_signal — the only mutable globals: flags set by signal handlers. Handlers only set
 * flags; the daemons' loops read them. SIGPIPE is ignored. */
#ifndef XG_SIGNAL_H
#define XG_SIGNAL_H

#include <signal.h>

extern volatile sig_atomic_t xg_stop_requested;   /* SIGTERM, SIGINT */
extern volatile sig_atomic_t xg_reload_requested; /* SIGHUP          */

void xg_signals_install(void);

/* The daemons' main loop: sleeps until a stop is requested, calling on_reload(ctx) on
 * the main thread after each SIGHUP. */
void xg_run_until_stopped(void (*on_reload)(void *ctx), void *ctx);

#endif
