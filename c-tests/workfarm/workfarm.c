/* workfarm: implementation. See workfarm.h for the design; the structure follows seed 001:
   Input -> Q -> Calculate x N -> Q -> Output on the server, RelayIn/RelayCalc/RelayOut on the
   other ranks. Here one relay thread per rank plays RelayIn, RelayCalc and RelayOut (it owns the
   bookkeeping of which child holds which item), and one progress thread per rank makes every MPI
   call while the farm runs (the "separate MPI thread" with event queues and back-off polling).
   No global state: ranks may be threads of one process. */
#define _GNU_SOURCE
#include "workfarm.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WF_TAG_DOWN 7301 /* parent -> child: work batches, stop */
#define WF_TAG_UP 7302   /* child -> parent: result batches */
#define WF_TAG_SETUP 7303
#define WF_MSG_MAX (1 << 20) /* largest message; larger batches are split */
#define WF_MSG_WORK 1
#define WF_MSG_RESULTS 2
#define WF_MSG_STOP 3
#define WF_BACKOFF_MAX_NS 2000000L /* longest sleep between two polls when idle: 2 ms */
#define WF_SPINS 16                /* yield-only polls before sleeping */

/* ------------------------------------------------------------------ units and lists */

typedef struct unit {
    uint64_t id;
    void *item;
    unsigned char *ipk; /* packed item (kept while a child holds it, for reassignment) */
    uint32_t ilen;
    void *result;
    unsigned char *rpk; /* packed result */
    uint32_t rlen;
    int rank; /* rank that computed it */
    struct unit *next;
} unit;

typedef struct ulist {
    unit *head, *tail;
    long n;
} ulist;

static void ul_push(ulist *l, unit *u)
{
    u->next = NULL;
    if (l->tail)
        l->tail->next = u;
    else
        l->head = u;
    l->tail = u;
    l->n++;
}

static unit *ul_pop(ulist *l)
{
    unit *u = l->head;
    if (!u)
        return NULL;
    l->head = u->next;
    if (!l->head)
        l->tail = NULL;
    l->n--;
    u->next = NULL;
    return u;
}

static unit *ul_take(ulist *l, uint64_t id)
{
    unit *prev = NULL;
    for (unit *u = l->head; u; prev = u, u = u->next) {
        if (u->id != id)
            continue;
        if (prev)
            prev->next = u->next;
        else
            l->head = u->next;
        if (l->tail == u)
            l->tail = prev;
        l->n--;
        u->next = NULL;
        return u;
    }
    return NULL;
}

/* A blocking FIFO of units (the Calculate input queue and the Output queue). */
typedef struct uqueue {
    pthread_mutex_t m;
    pthread_cond_t c;
    ulist l;
    int closed;
} uqueue;

static void uq_init(uqueue *q)
{
    pthread_mutex_init(&q->m, NULL);
    pthread_cond_init(&q->c, NULL);
    memset(&q->l, 0, sizeof q->l);
    q->closed = 0;
}

static void uq_push(uqueue *q, unit *u)
{
    pthread_mutex_lock(&q->m);
    ul_push(&q->l, u);
    pthread_cond_signal(&q->c);
    pthread_mutex_unlock(&q->m);
}

static void uq_close(uqueue *q)
{
    pthread_mutex_lock(&q->m);
    q->closed = 1;
    pthread_cond_broadcast(&q->c);
    pthread_mutex_unlock(&q->m);
}

/* NULL once closed and empty. */
static unit *uq_pop(uqueue *q)
{
    pthread_mutex_lock(&q->m);
    while (!q->l.head && !q->closed)
        pthread_cond_wait(&q->c, &q->m);
    unit *u = ul_pop(&q->l);
    pthread_mutex_unlock(&q->m);
    return u;
}

/* ------------------------------------------------------------------ events */

enum { EV_MSG, EV_DEAD, EV_RESULT, EV_ITEM, EV_INPUT_DONE };

typedef struct event {
    int kind;
    int peer;           /* EV_MSG, EV_DEAD */
    unsigned char *buf; /* EV_MSG: the message (owned) */
    int len;
    unit *u; /* EV_RESULT, EV_ITEM */
    struct event *next;
} event;

typedef struct equeue {
    pthread_mutex_t m;
    pthread_cond_t c;
    event *head, *tail;
} equeue;

static void eq_init(equeue *q)
{
    pthread_mutex_init(&q->m, NULL);
    pthread_cond_init(&q->c, NULL);
    q->head = q->tail = NULL;
}

static void eq_post(equeue *q, int kind, int peer, unsigned char *buf, int len, unit *u)
{
    event *e = calloc(1, sizeof *e);
    if (!e) {
        fprintf(stderr, "workfarm: out of memory\n");
        abort();
    }
    e->kind = kind;
    e->peer = peer;
    e->buf = buf;
    e->len = len;
    e->u = u;
    pthread_mutex_lock(&q->m);
    if (q->tail)
        q->tail->next = e;
    else
        q->head = e;
    q->tail = e;
    pthread_cond_signal(&q->c);
    pthread_mutex_unlock(&q->m);
}

static event *eq_wait(equeue *q)
{
    pthread_mutex_lock(&q->m);
    while (!q->head)
        pthread_cond_wait(&q->c, &q->m);
    event *e = q->head;
    q->head = e->next;
    if (!q->head)
        q->tail = NULL;
    pthread_mutex_unlock(&q->m);
    return e;
}

/* Sends queued for the progress thread. */
typedef struct send_ev {
    int dest, tag;
    unsigned char *buf;
    int len;
    struct send_ev *next;
} send_ev;

/* ------------------------------------------------------------------ one rank's farm */

