/* health — the semantic health rules for monerod nodes (pure: no I/O, no clock, no locks).
 *
 * What a TCP check cannot see: a node that answers HTTP but is frozen, syncing, lagging or on
 * a losing fork. The prober feeds one probe record per node per round (get_info plus
 * get_last_block_header) into these rules; they decide:
 *   - whether the probe itself was good (HTTP 200, status OK, synchronized, not busy
 *     syncing, its own target_height − height ≤ 2 with target 0 meaning "at the tip", and
 *     the node fits the pool: nodes/fit.h);
 *   - the node's up/down state with hysteresis (down after `fall` bad probes, up after
 *     `rise` good ones; the nodes the gateway starts with after their first good one), a
 *     doubling probe cooldown for nodes that keep failing, and a ceiling after which the
 *     node is dropped until an operator re-enables it;
 *   - a circuit breaker fed by client request outcomes (closed → open → half-open with a
 *     single trial → closed);
 *   - latency as an EMA (α = 0.3 by default);
 *   - the quorum tip: the highest height at which a strict majority of the configured
 *     voting nodes (the operator's own: primary and standby) agree on the block hash,
 *     whether or not they answered this round — one survivor of three is no quorum; none →
 *     degraded;
 *   - the fork point between two records of the quorum chain (a reorg);
 *   - whether the prober itself has stalled (no round completed for three rounds' time).
 *
 * Every function takes the current time in milliseconds from the caller. Structs are plain
 * values owned by the caller; nothing here allocates. */
#ifndef HEALTH_H
#define HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEALTH_HASH_LEN  64 /* hex digits of a block hash */
#define HEALTH_HISTORY   24 /* (height, hash) pairs remembered per node, newest last */
#define HEALTH_REORG_MAX 20 /* deepest reorg located precisely; deeper purges everything */

struct health_params {
    int fall;                    /* bad probes in a row that take an up node down [2] */
    int rise;                    /* good probes in a row that bring a down node up [3] */
    int64_t max_target_lag;      /* target_height − height allowed [2] */
    int64_t cooldown_base_ms;    /* first probe cooldown for a failing node [60 s] */
    int64_t cooldown_ceiling_ms; /* failing this long: dropped until re-enabled [17 h] */
    double ema_alpha;            /* weight of the newest latency sample [0.3] */
    int breaker_failures;        /* client failures in a row that open the breaker [3] */
    int64_t breaker_open_ms;     /* how long it stays open before a trial [5 s] */
};

/* The defaults in brackets above. */
struct health_params health_params_default(void);

/* One probe round of one node, as parsed from its two answers. */
struct health_probe {
    bool responded;    /* both calls answered HTTP 200 with JSON in time */
    bool status_ok;    /* both said status "OK" (not BUSY, not an error) */
    bool synchronized; /* get_info.synchronized */
    bool busy_syncing; /* get_info.busy_syncing */
    int64_t height;    /* chain length: the top block's height + 1 */
    int64_t target_height;
    char top_hash[HEALTH_HASH_LEN + 1]; /* the top block's hash */
    char prev_hash[HEALTH_HASH_LEN + 1];
    double rtt_ms; /* the slower of the two calls */
    /* The node does not have the pool's settings (nodes/fit.h; set by the prober after
     * health_probe_parse): never good, whatever else it shows. */
    bool misfit;
};

/* Fills *out from the two answer bodies (either may be NULL: no answer). http_* are the
 * HTTP statuses. Never fails: what cannot be read leaves the probe not good. */
void health_probe_parse(struct health_probe *out, long info_http, const char *info_body,
                        long header_http, const char *header_body, double rtt_ms);

/* Whether one probe, on its own, shows a working, synchronized node. */
bool health_probe_good(const struct health_probe *p, const struct health_params *hp);

enum health_breaker { HEALTH_BREAKER_CLOSED, HEALTH_BREAKER_OPEN, HEALTH_BREAKER_HALF_OPEN };

struct health_history_entry {
    int64_t height; /* chain length at that top, 0 = empty slot */
    char hash[HEALTH_HASH_LEN + 1];
};

/* Everything the gateway remembers about one node. Zero-initialise, then health_node_init. */
struct health_node {
    bool up;               /* hysteresis verdict */
    bool dropped;          /* failed past the ceiling: out of rotation until re-enabled */
    int good_in_row;       /* consecutive good probes */
    int bad_in_row;        /* consecutive bad probes */
    bool failing;          /* down and not yet back up */
    bool at_startup;       /* configured when the gateway started and never failed since */
    int64_t down_since_ms; /* when it went down (or was first seen down), if failing */
    int64_t cooldown_ms;   /* current probe cooldown, 0 = probe every round */
    int64_t next_probe_ms; /* do not probe before this */
    double ema_ms;         /* latency EMA, valid when has_ema */
    bool has_ema;
    struct health_probe last;                            /* the last probe */
    struct health_history_entry history[HEALTH_HISTORY]; /* the node's recent tops */
    enum health_breaker breaker;
    int breaker_failures;
    int64_t breaker_until_ms; /* open until */
    bool trial_in_flight;     /* half-open: the one trial request is out */
};

