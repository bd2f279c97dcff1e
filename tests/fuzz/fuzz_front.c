/* Fuzzes the native front end (gateway/http/front.c) whole: one client connection per input,
 * over a socketpair, carrying whatever the input holds (pipelined requests, Content-Length
 * and chunked bodies, Expect: 100-continue, garbage), sent in pieces (fuzz.h) with the
 * event loop run after each piece, so every split of a head or a body reaches the front
 * end as its own read.
 *
 * Includes front.c to hand the connection to accept_one (the socketpair has no listener)
 * and to read the connection bookkeeping. The event loop is this file's own (loop.h): one
 * thread, an epoll set with the watches front.c and linger.c register (edge-triggered, as
 * asked), and the host run after each batch of events and whenever it is due, as loop.c
 * runs it, so no input waits on another thread and every run is repeatable.
 *
 * The handler answers by the request path's second byte: 'h' from on_head, 'n' not at
 * all (on_head returns NULL: 500), 'd' later through front_resume and on_resume, 'x' with
 * a 32 KiB body (partial writes: the server's send buffer is small), anything else by
 * echoing the body; a body over the limit gets 413.
 *
 * Properties checked:
 *   - on_completed runs exactly once for each request state on_head handed out (ASan
 *     sees a second run as a double free, a missing one fails the count), and a request
 *     being answered is never told about again;
 *   - the bytes the client receives are well-formed HTTP/1.1 answers, one after the
 *     other (h1_parse, as a node answer is read), whatever arrived;
 *   - with the client's write side shut after its last byte (flag bit 3), it gets an
 *     answer to every request the handler was handed whole (on_body, or answered from
 *     on_head), and at most one answer more (the front end's own refusal), then EOF;
 *   - once the client closed, the connection is gone: no connection left, no socket of
 *     the server's left open, every request state freed.
 * Flag bits (byte 0): 3, shut the write side after the last piece and read to EOF; 4, read
 * only when sending is stuck, and at the end; 5, close without reading anything; 6, the
 * listener has proxy_protocol on (a PROXY header comes first); 7, the peer is 127.0.0.1,
 * in trusted_proxies (else an untrusted AF_UNIX peer, which must send a header). */
#include "fuzz.h"

#include "http/front.c"
#include "nodes/http1.h"

#include <fcntl.h>

#define FUZZ_MAX_HEAD      4096
#define FUZZ_MAX_BODY      2048
#define FUZZ_BIG_ANSWER    (32 * 1024)
#define FUZZ_MAX_PENDING   256
#define FUZZ_MAX_ROUNDS    10000
#define FUZZ_SEND_ATTEMPTS 64
#define FUZZ_REQ_MAGIC     0x7265713aU

#define FLAG_SHUT_WRITE 0x08
#define FLAG_READ_LATE  0x10
#define FLAG_NEVER_READ 0x20
#define FLAG_PROXY      0x40
#define FLAG_TRUSTED    0x80

/* ---- the event loop (loop.h), this file's own --------------------------------------- */

struct loop {
    int epoll_fd;
    bool host_due;
    struct loop_host host;
};