typedef struct farm {
    MPI_Comm comm;
    const wf_config *cfg;
    const wf_ops *ops;
    int rank, size, parent;
    int nchild;
    int *child;      /* communicator ranks of the children */
    long *child_cap; /* items a child's subtree may hold: 2 x its Calculate threads */
    int *child_alive;
    int *simulated; /* --simulate-loss: 1 armed, 2 lost (still running, still told to stop) */
    ulist *child_out; /* items each child holds */
    long subtree_threads;

    uqueue workq; /* Calculate input */
    uqueue outq;  /* rank 0: Output input */
    equeue inbox; /* relay events */

    /* progress thread's incoming event queue */
    pthread_mutex_t pm;
    pthread_cond_t pc;
    send_ev *sq_head, *sq_tail;
    int p_quit;

    /* Input flow control (rank 0): at most cap items between input() and output() */
    pthread_mutex_t im;
    pthread_cond_t ic;
    long in_system, in_cap;
    int in_stop;

    pthread_mutex_t cm; /* computed */
    long computed;
    double progress_cpu;
    long reassigned;
    int dead;
} farm;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "workfarm: out of memory (%zu bytes)\n", n);
        abort();
    }
    return p;
}

static void free_item(farm *f, void *p)
{
    if (!p)
        return;
    if (f->ops->free_item)
        f->ops->free_item(f->ops->user, p);
    else
        free(p);
}

static void free_result(farm *f, void *p)
{
    if (!p)
        return;
    if (f->ops->free_result)
        f->ops->free_result(f->ops->user, p);
    else
        free(p);
}

static unsigned char *pack(farm *f, size_t (*fn)(void *, const void *, void *, size_t), const void *obj,
                           uint32_t *len)
{
    size_t cap = 256;
    unsigned char *buf = xmalloc(cap);
    size_t n = fn(f->ops->user, obj, buf, cap);
    if (n > cap) {
        free(buf);
        buf = xmalloc(n);
        fn(f->ops->user, obj, buf, n);
    }
    if (n > WF_MSG_MAX - 64) {
        fprintf(stderr, "workfarm: a packed object of %zu bytes exceeds the message limit %d\n", n,
                WF_MSG_MAX - 64);
        abort();
    }
    *len = (uint32_t)n;
    return buf;
}

static void psend(farm *f, int dest, int tag, unsigned char *buf, int len)
{
    send_ev *s = xmalloc(sizeof *s);
    s->dest = dest;
    s->tag = tag;
    s->buf = buf;
    s->len = len;
    s->next = NULL;
    pthread_mutex_lock(&f->pm);
    if (f->sq_tail)
        f->sq_tail->next = s;
    else
        f->sq_head = s;
    f->sq_tail = s;
    pthread_cond_signal(&f->pc);
    pthread_mutex_unlock(&f->pm);
}

/* ------------------------------------------------------------------ progress thread */

/* An error on an operation with a peer: MPIX_ERR_PROC_FAILED is the expected one (ULFM); any
   other error leaves the peer unreachable as well, so it is handled alike but reported. */
static void peer_error(farm *f, int peer, int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    if (cls != MPIX_ERR_PROC_FAILED && !f->cfg->quiet) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        msg[0] = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "workfarm: rank %d: error with rank %d (class %d: %s); taken as lost\n", f->rank, peer,
                cls, msg);
    }
}

typedef struct pslot {
    int peer;           /* recv: peer index into peers; send: -1 */
    unsigned char *buf; /* recv buffer or send buffer */
    int dest;           /* send destination */
} pslot;

