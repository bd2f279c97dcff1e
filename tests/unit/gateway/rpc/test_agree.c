/* Table tests for gateway/rpc/agree: two answers compared as values. JSON whatever the key
 * order, numbers by value, the masked top-level fields ignored and the same names nested
 * not; JSON-RPC results against errors; epee sections whatever their field order and
 * integer width, arrays of objects element by element; and answers that do not read.
 * Every body handed to the code is an exact-size heap copy, so a read past its end shows
 * under the sanitizers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/agree.h"
#include "rpc/methods.h"
#include "test_bytes.h"

struct agree_case {
    const char *what;
    enum agree_body kind;
    const char *a, *b;
    size_t alen, blen; /* 0: strlen */
    enum agree_verdict want;
};

static enum agree_verdict run(const struct agree_case *c)
{
    size_t alen = c->alen ? c->alen : strlen(c->a), blen = c->blen ? c->blen : strlen(c->b);
    char *a = copy_of(c->a, alen), *b = copy_of(c->b, blen);
    enum agree_verdict v = agree_compare(c->kind, a, alen, b, blen);
    enum agree_verdict back = agree_compare(c->kind, b, blen, a, alen);
    free(a);
    free(b);
    assert_int_equal(v, back); /* symmetric */
    return v;
}

static void check_table(const struct agree_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        enum agree_verdict got = run(&cases[i]);
        if (got != cases[i].want)
            fail_msg("%s: %s, want %s", cases[i].what, agree_verdict_name(got),
                     agree_verdict_name(cases[i].want));
    }
}

#define FEE  "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"result\":{\"credits\":0,\"fee\":20000,"
#define FEES "\"fees\":[20000,80000,320000,4000000],\"quantization_mask\":10000,"
#define TAIL "\"status\":\"OK\",\"top_hash\":\"\",\"untrusted\":false}}"

static void test_json_rpc(void **state)
{
    (void)state;
    static const struct agree_case cases[] = {
        {"the same answer", AGREE_JSON_RPC, FEE FEES TAIL, FEE FEES TAIL, 0, 0, AGREE_SAME},
        {"another id and key order", AGREE_JSON_RPC, FEE FEES TAIL,
         "{\"result\":{\"status\":\"OK\",\"untrusted\":false,\"quantization_mask\":10000," FEES
         "\"fee\":20000,\"credits\":0,\"top_hash\":\"\"},\"id\":7,\"jsonrpc\":\"2.0\"}",
         0, 0, AGREE_SAME},
        {"masked fields differ", AGREE_JSON_RPC, FEE FEES TAIL,
         "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"result\":{\"credits\":99,\"fee\":20000," FEES
         "\"status\":\"OK\",\"top_hash\":\"ab\",\"untrusted\":true}}",
         0, 0, AGREE_SAME},
        {"masked fields missing on one", AGREE_JSON_RPC, FEE FEES TAIL,
         "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"result\":{\"fee\":20000," FEES "\"status\":\"OK\"}}",
         0, 0, AGREE_SAME},
        {"the fee ten times", AGREE_JSON_RPC, FEE FEES TAIL,
         "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"result\":{\"credits\":0,\"fee\":200000," FEES TAIL, 0,
         0, AGREE_DIFFERENT},
        {"one fee tier differs", AGREE_JSON_RPC, FEE FEES TAIL,
         FEE "\"fees\":[20000,80000,320000,4000001],\"quantization_mask\":10000," TAIL, 0, 0,
         AGREE_DIFFERENT},
        {"a tier missing", AGREE_JSON_RPC, FEE FEES TAIL,
         FEE "\"fees\":[20000,80000,320000],\"quantization_mask\":10000," TAIL, 0, 0,
         AGREE_DIFFERENT},
        {"a field more", AGREE_JSON_RPC, FEE FEES TAIL, FEE FEES "\"extra\":1," TAIL, 0, 0,
         AGREE_DIFFERENT},
        {"another status", AGREE_JSON_RPC, FEE FEES TAIL,
         FEE FEES "\"status\":\"BUSY\",\"top_hash\":\"\",\"untrusted\":false}}", 0, 0,
         AGREE_DIFFERENT},
        {"an integer and the same real", AGREE_JSON_RPC, "{\"result\":{\"fee\":20000}}",
         "{\"result\":{\"fee\":20000.0}}", 0, 0, AGREE_SAME},
        {"a number and its string", AGREE_JSON_RPC, "{\"result\":{\"fee\":20000}}",
         "{\"result\":{\"fee\":\"20000\"}}", 0, 0, AGREE_DIFFERENT},
        {"a result and an error", AGREE_JSON_RPC, FEE FEES TAIL,
         "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"error\":{\"code\":-1,\"message\":\"x\"}}", 0, 0,
         AGREE_DIFFERENT},
        {"the same error", AGREE_JSON_RPC, "{\"id\":1,\"error\":{\"code\":-1,\"message\":\"x\"}}",
         "{\"id\":2,\"error\":{\"message\":\"x\",\"code\":-1}}", 0, 0, AGREE_SAME},
        {"neither result nor error", AGREE_JSON_RPC, FEE FEES TAIL, "{\"id\":1}", 0, 0,
         AGREE_UNREADABLE},
        {"not JSON", AGREE_JSON_RPC, FEE FEES TAIL, "<html>", 0, 0, AGREE_UNREADABLE},
        {"cut short", AGREE_JSON_RPC, FEE FEES TAIL, FEE FEES, 0, 0, AGREE_UNREADABLE},
        {"a newline after it", AGREE_JSON_RPC, FEE FEES TAIL, FEE FEES TAIL "\n", 0, 0, AGREE_SAME},
    };
    check_table(cases, sizeof cases / sizeof cases[0]);
}