/* A node starts down. A node added while the gateway runs must earn `rise` good probes
 * before it serves; one the gateway started with (at_startup) comes up on its first good
 * probe, so a restart does not keep every node out for `rise` rounds. Either way a bad probe
 * before it is up means `rise` good ones from then on. */
void health_node_init(struct health_node *n, bool at_startup);

/* Whether the node should be probed in the round starting at now. */
bool health_probe_due(const struct health_node *n, int64_t now_ms);

/* Folds one probe into the node: EMA, hysteresis, cooldown, ceiling, history. Returns true
 * when the up/down state changed. */
bool health_node_observe(struct health_node *n, const struct health_probe *p, int64_t now_ms,
                         const struct health_params *hp);

/* Client request outcomes (circuit breaker). success = an answer that was usable. */
void health_breaker_record(struct health_node *n, bool success, int64_t now_ms,
                           const struct health_params *hp);

/* Whether a client request may go to the node now. take_trial: a half-open node hands out
 * its single trial (the caller is about to send it). */
bool health_breaker_allows(struct health_node *n, int64_t now_ms, bool take_trial);

/* ---- quorum ------------------------------------------------------------------------- */

/* What the quorum needs of one node: whether it responded, the tops it has shown, and
 * whether it votes. */
struct health_chain_view {
    bool responsive;
    const struct health_history_entry *history; /* HEALTH_HISTORY entries */
    bool non_voting; /* a third-party (public) node: neither counted nor agreeing */
};

struct health_quorum {
    bool degraded;  /* no strict majority: serve from the highest node */
    int64_t height; /* quorum tip (chain length), or the highest node's when degraded */
    char hash[HEALTH_HASH_LEN + 1];
    size_t agreeing;   /* voting nodes whose chain holds (height, hash) */
    size_t responsive; /* voting nodes that answered */
    size_t voters;     /* voting nodes configured: the majority is of these */
};

/* The highest (height, hash) held by a strict majority of the voting nodes (responsive or
 * not: a node that does not answer counts against the majority), where a responsive node
 * holds a pair when it is its current top or in its history. Degraded, the highest
 * responsive voting node's top (any responsive node's when no voting node answers). */
struct health_quorum health_quorum_compute(const struct health_chain_view *nodes, size_t count);

/* How far a node is from the quorum tip: 0 when its history holds the quorum pair (at or
 * ahead of the tip on the same chain), k > 0 when its top is k blocks below and the quorum
 * chain record holds its top hash at that height; -1 when it is on another chain or too far
 * below to tell. chain[i] is the quorum chain's block hash at block height chain_first + i
 * (block heights: chain length − 1), n may be 0. */
int64_t health_tip_distance(const struct health_history_entry *history,
                            const struct health_quorum *q, const char (*chain)[HEALTH_HASH_LEN + 1],
                            size_t n, int64_t chain_first);

/* Compares two records of the quorum chain (block hashes of consecutive block heights,
 * oldest first, the first at block height old_first / new_first). Returns the highest height both
 * hold with the same hash when some higher height they both hold differs (a reorg: everything above
 * it changed); INT64_MAX when nothing they both hold differs; -1 when they differ at every shared
 * height (deeper than the records: purge everything). */
int64_t health_fork_point(const char (*old_chain)[HEALTH_HASH_LEN + 1], size_t old_n,
                          int64_t old_first, const char (*new_chain)[HEALTH_HASH_LEN + 1],
                          size_t new_n, int64_t new_first);

/* The prober's own liveness. A round ends within the probe timeout twice over (the probes,
 * then the chain-record fetch, each with a hard deadline) after it starts, and the next one
 * starts an interval after the last started, so rounds end at most interval + 2 × timeout
 * apart. The prober is stalled when the last round ended (or, before any did, the prober
 * started) more than HEALTH_STALL_ROUNDS × max(interval, timeout) ago: never for rounds
 * that merely take their full timeouts, and within three intervals of a round that hangs.
 * since_ms: when the last round ended, or when the prober started; now_ms not before it
 * (an earlier now counts as no time passed). *age_ms (may be NULL) gets now − since. */
#define HEALTH_STALL_ROUNDS 3
int64_t health_stall_limit_ms(int64_t interval_ms, int64_t timeout_ms);
bool health_prober_stalled(int64_t now_ms, int64_t since_ms, int64_t interval_ms,
                           int64_t timeout_ms, int64_t *age_ms);

#endif
