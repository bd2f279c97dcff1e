/* spinlock — a per-entry lock for state held a few instructions at a time (a tenant's
 * burst bucket, its quota counts). A holder preempted on an oversubscribed machine must
 * not make the waiter burn its time slice, hence the yield after a short spin. */
#ifndef SPINLOCK_H
#define SPINLOCK_H

#include <sched.h>
#include <stdatomic.h>
#include <urcu/arch.h>

static inline void spinlock_acquire(atomic_flag *busy)
{
    for (unsigned spins = 0; atomic_flag_test_and_set_explicit(busy, memory_order_acquire);
         spins++) {
        if (spins < 64)
            caa_cpu_relax();
        else
            sched_yield();
    }
}

static inline void spinlock_release(atomic_flag *busy)
{
    atomic_flag_clear_explicit(busy, memory_order_release);
}

#endif