#define OUT1 "{\"height\":5,\"key\":\"aa\",\"mask\":\"bb\",\"txid\":\"cc\",\"unlocked\":true}"
#define OUT2 "{\"height\":6,\"key\":\"dd\",\"mask\":\"ee\",\"txid\":\"ff\",\"unlocked\":true}"

static void test_json(void **state)
{
    (void)state;
    static const struct agree_case cases[] = {
        {"the same outs", AGREE_JSON, "{\"outs\":[" OUT1 "," OUT2 "],\"status\":\"OK\"}",
         "{\"status\":\"OK\",\"outs\":[" OUT1 "," OUT2 "],\"credits\":5}", 0, 0, AGREE_SAME},
        {"one key changed", AGREE_JSON, "{\"outs\":[" OUT1 "," OUT2 "],\"status\":\"OK\"}",
         "{\"outs\":[" OUT1
         ",{\"height\":6,\"key\":\"dx\",\"mask\":\"ee\",\"txid\":\"ff\",\"unlocked\":true}],"
         "\"status\":\"OK\"}",
         0, 0, AGREE_DIFFERENT},
        {"outs in another order", AGREE_JSON, "{\"outs\":[" OUT1 "," OUT2 "]}",
         "{\"outs\":[" OUT2 "," OUT1 "]}", 0, 0, AGREE_DIFFERENT},
        {"an out's fields in another order", AGREE_JSON, "{\"outs\":[" OUT1 "]}",
         "{\"outs\":[{\"unlocked\":true,\"txid\":\"cc\",\"mask\":\"bb\",\"key\":\"aa\","
         "\"height\":5}]}",
         0, 0, AGREE_SAME},
        {"a masked name nested is compared", AGREE_JSON, "{\"outs\":[{\"credits\":1}]}",
         "{\"outs\":[{\"credits\":2}]}", 0, 0, AGREE_DIFFERENT},
        {"unlocked differs", AGREE_JSON, "{\"outs\":[" OUT1 "]}",
         "{\"outs\":[{\"height\":5,\"key\":\"aa\",\"mask\":\"bb\",\"txid\":\"cc\","
         "\"unlocked\":false}]}",
         0, 0, AGREE_DIFFERENT},
        {"an array is not an object", AGREE_JSON, "{\"outs\":[]}", "[]", 0, 0, AGREE_UNREADABLE},
    };
    check_table(cases, sizeof cases / sizeof cases[0]);
}