static void *progress_main(void *arg)
{
    farm *f = arg;
    int npeers = f->nchild + (f->parent >= 0);
    int *peer = xmalloc(sizeof(int) * (size_t)(npeers + 1));
    for (int i = 0; i < f->nchild; i++)
        peer[i] = f->child[i];
    if (f->parent >= 0)
        peer[f->nchild] = f->parent;
    int cap = npeers + 16;
    MPI_Request *req = xmalloc(sizeof(MPI_Request) * (size_t)cap);
    pslot *slot = xmalloc(sizeof(pslot) * (size_t)cap);
    int *idx = xmalloc(sizeof(int) * (size_t)cap);
    MPI_Status *st = xmalloc(sizeof(MPI_Status) * (size_t)cap);
    for (int i = 0; i < cap; i++)
        req[i] = MPI_REQUEST_NULL;
    int nsends = 0;
    int *gone = calloc((size_t)npeers + 1, sizeof(int));

    /* one receive always posted per live peer */
    for (int i = 0; i < npeers; i++) {
        slot[i].peer = i;
        slot[i].buf = xmalloc(WF_MSG_MAX);
        int tag = i < f->nchild ? WF_TAG_UP : WF_TAG_DOWN;
        if (i < f->nchild && !f->child_alive[i]) {
            gone[i] = 1;
            continue;
        }
        if (MPI_Irecv(slot[i].buf, WF_MSG_MAX, MPI_BYTE, peer[i], tag, f->comm, &req[i]) != MPI_SUCCESS) {
            gone[i] = 1;
            eq_post(&f->inbox, EV_DEAD, peer[i], NULL, 0, NULL);
        }
    }

    long delay_ns = 0;
    int idle_spins = 0;
    for (;;) {
        int busy = 0, quit;
        send_ev *s;
        pthread_mutex_lock(&f->pm);
        s = f->sq_head;
        f->sq_head = f->sq_tail = NULL;
        quit = f->p_quit;
        pthread_mutex_unlock(&f->pm);
        while (s) {
            send_ev *next = s->next;
            int pi = -1;
            for (int i = 0; i < npeers; i++)
                if (peer[i] == s->dest)
                    pi = i;
            busy = 1;
            if (pi >= 0 && gone[pi]) {
                free(s->buf);
            } else {
                int k = -1;
                for (int i = npeers; i < npeers + nsends; i++)
                    if (req[i] == MPI_REQUEST_NULL && slot[i].buf == NULL)
                        k = i;
                if (k < 0) {
                    if (npeers + nsends == cap) {
                        cap *= 2;
                        req = realloc(req, sizeof(MPI_Request) * (size_t)cap);
                        slot = realloc(slot, sizeof(pslot) * (size_t)cap);
                        idx = realloc(idx, sizeof(int) * (size_t)cap);
                        st = realloc(st, sizeof(MPI_Status) * (size_t)cap);
                        if (!req || !slot || !idx || !st) {
                            fprintf(stderr, "workfarm: out of memory\n");
                            abort();
                        }
                        for (int i = npeers + nsends; i < cap; i++)
                            req[i] = MPI_REQUEST_NULL;
                    }
                    k = npeers + nsends++;
                }
                slot[k].peer = -1;
                slot[k].buf = s->buf;
                slot[k].dest = pi;
                int src = MPI_Isend(s->buf, s->len, MPI_BYTE, s->dest, s->tag, f->comm, &req[k]);
                if (src != MPI_SUCCESS) {
                    peer_error(f, s->dest, src);
                    req[k] = MPI_REQUEST_NULL;
                    free(slot[k].buf);
                    slot[k].buf = NULL;
                    if (pi >= 0 && !gone[pi]) {
                        gone[pi] = 1;
                        eq_post(&f->inbox, EV_DEAD, peer[pi], NULL, 0, NULL);
                    }
                }
            }
            free(s);
            s = next;
        }

        int n = npeers + nsends, out = 0;
        int rc = MPI_Testsome(n, req, &out, idx, st), rc_class = rc;
        /* the standard returns MPI_ERR_IN_STATUS itself; an MPI that returns another code of
           that class must not send us down the path below, which would lose the requests
           Testsome already completed and freed (a dead child would then go unnoticed) */
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &rc_class);
        if (rc_class == MPI_ERR_IN_STATUS)
            rc = MPI_ERR_IN_STATUS;
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
            /* an error not tied to one request: find the failing ones one by one */
            out = 0;
            for (int i = 0; i < n; i++) {
                int flag = 0;
                if (req[i] == MPI_REQUEST_NULL)
                    continue;
                int r = MPI_Test(&req[i], &flag, &st[out]);
                if (r != MPI_SUCCESS) {
                    st[out].MPI_ERROR = r;
                    req[i] = MPI_REQUEST_NULL;
                    flag = 1;
                } else {
                    st[out].MPI_ERROR = MPI_SUCCESS;
                }
                if (flag)
                    idx[out++] = i;
            }
            rc = MPI_ERR_IN_STATUS;
        }
        if (out == MPI_UNDEFINED)
            out = 0;
        for (int j = 0; j < out; j++) {
            int i = idx[j];
            int err = rc == MPI_ERR_IN_STATUS ? st[j].MPI_ERROR : MPI_SUCCESS;
            busy = 1;
            if (i < npeers) {
                if (err != MPI_SUCCESS) {
                    peer_error(f, peer[i], err);
                    req[i] = MPI_REQUEST_NULL;
                    if (!gone[i]) {
                        gone[i] = 1;
                        eq_post(&f->inbox, EV_DEAD, peer[i], NULL, 0, NULL);
                    }
                    continue;
                }
                int len = 0;
                MPI_Get_count(&st[j], MPI_BYTE, &len);
                unsigned char *m = xmalloc((size_t)len);
                memcpy(m, slot[i].buf, (size_t)len);
                eq_post(&f->inbox, EV_MSG, peer[i], m, len, NULL);
                int tag = i < f->nchild ? WF_TAG_UP : WF_TAG_DOWN;
                if (MPI_Irecv(slot[i].buf, WF_MSG_MAX, MPI_BYTE, peer[i], tag, f->comm, &req[i]) != MPI_SUCCESS) {
                    req[i] = MPI_REQUEST_NULL;
                    gone[i] = 1;
                    eq_post(&f->inbox, EV_DEAD, peer[i], NULL, 0, NULL);
                }
            } else {
                free(slot[i].buf);
                slot[i].buf = NULL;
                int pi = slot[i].dest;
                if (err != MPI_SUCCESS && pi >= 0 && !gone[pi]) {
                    peer_error(f, peer[pi], err);
                    gone[pi] = 1;
                    eq_post(&f->inbox, EV_DEAD, peer[pi], NULL, 0, NULL);
                }
            }
        }

        int sends_left = 0;
        for (int i = npeers; i < npeers + nsends; i++)
            sends_left += slot[i].buf != NULL;
        if (quit && sends_left == 0) {
            pthread_mutex_lock(&f->pm);
            int more = f->sq_head != NULL;
            pthread_mutex_unlock(&f->pm);
            if (!more)
                break;
        }

        /* adaptive back-off: poll again at once after activity, yield a few times, then sleep
           for a doubling time (bounded); a queued send wakes the sleep early */
        if (busy) {
            delay_ns = 0;
            idle_spins = 0;
            continue;
        }
        if (idle_spins < WF_SPINS) {
            idle_spins++;
            sched_yield();
            continue;
        }
        delay_ns = delay_ns ? delay_ns * 2 : 1000;
        if (delay_ns > WF_BACKOFF_MAX_NS)
            delay_ns = WF_BACKOFF_MAX_NS;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += delay_ns;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&f->pm);
        if (!f->sq_head && !f->p_quit)
            pthread_cond_timedwait(&f->pc, &f->pm, &ts);
        pthread_mutex_unlock(&f->pm);
    }

    /* the farm is over: withdraw the receives still posted */
    for (int i = 0; i < npeers; i++) {
        if (req[i] != MPI_REQUEST_NULL && !gone[i]) {
            MPI_Cancel(&req[i]);
            MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        }
        free(slot[i].buf);
    }
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    f->progress_cpu = (double)cpu.tv_sec + (double)cpu.tv_nsec * 1e-9;
    free(peer);
    free(req);
    free(slot);
    free(idx);
    free(st);
    free(gone);
    return NULL;
}