bool loop_watch_add(struct loop *e, int fd, uint32_t events, struct loop_watch *w)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool loop_watch_change(struct loop *e, int fd, uint32_t events, struct loop_watch *w)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(e->epoll_fd, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void loop_host_due(struct loop *e)
{
    e->host_due = true;
}

void loop_attach_host(struct loop *e, const struct loop_host *host)
{
    e->host = *host;
}

/* ---- the handler -------------------------------------------------------------------- */

struct fuzz_req {
    unsigned magic;
    struct front_conn *c;
    char kind; /* the path's second byte */
    bool answered;
};

struct fuzz_server {
    struct loop loop;
    struct front *front;
    size_t handled;     /* requests handed whole to the handler this input */
    size_t outstanding; /* request states not yet completed */
    struct fuzz_req *pending[FUZZ_MAX_PENDING];
    size_t npending;
};

static struct fuzz_server server;
static char big_answer[FUZZ_BIG_ANSWER];

static struct fuzz_req *req_of(void *req)
{
    struct fuzz_req *r = req;
    FUZZ_CHECK(r != NULL && r->magic == FUZZ_REQ_MAGIC);
    return r;
}

static void answer(struct fuzz_req *r, unsigned status, char *body, size_t len)
{
    static const struct front_header type = {"Content-Type", "application/octet-stream"};
    FUZZ_CHECK(!r->answered);
    r->answered = true;
    bool queued = front_respond(r->c, status, &type, 1, body, len, true);
    (void)queued; /* out of memory: the connection closes, which the checks allow */
}

static void *on_head(void *cls, struct front_conn *c, const struct hreq *head)
{
    struct fuzz_server *s = cls;
    char peer[64];
    front_client_address(c, peer, sizeof peer);
    char kind = head->path[0] ? head->path[1] : '\0';
    if (kind == 'n') {
        s->handled++; /* answered 500 by the front end */
        return NULL;
    }
    struct fuzz_req *r = calloc(1, sizeof *r);
    if (!r)
        abort();
    *r = (struct fuzz_req){.magic = FUZZ_REQ_MAGIC, .c = c, .kind = kind};
    s->outstanding++;
    if (kind == 'h') {
        s->handled++;
        answer(r, 200, NULL, 0);
    }
    return r;
}

static void on_body(void *cls, struct front_conn *c, void *req, char *body, size_t len,
                    bool too_large)
{
    struct fuzz_server *s = cls;
    struct fuzz_req *r = req_of(req);
    FUZZ_CHECK(r->c == c && !r->answered);
    FUZZ_CHECK(!too_large || body == NULL);
    FUZZ_CHECK(too_large || len <= FUZZ_MAX_BODY);
    FUZZ_CHECK(body == NULL || body[len] == '\0');
    s->handled++;
    if (too_large) {
        answer(r, 413, NULL, 0);
    } else if (r->kind == 'd' && s->npending < FUZZ_MAX_PENDING) {
        free(body);
        s->pending[s->npending++] = r;
    } else if (r->kind == 'x') {
        free(body);
        FUZZ_CHECK(!r->answered);
        r->answered = true;
        bool queued = front_respond(c, 200, NULL, 0, big_answer, sizeof big_answer, false);
        (void)queued;
    } else {
        answer(r, 200, body, len);
    }
}

static void on_resume(void *cls, struct front_conn *c, void *req)
{
    struct fuzz_req *r = req_of(req);
    FUZZ_CHECK(r->c == c);
    answer(r, 202, NULL, 0);
}

static void on_completed(void *cls, void *req)
{
    struct fuzz_server *s = cls;
    struct fuzz_req *r = req_of(req);
    for (size_t i = 0; i < s->npending; i++)
        FUZZ_CHECK(s->pending[i] != r); /* completed while its answer was still due */
    FUZZ_CHECK(s->outstanding > 0);
    s->outstanding--;
    r->magic = 0;
    free(r);
}

/* ---- the loop ----------------------------------------------------------------------- */

/* Runs the loop until nothing is left to do: the deferred answers are resumed first,
 * as a node's answer would resume them. */
static void pump(struct fuzz_server *s)
{
    for (int round = 0; round < FUZZ_MAX_ROUNDS; round++) {
        bool resumed = s->npending > 0;
        for (size_t i = 0; i < s->npending; i++)
            front_resume(s->pending[i]->c);
        s->npending = 0;
        struct epoll_event ev[32];
        int n = epoll_wait(s->loop.epoll_fd, ev, 32, 0);
        FUZZ_CHECK(n >= 0);
        for (int i = 0; i < n; i++) {
            struct loop_watch *w = ev[i].data.ptr;
            w->on_event(w, ev[i].events);
        }
        bool due = s->loop.host_due;
        s->loop.host_due = false;
        front_run(s->front);
        if (n == 0 && !due && !resumed && s->npending == 0)
            return;
    }
    FUZZ_CHECK(!"the front end never settled");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct fuzz_server *s = &server;
    memset(big_answer, 'x', sizeof big_answer);
    s->loop.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    FUZZ_CHECK(s->loop.epoll_fd >= 0);
    struct front_options opt = {
        .max_head = FUZZ_MAX_HEAD,
        .max_body = FUZZ_MAX_BODY,
        .idle_timeout_ms = 60000,
        .max_connections = 4,
        .linger = LINGER_BUDGET_DEFAULT,
        .max_lingering = 4,
    };
    char err[256];
    FUZZ_CHECK(xg_bind_addr_parse("127.0.0.1", 0, &opt.addr) > 0);
    FUZZ_CHECK(xg_proxy_trust_parse("127.0.0.1", &opt.trusted_proxies, err, sizeof err));
    struct front_handler handler = {s, on_head, on_body, on_resume, on_completed};
    s->front = front_start(&opt, &handler, &s->loop, err, sizeof err);
    if (!s->front) {
        fprintf(stderr, "front_start: %s\n", err);
        abort();
    }
    struct loop_host host = {
        .fd = -1, .run = front_run, .timeout_ms = front_timeout_ms, .ctx = s->front};
    loop_attach_host(&s->loop, &host);
    return 0;
}

/* ---- the client --------------------------------------------------------------------- */

struct client {
    int fd;
    char *got; /* everything received */
    size_t got_len, got_cap;
    bool eof;
};

static void client_read(struct client *cl)
{
    while (!cl->eof) {
        if (cl->got_cap - cl->got_len < 4096) {
            cl->got_cap = cl->got_cap ? cl->got_cap * 2 : 65536;
            cl->got = realloc(cl->got, cl->got_cap);
            if (!cl->got)
                abort();
        }
        ssize_t n = recv(cl->fd, cl->got + cl->got_len, cl->got_cap - cl->got_len, 0);
        if (n > 0)
            cl->got_len += (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            cl->eof = true;
        else
            return;
    }
}

enum read_policy {
    READ_ALWAYS, /* after every piece */
    READ_LATE,   /* when sending is stuck, and at the end */
    READ_NEVER,
};

/* Sends a piece, running the loop (and reading, as the policy allows) while the socket is
 * full. False when the server has gone (or never drains). */
static bool client_send(struct fuzz_server *s, struct client *cl, const uint8_t *p, size_t len,
                        enum read_policy policy)
{
    for (int attempt = 0; len > 0; attempt++) {
        ssize_t n = send(cl->fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            attempt = 0;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return false; /* the server closed: EPIPE, ECONNRESET */
        if (attempt == FUZZ_SEND_ATTEMPTS)
            return false;
        pump(s);
        if (policy != READ_NEVER)
            client_read(cl);
    }
    return true;
}

static bool count_body(void *ctx, const char *data, size_t len)
{
    return true;
}

/* Reads the answers in what the client received; returns how many were complete. */
static size_t check_answers(const char *got, size_t len, bool complete)
{
    struct h1_parser *p = malloc(sizeof *p);
    if (!p)
        abort();
    size_t answers = 0, at = 0;
    while (at < len) {
        h1_parser_init(p);
        at += h1_parse(p, got + at, len - at, count_body, NULL);
        FUZZ_CHECK(p->phase != H1_FAILED);
        if (p->phase != H1_DONE)
            break;
        answers++;
    }
    /* Only a client that stopped reading early may hold an answer's beginning. */
    FUZZ_CHECK(!complete || at == len);
    free(p);
    return answers;
}

static bool fd_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_server *s = &server;
    struct fuzz_split split;
    fuzz_split_init(&split, data, size);

    int sv[2];
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    int small = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    struct sockaddr_storage peer = {0};
    if (split.flags & FLAG_TRUSTED) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&peer;
        v4->sin_family = AF_INET;
        v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    s->front->opt.proxy_protocol = (split.flags & FLAG_PROXY) != 0;
    s->handled = 0;
    accept_one(s->front, sv[0], &peer);
    FUZZ_CHECK(s->front->nconns == 1);

    struct client cl = {.fd = sv[1]};
    enum read_policy policy = (split.flags & FLAG_NEVER_READ)  ? READ_NEVER
                              : (split.flags & FLAG_READ_LATE) ? READ_LATE
                                                               : READ_ALWAYS;
    const uint8_t *piece;
    size_t len;
    pump(s);
    while (fuzz_split_next(&split, &piece, &len)) {
        if (!client_send(s, &cl, piece, len, policy))
            break;
        pump(s);
        if (policy == READ_ALWAYS)
            client_read(&cl);
    }
    bool shut = (split.flags & FLAG_SHUT_WRITE) && policy != READ_NEVER;
    if (shut) {
        shutdown(cl.fd, SHUT_WR);
        for (int i = 0; i < FUZZ_MAX_ROUNDS && !cl.eof; i++) {
            pump(s);
            client_read(&cl);
        }
        FUZZ_CHECK(cl.eof);
    } else if (policy != READ_NEVER) {
        pump(s);
        client_read(&cl);
    }
    close(cl.fd);
    pump(s);

    size_t answers = check_answers(cl.got, cl.got_len, shut);
    if (shut)
        FUZZ_CHECK(answers >= s->handled && answers <= s->handled + 1);
    FUZZ_CHECK(s->front->nconns == 0 && s->front->live == NULL);
    FUZZ_CHECK(s->outstanding == 0 && s->npending == 0);
    FUZZ_CHECK(!fd_open(sv[0]));
    free(cl.got);
    return 0;
}
