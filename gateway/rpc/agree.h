/* agree — whether two nodes' answers to the same read say the same thing (issue #31: the
 * decoys and fees a wallet cannot check for itself are served only when two own nodes
 * agree). Answers are compared as decoded values, not as bytes: JSON objects whatever
 * their key order, numbers by value, epee sections whatever their field order and integer
 * width. The fields that legitimately differ between honest nodes are masked at the top
 * of the answer object (a JSON-RPC answer's "result", a plain JSON or .bin answer's root):
 * AGREE_MASKED below, and a JSON-RPC envelope's "id" and "jsonrpc". Everything else,
 * nested fields included, must be equal. Pure: no I/O, no state. */
#ifndef XG_GATEWAY_AGREE_H
#define XG_GATEWAY_AGREE_H

#include <stdbool.h>
#include <stddef.h>

/* The masked top-level fields, for docs/methods.md: "credits" (what the node bills its own
 * pay-for-RPC clients), "top_hash" (filled only by nodes that take RPC payments) and
 * "untrusted" (a bootstrap node's flag: such a node is never an own node, and the
 * gateway's own answer sets it as its nodes do). */
#define AGREE_MASKED "credits, top_hash, untrusted"

enum agree_verdict {
    AGREE_SAME,       /* the same values */
    AGREE_DIFFERENT,  /* both readable, and they differ */
    AGREE_UNREADABLE, /* one of them is not an answer of the expected shape */
};

enum agree_body {
    AGREE_JSON_RPC, /* a JSON-RPC 2.0 answer: its "result" (or "error") is compared */
    AGREE_JSON,     /* a plain JSON answer object */
    AGREE_BIN,      /* an epee portable-storage answer */
};

enum agree_verdict agree_compare(enum agree_body kind, const char *a, size_t alen, const char *b,
                                 size_t blen) __attribute__((warn_unused_result));

/* What a checked read does with the answers it has (at most AGREE_MAX_ANSWERS, from
 * different own nodes, in the order they came). */
#define AGREE_MAX_ANSWERS 3

enum agree_step {
    AGREE_STEP_ASK,        /* ask one more own node */
    AGREE_STEP_SERVE,      /* serve answer `serve` (and it may be cached) */
    AGREE_STEP_UNVERIFIED, /* serve answer `serve` marked unverified (never cached) */
    AGREE_STEP_REFUSE,     /* 503: answers_disagree, or unverified_answer when n == 1 */
};

enum agree_outcome {
    AGREE_AGREED,     /* two answers the same */
    AGREE_MAJORITY,   /* two differed, a third sided with one */
    AGREE_DISAGREED,  /* no two the same, and no one left to ask */
    AGREE_UNVERIFIED, /* one answer, no one left to ask */
    AGREE_PENDING,    /* AGREE_STEP_ASK */
};

struct agree_decision {
    enum agree_step step;
    enum agree_outcome outcome;
    unsigned serve;  /* the answer to serve (AGREE_STEP_SERVE, AGREE_STEP_UNVERIFIED) */
    unsigned agreed; /* bit i: answer i agreed with another (its node is credited) */
    unsigned odd;    /* bit i: answer i was the odd one out of a majority (blamed) */
};

/* Pure: n answers so far (1..AGREE_MAX_ANSWERS), same[i][j] whether answers i and j agree
 * (agree_compare said AGREE_SAME; only i < j is read), can_ask whether another own node
 * may still be asked in time, serve_unverified the operator's choice for a lone answer.
 * Two disagreeing answers with no third blame neither: there is no telling which is
 * right. */
struct agree_decision agree_decide(unsigned n,
                                   const bool same[AGREE_MAX_ANSWERS][AGREE_MAX_ANSWERS],
                                   bool can_ask, bool serve_unverified);

/* "same", "different", "unreadable"; "?" for an out-of-range value. */
const char *agree_verdict_name(enum agree_verdict v);

#endif