/* ------------------------------------------------------------------ Calculate and Input */

static void *calc_main(void *arg)
{
    farm *f = arg;
    long n = 0;
    unit *u;
    while ((u = uq_pop(&f->workq))) {
        if (!u->item)
            u->item = f->ops->unpack_item(f->ops->user, u->ipk, u->ilen);
        u->result = f->ops->calculate(f->ops->user, u->item);
        u->rank = f->rank;
        if (f->rank != 0) {
            /* packed here so that packing runs in parallel; the item is no longer needed */
            u->rpk = pack(f, f->ops->pack_result, u->result, &u->rlen);
            free_result(f, u->result);
            u->result = NULL;
            free_item(f, u->item);
            u->item = NULL;
            free(u->ipk);
            u->ipk = NULL;
        }
        n++;
        eq_post(&f->inbox, EV_RESULT, 0, NULL, 0, u);
    }
    pthread_mutex_lock(&f->cm);
    f->computed += n;
    pthread_mutex_unlock(&f->cm);
    return NULL;
}

static void *input_main(void *arg)
{
    farm *f = arg;
    uint64_t id = 0;
    for (;;) {
        pthread_mutex_lock(&f->im);
        while (f->in_system >= f->in_cap && !f->in_stop)
            pthread_cond_wait(&f->ic, &f->im);
        int stop = f->in_stop;
        pthread_mutex_unlock(&f->im);
        if (stop)
            break;
        void *item = NULL;
        if (!f->ops->input(f->ops->user, &item))
            break;
        unit *u = calloc(1, sizeof *u);
        if (!u)
            abort();
        u->id = id++;
        u->item = item;
        pthread_mutex_lock(&f->im);
        f->in_system++;
        pthread_mutex_unlock(&f->im);
        eq_post(&f->inbox, EV_ITEM, 0, NULL, 0, u);
    }
    eq_post(&f->inbox, EV_INPUT_DONE, 0, NULL, 0, NULL);
    return NULL;
}

/* ------------------------------------------------------------------ relay */

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
} wbuf;

static void wb_put(wbuf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n)
            c *= 2;
        b->p = realloc(b->p, c);
        if (!b->p)
            abort();
        b->cap = c;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static int child_index(farm *f, int rank)
{
    for (int i = 0; i < f->nchild; i++)
        if (f->child[i] == rank)
            return i;
    return -1;
}

/* Send a work batch of up to `want` pending items to child i. */
static void send_work(farm *f, ulist *pending, int i, long want)
{
    while (want > 0 && pending->head) {
        wbuf b = {0};
        uint8_t type = WF_MSG_WORK;
        uint32_t n = 0;
        wb_put(&b, &type, 1);
        wb_put(&b, &n, 4);
        while (want > 0 && pending->head) {
            unit *u = pending->head;
            if (!u->ipk)
                u->ipk = pack(f, f->ops->pack_item, u->item, &u->ilen);
            if (n > 0 && b.n + 12 + u->ilen > WF_MSG_MAX)
                break;
            ul_pop(pending);
            wb_put(&b, &u->id, 8);
            wb_put(&b, &u->ilen, 4);
            wb_put(&b, u->ipk, u->ilen);
            ul_push(&f->child_out[i], u);
            n++;
            want--;
        }
        memcpy(b.p + 1, &n, 4);
        psend(f, f->child[i], WF_TAG_DOWN, b.p, (int)b.n);
    }
}

/* Send results up to the parent, split at the message limit. */
static void send_results(farm *f, ulist *batch, long *reassigned)
{
    while (batch->head) {
        wbuf b = {0};
        uint8_t type = WF_MSG_RESULTS;
        uint32_t n = 0, re = (uint32_t)*reassigned;
        *reassigned = 0;
        wb_put(&b, &type, 1);
        wb_put(&b, &n, 4);
        wb_put(&b, &re, 4);
        while (batch->head) {
            unit *u = batch->head;
            if (n > 0 && b.n + 16 + u->rlen > WF_MSG_MAX)
                break;
            ul_pop(batch);
            int32_t r = u->rank;
            wb_put(&b, &u->id, 8);
            wb_put(&b, &r, 4);
            wb_put(&b, &u->rlen, 4);
            wb_put(&b, u->rpk, u->rlen);
            free(u->rpk);
            free(u->ipk);
            free(u);
            n++;
        }
        memcpy(b.p + 1, &n, 4);
        psend(f, f->parent, WF_TAG_UP, b.p, (int)b.n);
    }
}

static void send_stop(farm *f)
{
    for (int i = 0; i < f->nchild; i++) {
        if (!f->child_alive[i] && !f->simulated[i])
            continue;
        unsigned char *m = xmalloc(1);
        m[0] = WF_MSG_STOP;
        psend(f, f->child[i], WF_TAG_DOWN, m, 1);
    }
}

/* Root: a finished unit goes to Output (once per id). */
typedef struct seen {
    unsigned char *bits;
    size_t n;
} seen;

static int seen_once(seen *s, uint64_t id)
{
    size_t byte = (size_t)(id / 8);
    if (byte >= s->n) {
        size_t n = s->n ? s->n : 64;
        while (n <= byte)
            n *= 2;
        s->bits = realloc(s->bits, n);
        if (!s->bits)
            abort();
        memset(s->bits + s->n, 0, n - s->n);
        s->n = n;
    }
    unsigned char bit = (unsigned char)(1u << (id % 8));
    if (s->bits[byte] & bit)
        return 0;
    s->bits[byte] |= bit;
    return 1;
}

/* Child i's subtree is lost: the items it held go back to pending, for the local Calculate
   threads and the other children. Late messages from it find nothing in child_out and are
   dropped. */