/* epee, in octal escapes of three digits: H the header; a count or length as a 1-byte varint
 * is 4 times its value (\004 1, \010 2, \014 3, \020 4); types \005 uint64, \006 uint32,
 * \012 string, \214 an array of objects. */
#define H       "\001\021\001\001\001\001\002\001\001"
#define CREDITS "\007credits\005\000\000\000\000\000\000\000\000"
#define CRED9   "\007credits\005\011\000\000\000\000\000\000\000"
#define STATUS  "\006status\012\010OK"
#define HEIGHT5 "\006height\005\005\000\000\000\000\000\000\000"
#define HGT5_32 "\006height\006\005\000\000\000"
#define KEY(k)  "\003key\012\020" k
#define OUTS1   "\004outs\214\004\010" HEIGHT5 KEY("KKKK")

static void test_bin(void **state)
{
    (void)state;
    static const char a[] = H "\014" CREDITS STATUS OUTS1;
    struct agree_case cases[] = {
        {"the same body", AGREE_BIN, a, a, sizeof a - 1, sizeof a - 1, AGREE_SAME},
        {"fields in another order", AGREE_BIN, a, H "\014" OUTS1 STATUS CREDITS, sizeof a - 1,
         sizeof(H "\014" OUTS1 STATUS CREDITS) - 1, AGREE_SAME},
        {"credits differ (masked)", AGREE_BIN, a, H "\014" CRED9 STATUS OUTS1, sizeof a - 1,
         sizeof(H "\014" CRED9 STATUS OUTS1) - 1, AGREE_SAME},
        {"credits missing (masked)", AGREE_BIN, a, H "\010" STATUS OUTS1, sizeof a - 1,
         sizeof(H "\010" STATUS OUTS1) - 1, AGREE_SAME},
        {"a key changed", AGREE_BIN, a,
         H "\014" CREDITS STATUS "\004outs\214\004\010" HEIGHT5 KEY("KKKX"), sizeof a - 1,
         sizeof(H "\014" CREDITS STATUS "\004outs\214\004\010" HEIGHT5 KEY("KKKX")) - 1,
         AGREE_DIFFERENT},
        {"a height of another width", AGREE_BIN, a,
         H "\014" CREDITS STATUS "\004outs\214\004\010" HGT5_32 KEY("KKKK"), sizeof a - 1,
         sizeof(H "\014" CREDITS STATUS "\004outs\214\004\010" HGT5_32 KEY("KKKK")) - 1,
         AGREE_SAME},
        {"an out's fields in another order", AGREE_BIN, a,
         H "\014" CREDITS STATUS "\004outs\214\004\010" KEY("KKKK") HEIGHT5, sizeof a - 1,
         sizeof(H "\014" CREDITS STATUS "\004outs\214\004\010" KEY("KKKK") HEIGHT5) - 1,
         AGREE_SAME},
        {"an out more", AGREE_BIN, a,
         H "\014" CREDITS STATUS
           "\004outs\214\010\010" HEIGHT5 KEY("KKKK") "\010" HEIGHT5 KEY("KKKK"),
         sizeof a - 1,
         sizeof(H "\014" CREDITS STATUS
                  "\004outs\214\010\010" HEIGHT5 KEY("KKKK") "\010" HEIGHT5 KEY("KKKK")) -
             1,
         AGREE_DIFFERENT},
        {"status missing", AGREE_BIN, a, H "\010" CREDITS OUTS1, sizeof a - 1,
         sizeof(H "\010" CREDITS OUTS1) - 1, AGREE_DIFFERENT},
        {"a field named twice", AGREE_BIN, a, H "\020" CREDITS STATUS STATUS OUTS1, sizeof a - 1,
         sizeof(H "\020" CREDITS STATUS STATUS OUTS1) - 1, AGREE_DIFFERENT},
        {"cut short", AGREE_BIN, a, a, sizeof a - 1, sizeof a - 2, AGREE_UNREADABLE},
        {"not epee", AGREE_BIN, a, "{\"status\":\"OK\"}", sizeof a - 1, 0, AGREE_UNREADABLE},
    };
    check_table(cases, sizeof cases / sizeof cases[0]);
}

/* agree_decide over every shape of one, two and three answers. same: the pairs that agree,
 * as "01", "02", "12". */
