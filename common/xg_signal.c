/* xg_signal — signal handlers that only set flags. */
#include "xg_signal.h"

#include <string.h>
#include <time.h>

volatile sig_atomic_t xg_stop_requested;
volatile sig_atomic_t xg_reload_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    xg_stop_requested = 1;
}

static void on_reload_signal(int sig)
{
    (void)sig;
    xg_reload_requested = 1;
}

void xg_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_reload_signal;
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

void xg_run_until_stopped(void (*on_reload)(void *ctx), void *ctx)
{
    while (!xg_stop_requested) {
        struct timespec tick = {0, 100 * 1000000L};
        nanosleep(&tick, NULL);
        if (xg_reload_requested) {
            xg_reload_requested = 0;
            if (on_reload)
                on_reload(ctx);
        }
    }
}