static void lose_child(farm *f, int i, ulist *pending, long *report_re)
{
    unit *u;
    f->child_alive[i] = 0;
    f->dead++;
    while ((u = ul_pop(&f->child_out[i]))) {
        ul_push(pending, u);
        f->reassigned++;
        (*report_re)++;
    }
    if (!f->cfg->quiet)
        fprintf(stderr, "workfarm: rank %d lost child %d and its subtree; its items go to others\n", f->rank,
                f->child[i]);
}

static void relay_run(farm *f)
{
    ulist pending = {0}, batch = {0};
    long local_held = 0, local_cap = 2L * f->cfg->threads;
    long held = 0; /* non-root: items received from the parent and not yet returned */
    long produced = 0, delivered = 0, report_re = 0;
    int input_done = f->rank != 0, stop = 0;
    seen s = {0};

    for (;;) {
        /* hand out pending work: local Calculate threads first, then the children's subtrees */
        while (pending.head && local_held < local_cap) {
            uq_push(&f->workq, ul_pop(&pending));
            local_held++;
        }
        for (int i = 0; i < f->nchild && pending.head; i++) {
            if (!f->child_alive[i])
                continue;
            long room = f->child_cap[i] - f->child_out[i].n;
            if (room > 0)
                send_work(f, &pending, i, room);
        }
        /* an armed simulated loss strikes once the child holds items again (so that there is
           something to reassign) */
        for (int i = 0; i < f->nchild; i++) {
            if (f->simulated[i] == 1 && f->child_alive[i] && f->child_out[i].n > 0) {
                f->simulated[i] = 2;
                lose_child(f, i, &pending, &report_re);
            }
        }
        if (f->rank == 0) {
            if (input_done && delivered == produced)
                break;
        } else {
            /* results go up when there are as many as the subtree computes at once (half of
               what it holds: the other half keeps it busy meanwhile), or when nothing else is
               coming */
            if (batch.n > 0 && (batch.n >= f->subtree_threads || batch.n == held)) {
                held -= batch.n;
                send_results(f, &batch, &report_re);
            }
            if (stop)
                break;
        }

        event *e = eq_wait(&f->inbox);
        switch (e->kind) {
        case EV_ITEM:
            ul_push(&pending, e->u);
            produced++;
            break;
        case EV_INPUT_DONE:
            input_done = 1;
            break;
        case EV_RESULT:
            local_held--;
            if (f->rank == 0) {
                if (seen_once(&s, e->u->id)) {
                    uq_push(&f->outq, e->u);
                    delivered++;
                }
            } else {
                ul_push(&batch, e->u);
            }
            break;
        case EV_DEAD: {
            int i = child_index(f, e->peer);
            if (i >= 0 && f->child_alive[i]) {
                lose_child(f, i, &pending, &report_re);
            } else if (e->peer == f->parent) {
                /* without a parent this subtree's work cannot reach the server: stop */
                stop = 1;
                held = 0;
                while (batch.head) {
                    unit *u = ul_pop(&batch);
                    free(u->rpk);
                    free(u);
                }
            }
            break;
        }
        case EV_MSG: {
            unsigned char *p = e->buf, *end = e->buf + e->len;
            uint8_t type = p[0];
            uint32_t n = 0;
            if (type == WF_MSG_STOP) {
                stop = 1;
                break;
            }
            memcpy(&n, p + 1, 4);
            p += 5;
            if (type == WF_MSG_WORK) {
                for (uint32_t k = 0; k < n && p + 12 <= end; k++) {
                    unit *u = calloc(1, sizeof *u);
                    if (!u)
                        abort();
                    memcpy(&u->id, p, 8);
                    memcpy(&u->ilen, p + 8, 4);
                    p += 12;
                    u->ipk = xmalloc(u->ilen);
                    memcpy(u->ipk, p, u->ilen);
                    p += u->ilen;
                    ul_push(&pending, u);
                    held++;
                }
            } else if (type == WF_MSG_RESULTS) {
                int i = child_index(f, e->peer);
                uint32_t re = 0;
                memcpy(&re, p, 4);
                p += 4;
                f->reassigned += re;
                report_re += re;
                for (uint32_t k = 0; k < n && p + 16 <= end; k++) {
                    uint64_t id;
                    int32_t r;
                    uint32_t len;
                    memcpy(&id, p, 8);
                    memcpy(&r, p + 8, 4);
                    memcpy(&len, p + 12, 4);
                    p += 16;
                    unit *u = i >= 0 ? ul_take(&f->child_out[i], id) : NULL;
                    if (u) {
                        u->rank = r;
                        u->rlen = len;
                        u->rpk = xmalloc(len);
                        memcpy(u->rpk, p, len);
                        free(u->ipk);
                        u->ipk = NULL;
                        if (f->rank == 0) {
                            if (seen_once(&s, id)) {
                                uq_push(&f->outq, u);
                                delivered++;
                            } else {
                                free(u->rpk);
                                free_item(f, u->item);
                                free(u);
                            }
                        } else {
                            ul_push(&batch, u);
                        }
                    }
                    p += len;
                }
                /* simulated loss: armed by the child's first result batch */
                if (i >= 0 && f->child[i] == f->cfg->simulate_loss && !f->simulated[i])
                    f->simulated[i] = 1;
            }
            break;
        }
        }
        free(e->buf);
        free(e);
    }

    send_stop(f);
    uq_close(&f->workq);
    if (f->rank == 0)
        uq_close(&f->outq);
    pthread_mutex_lock(&f->pm);
    f->p_quit = 1;
    pthread_cond_signal(&f->pc);
    pthread_mutex_unlock(&f->pm);
    while (pending.head) {
        unit *u = ul_pop(&pending);
        free_item(f, u->item);
        free(u->ipk);
        free(u);
    }
    free(s.bits);
}

static void *relay_main(void *arg)
{
    relay_run(arg);
    return NULL;
}