struct decide_case {
    unsigned n;
    const char *same;
    bool can_ask, serve_unverified;
    enum agree_step step;
    enum agree_outcome outcome;
    unsigned serve, agreed, odd;
};

static void test_decide(void **state)
{
    (void)state;
    static const struct decide_case cases[] = {
        /* one answer */
        {1, "", true, true, AGREE_STEP_ASK, AGREE_PENDING, 0, 0, 0},
        {1, "", false, true, AGREE_STEP_UNVERIFIED, AGREE_UNVERIFIED, 0, 0, 0},
        {1, "", false, false, AGREE_STEP_REFUSE, AGREE_UNVERIFIED, 0, 0, 0},
        /* two */
        {2, "01", true, true, AGREE_STEP_SERVE, AGREE_AGREED, 0, 3, 0},
        {2, "01", false, false, AGREE_STEP_SERVE, AGREE_AGREED, 0, 3, 0},
        {2, "", true, true, AGREE_STEP_ASK, AGREE_PENDING, 0, 0, 0},
        {2, "", false, true, AGREE_STEP_REFUSE, AGREE_DISAGREED, 0, 0, 0}, /* no blame */
        /* three: the majority served, the odd one blamed */
        {3, "02", false, true, AGREE_STEP_SERVE, AGREE_MAJORITY, 0, 5, 2},
        {3, "12", false, true, AGREE_STEP_SERVE, AGREE_MAJORITY, 1, 6, 1},
        {3, "", true, true, AGREE_STEP_REFUSE, AGREE_DISAGREED, 0, 0, 0}, /* none left to ask */
        {3, "01 02 12", false, true, AGREE_STEP_SERVE, AGREE_MAJORITY, 0, 3, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct decide_case *k = &cases[c];
        bool same[AGREE_MAX_ANSWERS][AGREE_MAX_ANSWERS] = {{false}};
        for (const char *p = k->same; p[0] && p[1]; p += p[2] ? 3 : 2)
            same[p[0] - '0'][p[1] - '0'] = true;
        struct agree_decision d = agree_decide(k->n, same, k->can_ask, k->serve_unverified);
        if (d.step != k->step || d.outcome != k->outcome ||
            (d.step != AGREE_STEP_ASK && d.step != AGREE_STEP_REFUSE && d.serve != k->serve) ||
            d.agreed != k->agreed || d.odd != k->odd)
            fail_msg("case %zu (n %u, same '%s'): step %d outcome %d serve %u agreed %u odd %u", c,
                     k->n, k->same, d.step, d.outcome, d.serve, d.agreed, d.odd);
    }
}

/* The rows checked: the decoys and the fees, in both encodings, and nothing else. */
static void test_table(void **state)
{
    (void)state;
    static const char *const agreed[] = {"get_fee_estimate", "get_output_distribution",
                                         "/get_output_distribution.bin", "/get_outs",
                                         "/get_outs.bin"};
    size_t n = 0;
    for (size_t i = 0; i < methods_count(); i++)
        n += methods_at(i)->agree;
    assert_int_equal(n, sizeof agreed / sizeof agreed[0]);
    for (size_t i = 0; i < sizeof agreed / sizeof agreed[0]; i++) {
        const char *name = agreed[i];
        const struct method_info *m = name[0] == '/' ? methods_find_path(name, strlen(name))
                                                     : methods_find_jsonrpc(name, strlen(name));
        assert_non_null(m);
        assert_true(m->agree);
        assert_false(m->writes);
    }
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(agree_verdict_name(AGREE_SAME), "same");
    assert_string_equal(agree_verdict_name(AGREE_DIFFERENT), "different");
    assert_string_equal(agree_verdict_name(AGREE_UNREADABLE), "unreadable");
    assert_string_equal(agree_verdict_name((enum agree_verdict)99), "?");
    assert_int_equal(agree_compare(AGREE_JSON, NULL, 0, "{}", 2), AGREE_UNREADABLE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_rpc), cmocka_unit_test(test_json),  cmocka_unit_test(test_bin),
        cmocka_unit_test(test_decide),   cmocka_unit_test(test_table), cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