/* ------------------------------------------------------------------ wf_run */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int wf_run(MPI_Comm comm_in, const wf_config *cfg, const wf_ops *ops, wf_stats *stats)
{
    farm F, *f = &F;
    int rc, provided = 0;
    double t0 = now_s();
    memset(stats, 0, sizeof *stats);
    memset(f, 0, sizeof *f);
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "workfarm: MPI_THREAD_MULTIPLE is required (provided %d)\n", provided);
        return MPI_ERR_OTHER;
    }
    if ((rc = MPI_Comm_dup(comm_in, &f->comm)) != MPI_SUCCESS)
        return rc;
    MPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(f->comm, &f->rank);
    MPI_Comm_size(f->comm, &f->size);
    if (f->size != cfg->size || cfg->threads < 1) {
        fprintf(stderr, "workfarm: the configuration is for %d ranks with %d threads, the communicator has %d\n",
                cfg->size, cfg->threads, f->size);
        MPI_Comm_free(&f->comm);
        return MPI_ERR_ARG;
    }
    f->cfg = cfg;
    f->ops = ops;
    f->parent = cfg->parent[f->rank];
    for (int r = 0; r < f->size; r++)
        f->nchild += cfg->parent[r] == f->rank;
    f->child = xmalloc(sizeof(int) * (size_t)(f->nchild + 1));
    f->child_cap = xmalloc(sizeof(long) * (size_t)(f->nchild + 1));
    f->child_alive = xmalloc(sizeof(int) * (size_t)(f->nchild + 1));
    f->child_out = calloc((size_t)f->nchild + 1, sizeof(ulist));
    f->simulated = calloc((size_t)f->nchild + 1, sizeof(int));
    for (int r = 0, i = 0; r < f->size; r++)
        if (cfg->parent[r] == f->rank)
            f->child[i++] = r;

    /* start-up: the threads of each subtree are summed up the tree (leaves first) */
    f->subtree_threads = cfg->threads;
    for (int i = 0; i < f->nchild; i++) {
        long t = 0;
        f->child_alive[i] = MPI_Recv(&t, 1, MPI_LONG, f->child[i], WF_TAG_SETUP, f->comm, MPI_STATUS_IGNORE) ==
                            MPI_SUCCESS;
        f->child_cap[i] = 2 * t;
        f->subtree_threads += t;
        if (!f->child_alive[i])
            f->dead++;
    }
    if (f->parent >= 0)
        MPI_Send(&f->subtree_threads, 1, MPI_LONG, f->parent, WF_TAG_SETUP, f->comm);

    uq_init(&f->workq);
    uq_init(&f->outq);
    eq_init(&f->inbox);
    pthread_mutex_init(&f->pm, NULL);
    pthread_cond_init(&f->pc, NULL);
    pthread_mutex_init(&f->im, NULL);
    pthread_cond_init(&f->ic, NULL);
    pthread_mutex_init(&f->cm, NULL);
    f->in_cap = 2 * f->subtree_threads;

    pthread_t prog, relay, input, *calc = xmalloc(sizeof(pthread_t) * (size_t)cfg->threads);
    pthread_create(&prog, NULL, progress_main, f);
    pthread_create(&relay, NULL, relay_main, f);
    for (int i = 0; i < cfg->threads; i++)
        pthread_create(&calc[i], NULL, calc_main, f);
    if (f->rank == 0) {
        stats->per_rank = calloc((size_t)f->size, sizeof(long));
        pthread_create(&input, NULL, input_main, f);
        /* Output: this thread */
        unit *u;
        while ((u = uq_pop(&f->outq))) {
            if (!u->result)
                u->result = ops->unpack_result(ops->user, u->rpk, u->rlen);
            ops->output(ops->user, u->item, u->result);
            if (u->rank >= 0 && u->rank < f->size)
                stats->per_rank[u->rank]++;
            stats->items++;
            free_item(f, u->item);
            free_result(f, u->result);
            free(u->rpk);
            free(u->ipk);
            free(u);
            pthread_mutex_lock(&f->im);
            f->in_system--;
            pthread_cond_signal(&f->ic);
            pthread_mutex_unlock(&f->im);
        }
        pthread_mutex_lock(&f->im);
        f->in_stop = 1;
        pthread_cond_signal(&f->ic);
        pthread_mutex_unlock(&f->im);
        pthread_join(input, NULL);
    }
    pthread_join(relay, NULL);
    for (int i = 0; i < cfg->threads; i++)
        pthread_join(calc[i], NULL);
    pthread_join(prog, NULL);
    free(calc);

    stats->reassigned = f->reassigned;
    stats->computed = f->computed;
    stats->progress_cpu = f->progress_cpu;
    stats->dead_ranks = f->dead;
    stats->wall = now_s() - t0;
    for (int i = 0; i < f->nchild; i++) {
        unit *u;
        while ((u = ul_pop(&f->child_out[i]))) {
            free_item(f, u->item);
            free(u->ipk);
            free(u);
        }
    }
    free(f->child);
    free(f->child_cap);
    free(f->child_alive);
    free(f->child_out);
    /* the duplicate is left unfreed when a rank was lost: freeing is collective */
    int real_dead = f->dead;
    for (int i = 0; i < f->nchild; i++)
        real_dead -= f->simulated[i] == 2;
    free(f->simulated);
    if (real_dead == 0)
        MPI_Comm_free(&f->comm);
    return MPI_SUCCESS;
}

void wf_stats_free(wf_stats *stats)
{
    free(stats->per_rank);
    stats->per_rank = NULL;
}

/* ------------------------------------------------------------------ configuration */

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* SPEC: groups "P:C,C" separated by ';' or newlines; children separated by ',', '+' or blanks;
   '#' starts a comment to the end of the line. */
static int parse_tree(const char *spec, int size, int *parent, char *err, size_t errlen)
{
    const char *p = spec;
    for (int r = 0; r < size; r++)
        parent[r] = -2; /* not named yet */
    while (*p) {
        while (*p == ';' || *p == '\n' || *p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p == '#') {
            while (*p && *p != '\n')
                p++;
            continue;
        }
        if (!*p)
            break;
        char *end;
        long par = strtol(p, &end, 10);
        if (end == p || *end != ':') {
            snprintf(err, errlen, "tree: expected 'PARENT:' at '%.20s'", p);
            return -1;
        }
        if (par < 0 || par >= size) {
            snprintf(err, errlen, "tree: rank %ld is outside 0 to %d", par, size - 1);
            return -1;
        }
        p = end + 1;
        for (;;) {
            while (*p == ',' || *p == '+' || *p == ' ' || *p == '\t')
                p++;
            if (!*p || *p == ';' || *p == '\n' || *p == '#' || *p == '\r')
                break;
            long c = strtol(p, &end, 10);
            if (end == p) {
                snprintf(err, errlen, "tree: expected a child rank at '%.20s'", p);
                return -1;
            }
            p = end;
            if (c < 1 || c >= size) {
                snprintf(err, errlen, "tree: child rank %ld is outside 1..%d", c, size - 1);
                return -1;
            }
            if (parent[c] != -2) {
                snprintf(err, errlen, "tree: rank %ld has two parents", c);
                return -1;
            }
            parent[c] = (int)par;
        }
    }
    parent[0] = -1;
    for (int r = 1; r < size; r++)
        if (parent[r] == -2)
            parent[r] = 0;
    /* every rank must reach 0 */
    for (int r = 1; r < size; r++) {
        int q = r, steps = 0;
        while (q > 0 && steps <= size) {
            q = parent[q];
            steps++;
        }
        if (q != 0) {
            snprintf(err, errlen, "tree: rank %d is on a cycle (not connected to rank 0)", r);
            return -1;
        }
    }
    return 0;
}

static int read_file(const char *path, char **out, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *s = xmalloc(cap);
    size_t k;
    while ((k = fread(s + n, 1, cap - n - 1, fp)) > 0) {
        n += k;
        if (n + 1 == cap) {
            cap *= 2;
            s = realloc(s, cap);
            if (!s)
                abort();
        }
    }
    fclose(fp);
    s[n] = 0;
    *out = s;
    return 0;
}

/* Apply one option (and its value); returns how many arguments it used, 0 if unknown, -1 on error. */
static int apply_opt(wf_config *cfg, const char *opt, const char *val, char **tree, long *fanout, char *err,
                     size_t errlen)
{
    long v;
    if (!strcmp(opt, "--threads") || !strcmp(opt, "--fanout")) {
        int th = opt[2] == 't';
        if (!val || parse_int(val, th ? 1 : 1, th ? 1024 : 1 << 20, &v)) {
            snprintf(err, errlen, "%s needs a positive integer, got '%s'", opt, val ? val : "");
            return -1;
        }
        if (th) {
            cfg->threads = (int)v;
        } else {
            *fanout = v;
            free(*tree);
            *tree = NULL;
        }
        return 2;
    }
    if (!strcmp(opt, "--simulate-loss")) {
        if (!val || parse_int(val, 1, 1 << 20, &v)) {
            snprintf(err, errlen, "--simulate-loss needs a rank >= 1, got '%s'", val ? val : "");
            return -1;
        }
        cfg->simulate_loss = (int)v;
        return 2;
    }
    if (!strcmp(opt, "--tree") || !strcmp(opt, "--tree-file")) {
        if (!val) {
            snprintf(err, errlen, "%s needs a value", opt);
            return -1;
        }
        free(*tree);
        *tree = NULL;
        if (opt[6] == '-') {
            if (read_file(val, tree, err, errlen))
                return -1;
        } else {
            *tree = strdup(val);
        }
        *fanout = 0;
        return 2;
    }
    return 0;
}

int wf_config_from_args(wf_config *cfg, int size, int *argc, char **argv, char *err, size_t errlen)
{
    char *tree = NULL;
    long fanout = 2;
    memset(cfg, 0, sizeof *cfg);
    cfg->threads = 2;
    cfg->size = size;
    cfg->simulate_loss = -1;
    if (size < 1) {
        snprintf(err, errlen, "size %d < 1", size);
        return -1;
    }
    /* WORKFARM_ARGS first, split at blanks by hand (no strtok: ranks may share the C library) */
    const char *env = getenv("WORKFARM_ARGS");
    if (env) {
        char *copy = strdup(env), *words[64];
        int nw = 0;
        for (char *p = copy; *p && nw < 64;) {
            while (*p == ' ' || *p == '\t')
                *p++ = 0;
            if (!*p)
                break;
            words[nw++] = p;
            while (*p && *p != ' ' && *p != '\t')
                p++;
        }
        for (int i = 0; i < nw;) {
            int used = apply_opt(cfg, words[i], i + 1 < nw ? words[i + 1] : NULL, &tree, &fanout, err, errlen);
            if (used <= 0) {
                if (used == 0)
                    snprintf(err, errlen, "WORKFARM_ARGS: unknown option '%s'", words[i]);
                free(copy);
                free(tree);
                return -1;
            }
            i += used;
        }
        free(copy);
    }
    int out = 1;
    for (int i = 1; i < *argc;) {
        int used = apply_opt(cfg, argv[i], i + 1 < *argc ? argv[i + 1] : NULL, &tree, &fanout, err, errlen);
        if (used < 0) {
            free(tree);
            return -1;
        }
        if (used == 0)
            argv[out++] = argv[i++];
        else
            i += used;
    }
    *argc = out;
    argv[out] = NULL;
    cfg->parent = xmalloc(sizeof(int) * (size_t)size);
    if (tree) {
        int r = parse_tree(tree, size, cfg->parent, err, errlen);
        free(tree);
        if (r) {
            wf_config_free(cfg);
            return -1;
        }
    } else {
        for (int r = 0; r < size; r++)
            cfg->parent[r] = r == 0 ? -1 : (int)((r - 1) / fanout);
    }
    return 0;
}

void wf_config_free(wf_config *cfg)
{
    free(cfg->parent);
    cfg->parent = NULL;
}

/* ------------------------------------------------------------------ seed 001's start-up */

#include <unistd.h>

/* The words of a configuration file: blank-separated, '#' to the end of a line is a comment.
   Returns how many (at most max), the words pointing into text. */
static int config_words(char *text, char **words, int max)
{
    int n = 0;
    for (char *p = text; *p;) {
        if (*p == '#') {
            while (*p && *p != '\n')
                *p++ = 0;
            continue;
        }
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            *p++ = 0;
            continue;
        }
        if (n == max)
            return -1;
        words[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '#')
            p++;
    }
    return n;
}

/* The server's side: reads the configuration file, spawns the nodes the tree needs beyond comm
   world's ranks, merges them in after those (server = rank 0) and hands every node the tree. */
static int start_server(const char *path, MPI_Comm *comm, wf_config *cfg, char *err, size_t errlen)
{
    char *text = NULL, *words[258];
    if (read_file(path, &text, err, errlen))
        return -1;
    words[0] = "config";
    int nw = config_words(text, words + 1, 256);
    long nodes = -1;
    if (nw < 0) {
        snprintf(err, errlen, "%s: more than 256 words", path);
        free(text);
        return -1;
    }
    /* --nodes N is the start-up's own; the other words are farm options */
    int out = 1;
    for (int i = 1; i <= nw; i++) {
        if (!strcmp(words[i], "--nodes")) {
            if (i == nw || parse_int(words[i + 1], 1, 1 << 16, &nodes)) {
                snprintf(err, errlen, "%s: --nodes needs a positive integer", path);
                free(text);
                return -1;
            }
            i++;
        } else {
            words[out++] = words[i];
        }
    }
    words[out] = NULL;
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (nodes < wsize) {
        snprintf(err, errlen, "%s: --nodes %ld missing or below the %d ranks started", path, nodes, wsize);
        free(text);
        return -1;
    }
    int rc = wf_config_from_args(cfg, (int)nodes, &out, words, err, errlen);
    if (rc == 0 && out > 1) {
        snprintf(err, errlen, "%s: unknown option '%s'", path, words[1]);
        wf_config_free(cfg);
        rc = -1;
    }
    free(text);
    if (rc)
        return -1;
    if (nodes == wsize) {
        MPI_Comm_dup(MPI_COMM_WORLD, comm);
    } else {
        /* the other nodes are this program again, told so by -child */
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) {
            snprintf(err, errlen, "cannot find this program (/proc/self/exe): %s", strerror(errno));
            wf_config_free(cfg);
            return -1;
        }
        exe[n] = 0;
        char *args[] = {"-child", NULL};
        int *codes = xmalloc(sizeof(int) * (size_t)(nodes - wsize));
        MPI_Comm inter;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Comm_spawn(exe, args, (int)(nodes - wsize), MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
        free(codes);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            snprintf(err, errlen, "cannot spawn the %ld other nodes: %s", nodes - wsize, msg);
            wf_config_free(cfg);
            return -1;
        }
        MPI_Intercomm_merge(inter, 0, comm);
        MPI_Comm_free(&inter);
    }
    /* every node's place in the tree */
    int hdr[3] = {cfg->threads, cfg->simulate_loss, (int)nodes};
    MPI_Bcast(hdr, 3, MPI_INT, 0, *comm);
    MPI_Bcast(cfg->parent, (int)nodes, MPI_INT, 0, *comm);
    return 0;
}

/* A spawned node's side: joins the server's communicator and receives its place in the tree. */
static int start_child(MPI_Comm parent, MPI_Comm *comm, wf_config *cfg, char *err, size_t errlen)
{
    int hdr[3];
    memset(cfg, 0, sizeof *cfg);
    MPI_Intercomm_merge(parent, 1, comm);
    MPI_Comm_free(&parent);
    MPI_Bcast(hdr, 3, MPI_INT, 0, *comm);
    int size;
    MPI_Comm_size(*comm, &size);
    if (hdr[2] != size) {
        snprintf(err, errlen, "the server's tree has %d nodes, the communicator %d", hdr[2], size);
        return -1;
    }
    cfg->threads = hdr[0];
    cfg->simulate_loss = hdr[1];
    cfg->size = size;
    cfg->parent = xmalloc(sizeof(int) * (size_t)size);
    MPI_Bcast(cfg->parent, size, MPI_INT, 0, *comm);
    return 0;
}

int wf_start(int *argc, char **argv, const char *config, MPI_Comm *comm, wf_config *cfg, char *err, size_t errlen)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int child = 0, out = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "-child")) {
            child = 1;
        } else if (!strcmp(argv[i], "--config")) {
            if (i + 1 == *argc) {
                snprintf(err, errlen, "--config needs a file");
                return -1;
            }
            config = argv[++i];
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = NULL;
    if (parent != MPI_COMM_NULL) {
        if (!child) {
            snprintf(err, errlen, "spawned without -child: not a node of a work farm");
            return -1;
        }
        return start_child(parent, comm, cfg, err, errlen);
    }
    if (child) {
        snprintf(err, errlen, "-child is for the nodes the server spawns; start the server with --config FILE");
        return -1;
    }
    if (config)
        return start_server(config, comm, cfg, err, errlen);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, comm);
    if (wf_config_from_args(cfg, size, argc, argv, err, errlen)) {
        MPI_Comm_free(comm);
        return -1;
    }
    return 0;
}
