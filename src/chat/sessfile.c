/* Session files: a conversation saved with its KV cache, to resume exactly.
 *
 * Format, version 6.  Little-endian; a str is a u32 byte count and the
 * bytes (UTF-8, no NUL); ids are i32 token ids.
 *
 *   magic      8 bytes  "CFSESS\r\n"
 *   version    u32      6
 *   engine     u8       0 = the local model, 1 = a remote server
 *   local:
 *   model      u64 fingerprint (cf_gguf_fingerprint: metadata, tensor table,
 *              file size), u64 file size, str name, str the file's absolute
 *              path, str the name 'confab models' picked it by ("" if none)
 *   n_vocab    u32
 *   n_ctx      u32      context positions of the session that saved it
 *   kv types   u32 keys', u32 values' (cf_kv_type: 0 f32, 1 f16, 2 bf16,
 *              3 q8_0, 4 q4_0), u32 flags (1 = kept rotated, cf_ctx_kv_rotated)
 *   remote:
 *   server     str endpoint, str model (the API key is never saved)
 *   both:
 *   clock      i64      the time the chat template sees (fixed per session)
 *   template   str      the label of the chat template in use (for people)
 *   settings   f32 temp, i32 top_k, f32 top_p, f32 min_p, f32 typical_p,
 *              f32 repeat_penalty, i32 repeat_last_n, f32 presence_penalty,
 *              f32 frequency_penalty, i32 min_keep, u64 seed, i32 n_predict,
 *              u8 thinking (0 auto, 1 on, 2 off), u8 reasoning effort (0 auto,
 *              1 low, 2 medium, 3 high)
 *   sampler    u32 byte count, cf_sampler_state_save's bytes (random state,
 *              penalty history); remote: none
 *   given      u32      the settings given a value (bit i: the i-th of
 *              cf_session_setting_names), which a remote session sends
 *   stops      u32 count, then count strs (the user's stop strings)
 *   messages   u32 count, then for each: u8 role (0 system, 1 user,
 *              2 assistant, 3 tool: version 7), u8 flags (1 = cut by the
 *              user, 2 = ended inside its thinking, 4 = has reasoning, 8 =
 *              stopped at n-predict: version 5, 16 = has tool fields:
 *              version 7), i32 start (a user turn's
 *              first cache position, -1 = unknown), str content, str
 *              reasoning ("" without flag 4), with flag 16 str tool_calls
 *              and str tool_call_id ("" for none), then u32 count, count ids
 *              twice: the content's and the reasoning's sampled tokens
 *   branches   u32 count, u32 the current one's index, u32 the next id;
 *              then for each: i32 id, str name, and for all but the current
 *              one (whose messages are the list above) a message list as
 *              above (every start -1)
 *   history    u32 count, count ids: the tokens the KV cache holds (remote: 0)
 *   kv         u64 byte count, cf_ctx_kv_save of exactly those positions
 *              (the used cells only: per layer K then V, [head][pos][dim];
 *              remote: 0)
 *   checksum   u64 over every byte before it: FNV-1a's multiply over 64-bit
 *              words in four interleaved lanes, then the tail bytes and the
 *              lanes folded in one by one, then the length
 *
 * Version 6 had no tool messages and no calls of tools.  Version 5 had one kv_type (f32 or f16) for keys and values, never
 * rotated.  Version 4 had no flag 8 (its replies stopped at n-predict load unmarked)
 * and no model path and pick name (a chat started from it without -m cannot
 * find its model).  Version 3 (before remote sessions) had no engine byte and no given
 * settings: it loads as a local session's file with none given.  Version
 * 2 had no branches either: it loads as the one branch "main".  Version
 * 1 (before reasoning) had no thinking settings either, and per message
 * only flag 1, the text and one list of ids; it loads as replies without
 * reasoning.
 *
 * Either engine's file loads into either kind of session: the transcript
 * and settings are common ground; a local file's tokens and cache go only
 * into a session of its own model, a remote file's transcript is rendered
 * and prefilled afresh.
 *
 * Saving is crash-safe: the file is written beside the target under a
 * temporary name, synced, renamed over the target, and the folder synced;
 * a crash at any point leaves the old file or the new one, never a mix.
 * The cache goes from the context straight into the mapped temp file.
 * Loading checks everything (magic, version, checksum, model, sizes, token
 * ranges, UTF-8) before it changes the live session.
 *
 * Test-only: CONFAB_TEST_SAVE_PAUSE_MS=N makes a save sleep N ms once
 * the temp file is filled, before it is synced and renamed, so a test can
 * kill the process mid-save; CONFAB_TEST_SAVE_NO_MAP=1 saves as on a file
 * system that cannot map the temp file. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "confab/platform.h"
#include "remote.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "session files are written in the host's byte order, which must be little-endian"
#endif

static const char MAGIC[8] = {'C', 'F', 'S', 'E', 'S', 'S', '\r', '\n'};
enum { VERSION = 7, MAX_STOPS = 1024, MAX_BRANCHES = 1 << 16 };
enum { F_CUT = 1, F_THINKING_CUT = 2, F_REASONING = 4, F_LENGTH_CUT = 8, F_TOOL = 16 };

/* ---- checksum ----------------------------------------------------------------- */

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* Each step is a bijection of the running state, so a change anywhere
 * always changes the result; four lanes keep the multiplier busy. */
uint64_t sess_checksum(const uint8_t *p, size_t n)
{
    uint64_t lane[4] = {FNV_OFFSET, FNV_OFFSET ^ 1, FNV_OFFSET ^ 2, FNV_OFFSET ^ 3};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            lane[k] = (lane[k] ^ w) * FNV_PRIME;
        }
    uint64_t h = FNV_OFFSET;
    for (; i < n; i++)
        h = (h ^ p[i]) * FNV_PRIME;
    for (int k = 0; k < 4; k++)
        h = (h ^ lane[k]) * FNV_PRIME;
    h = (h ^ (uint64_t)n) * FNV_PRIME;
    return h ^ (h >> 29);
}

/* ---- writing -------------------------------------------------------------------- */

typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} wbuf;

/* Room for n more bytes, or NULL (and oom set). */
static uint8_t *grab(wbuf *b, size_t n)
{
    if (b->oom)
        return NULL;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    uint8_t *at = b->p + b->n;
    b->n += n;
    return at;
}

static void put(wbuf *b, const void *data, size_t n)
{
    uint8_t *at = grab(b, n);
    if (at && n)
        memcpy(at, data, n);
}

#define PUT(b, type, v)      \
    do {                     \
        type v_ = (type)(v); \
        put(b, &v_, sizeof v_); \
    } while (0)

static void put_str(wbuf *b, const char *s, size_t n)
{
    PUT(b, uint32_t, n);
    put(b, s, n);
}

static void put_ids(wbuf *b, const cf_token *ids, size_t n)
{
    PUT(b, uint32_t, n);
    put(b, ids, n * sizeof *ids);
}

static void put_settings(wbuf *b, const cf_session *s)
{
    const sess_remote *r = s->remote;
    const cf_sampler_params *p = r ? &r->par : cf_sampler_get_params(s->smp);
    PUT(b, float, p->temp);
    PUT(b, int32_t, p->top_k);
    PUT(b, float, p->top_p);
    PUT(b, float, p->min_p);
    PUT(b, float, p->typical_p);
    PUT(b, float, p->repeat_penalty);
    PUT(b, int32_t, p->repeat_last_n);
    PUT(b, float, p->presence_penalty);
    PUT(b, float, p->frequency_penalty);
    PUT(b, int32_t, p->min_keep);
    PUT(b, uint64_t, r ? r->seed : cf_sampler_seed(s->smp));
    PUT(b, int32_t, s->n_predict);
    PUT(b, uint8_t, s->thinking);
    PUT(b, uint8_t, s->effort);
    size_t n = r ? 0 : cf_sampler_state_save(s->smp, NULL, 0);
    PUT(b, uint32_t, n);
    uint8_t *at = grab(b, n);
    if (at && n)
        cf_sampler_state_save(s->smp, at, n);
    PUT(b, uint32_t, s->set_mask);
}

/* n_cache: the positions the file's cache holds */
static void put_message(wbuf *b, const sess_msg *m, int n_cache)
{
    const char *content = m->pub.content ? m->pub.content : "";
    const char *reasoning = m->pub.reasoning ? m->pub.reasoning : "";
    PUT(b, uint8_t, m->pub.role);
    bool tool = m->pub.tool_calls || m->pub.tool_call_id;
    PUT(b, uint8_t, (m->pub.cut ? F_CUT : 0) | (m->pub.thinking_cut ? F_THINKING_CUT : 0) |
                        (m->pub.reasoning ? F_REASONING : 0) |
                        (m->pub.length_cut ? F_LENGTH_CUT : 0) | (tool ? F_TOOL : 0));
    /* a start past the cache (a prefill that failed leaves one) is not a
     * position of the tokens saved: unknown */
    PUT(b, int32_t, m->start <= n_cache ? m->start : -1);
    put_str(b, content, strlen(content));
    put_str(b, reasoning, strlen(reasoning));
    if (tool) {
        const char *calls = m->pub.tool_calls ? m->pub.tool_calls : "";
        const char *id = m->pub.tool_call_id ? m->pub.tool_call_id : "";
        put_str(b, calls, strlen(calls));
        put_str(b, id, strlen(id));
    }
    put_ids(b, m->ids.ids, m->ids.n);
    put_ids(b, m->rids.ids, m->rids.n);
}

static void put_messages(wbuf *b, cf_session *s)
{
    PUT(b, uint32_t, s->n_msgs);
    for (int i = 0; i < s->n_msgs; i++) {
        /* a reply still running is saved as cut where it is */
        if (i == s->n_msgs - 1 && s->reply.active && !s->reply.finished) {
            sess_msg now = {.pub.role = CF_ROLE_ASSISTANT, .start = -1};
            if (s->remote)
                remote_reply_now(s, &now);
            else
                sess_reply_settle(s, s->reply.len, &now);
            now.pub.cut = true;
            put_message(b, &now, (int)s->cache.n);
            sess_msg_free(&now);
        } else {
            put_message(b, &s->msgs[i], (int)s->cache.n);
        }
    }
}

static void put_branches(wbuf *b, const cf_session *s)
{
    PUT(b, uint32_t, s->n_branches);
    PUT(b, uint32_t, s->cur);
    PUT(b, uint32_t, s->next_branch);
    for (int k = 0; k < s->n_branches; k++) {
        const sess_branch *br = &s->branches[k];
        PUT(b, int32_t, br->id);
        put_str(b, br->name, strlen(br->name));
        if (k == s->cur)
            continue;
        PUT(b, uint32_t, br->n_msgs);
        for (int i = 0; i < br->n_msgs; i++)
            put_message(b, &br->msgs[i], (int)s->cache.n);
    }
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void test_pause(void)
{
    const char *ms = getenv("CONFAB_TEST_SAVE_PAUSE_MS");
    long v = ms ? strtol(ms, NULL, 10) : 0;
    if (v > 0) {
        struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
    }
}

/* What goes into a session file: the records before the cache (head), the
 * cache itself, written by the context straight into the file, and the
 * checksum of both. */
typedef struct file_parts {
    const wbuf *head;
    const cf_ctx *ctx;
    int n_cache;
    uint64_t kv;
} file_parts;

static int fill_file(uint8_t *p, const file_parts *f, cf_err *err)
{
    memcpy(p, f->head->p, f->head->n);
    if (f->kv && cf_ctx_kv_save(f->ctx, f->n_cache, p + f->head->n, f->kv, err))
        return -1;
    const size_t body = f->head->n + (size_t)f->kv;
    const uint64_t sum = sess_checksum(p, body);
    memcpy(p + body, &sum, sizeof sum);
    return 0;
}

/* The temp file mapped for writing, or MAP_FAILED where its file system
 * maps no files that way (9p without a cache, some FUSE ones); the test
 * hook CONFAB_TEST_SAVE_NO_MAP plays such a file system. */
static void *map_for_writing(int fd, size_t n)
{
    if (getenv("CONFAB_TEST_SAVE_NO_MAP"))
        return MAP_FAILED;
    return mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

/* The file written whole to a temp file in the same folder, fsync, rename,
 * fsync the folder.  The temp file is mapped and filled in place rather
 * than built in memory first: a cache can be gigabytes, which would be
 * needed twice over, and freeing them again stalled the next turn on a VM
 * that hands freed memory back to its host.  Where it cannot be mapped,
 * the file is built in memory and written. */
static int write_atomic(const char *path, const file_parts *f, cf_err *err)
{
    const size_t n = f->head->n + (size_t)f->kv + sizeof(uint64_t);
    size_t len = strlen(path);
    char *tmp = malloc(len + 16), *dir = strdup(path);
    int fd = -1, rc = -1;
    void *map = MAP_FAILED;
    uint8_t *buf = NULL;
    if (!tmp || !dir) {
        cf_fail(err, "out of memory");
        goto out;
    }
    snprintf(tmp, len + 16, "%s.tmp-XXXXXX", path);
    if ((fd = mkstemp(tmp)) < 0) {
        cf_fail(err, "cannot save %s: %s", path, strerror(errno));
        goto out;
    }
    /* the blocks are had now, so that a full disk is an error here and not
     * a SIGBUS while the mapping is written */
    int e = cf_reserve_file(fd, (off_t)n);
    if (e) {
        cf_fail(err, "cannot save %s: %s", path, strerror(e));
        goto fail;
    }
    map = map_for_writing(fd, n);
    if (map == MAP_FAILED && !(buf = malloc(n))) {
        cf_fail(err, "out of memory saving %s", path);
        goto fail;
    }
    if (fill_file(map != MAP_FAILED ? map : buf, f, err))
        goto fail;
    test_pause();
    if ((map != MAP_FAILED ? msync(map, n, MS_SYNC) : write_all(fd, buf, n)) || fsync(fd)) {
        cf_fail(err, "cannot save %s: %s", path, strerror(errno));
        goto fail;
    }
    int c = close(fd);
    fd = -1;
    if (c || rename(tmp, path)) {
        cf_fail(err, "cannot save %s: %s", path, strerror(errno));
        goto fail;
    }
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { /* the rename is durable once the folder is */
        fsync(dfd);
        close(dfd);
    }
    rc = 0;
    goto out;
fail:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
out:
    if (map != MAP_FAILED)
        munmap(map, n);
    free(buf);
    free(tmp);
    free(dir);
    return rc;
}

static void put_local(wbuf *b, cf_session *s)
{
    const cf_gguf *g = cf_model_gguf(s->model);
    const char *name = cf_model_name(s->model);
    PUT(b, uint64_t, cf_gguf_fingerprint(g));
    PUT(b, uint64_t, cf_gguf_file_size(g));
    put_str(b, name, strlen(name));
    put_str(b, s->model_path, strlen(s->model_path));
    put_str(b, s->model_pick, strlen(s->model_pick));
    PUT(b, uint32_t, cf_model_hparams(s->model)->n_vocab);
    PUT(b, uint32_t, cf_ctx_n_ctx(s->ctx));
    PUT(b, uint32_t, cf_ctx_kv_type_k(s->ctx));
    PUT(b, uint32_t, cf_ctx_kv_type_v(s->ctx));
    PUT(b, uint32_t, cf_ctx_kv_rotated(s->ctx) ? 1u : 0u);
}

static int save_file(cf_session *s, const char *path, cf_err *err)
{
    const cf_remote_info *ri = cf_session_remote(s);
    const char *tmpl = ri ? s->tmpl_desc : cf_chat_template_label(s->tmpl);
    wbuf b = {0};
    put(&b, MAGIC, sizeof MAGIC);
    PUT(&b, uint32_t, VERSION);
    PUT(&b, uint8_t, ri != NULL);
    if (ri) {
        put_str(&b, ri->endpoint, strlen(ri->endpoint));
        put_str(&b, ri->model, strlen(ri->model));
    } else {
        put_local(&b, s);
    }
    PUT(&b, int64_t, s->now);
    put_str(&b, tmpl, strlen(tmpl));
    put_settings(&b, s);
    PUT(&b, uint32_t, s->n_stops);
    for (size_t i = 0; i < s->n_stops; i++)
        put_str(&b, s->stops[i], strlen(s->stops[i]));
    put_messages(&b, s);
    put_branches(&b, s);
    put_ids(&b, s->cache.ids, s->cache.n);
    const uint64_t kv = ri ? 0 : cf_ctx_kv_bytes(s->ctx, (int)s->cache.n);
    PUT(&b, uint64_t, kv);
    const file_parts f = {&b, s->ctx, (int)s->cache.n, kv};
    int rc = b.oom ? cf_fail(err, "out of memory saving %s", path) : write_atomic(path, &f, err);
    free(b.p);
    if (rc == 0)
        s->dirty = false;
    return rc;
}

/* ---- reading -------------------------------------------------------------------- */

typedef struct rbuf {
    const uint8_t *p;
    size_t n, pos;
    bool bad; /* ran past the end */
} rbuf;

static const void *take(rbuf *r, size_t n)
{
    if (r->bad || r->n - r->pos < n) {
        r->bad = true;
        return NULL;
    }
    const void *at = r->p + r->pos;
    r->pos += n;
    return at;
}

#define GET(r, type, dst)                        \
    do {                                         \
        const void *at_ = take(r, sizeof(type)); \
        type v_ = 0;                             \
        if (at_)                                 \
            memcpy(&v_, at_, sizeof v_);         \
        dst = v_;                                \
    } while (0)

/* A string of at most max bytes, copied and NUL-terminated; NULL when it
 * runs past the end, holds a NUL or is not valid UTF-8. */
static char *get_str(rbuf *r, size_t max)
{
    uint32_t n;
    GET(r, uint32_t, n);
    const char *at = n <= max ? take(r, n) : NULL;
    if (!at || memchr(at, 0, n) || !sess_utf8_valid(at, n))
        return NULL;
    return strndup(at, n);
}

/* count ids, each in [0, n_vocab), into v */
static bool get_ids(rbuf *r, int32_t n_vocab, cf_tokens *v)
{
    uint32_t n;
    GET(r, uint32_t, n);
    const uint8_t *at = n <= (r->n - r->pos) / 4 ? take(r, (size_t)n * 4) : NULL;
    if (!at)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        int32_t id;
        memcpy(&id, at + 4 * (size_t)i, 4);
        if (id < 0 || id >= n_vocab || cf_tokens_push(v, id))
            return false;
    }
    return true;
}

/* Everything a file holds, checked, before it replaces the session. */
typedef struct loaded {
    bool remote;            /* saved by a remote session */
    bool other;             /* saved with another model (cf_session_params.any_model) */
    char *endpoint, *model; /* its server */
    uint32_t set_mask;
    int32_t n_ctx;
    cf_kv_type type_k, type_v;
    bool rotated;
    int64_t now;
    cf_sampler_params par;
    uint64_t seed;
    int32_t n_predict;
    uint8_t thinking, effort;
    const uint8_t *smp_state;
    uint32_t smp_len;
    char **stops;
    uint32_t n_stops;
    sess_msg *msgs;
    uint32_t n_msgs;
    sess_branch *branches;
    uint32_t n_branches, cur, next_branch;
    cf_tokens cache;
    const uint8_t *kv;
    uint64_t kv_len;
} loaded;

static void loaded_free(loaded *l)
{
    free(l->endpoint);
    free(l->model);
    for (uint32_t i = 0; l->stops && i < l->n_stops; i++)
        free(l->stops[i]);
    free(l->stops);
    for (uint32_t i = 0; l->msgs && i < l->n_msgs; i++)
        sess_msg_free(&l->msgs[i]);
    free(l->msgs);
    for (uint32_t k = 0; l->branches && k < l->n_branches; k++)
        sess_branch_free(&l->branches[k]);
    free(l->branches);
    cf_tokens_free(&l->cache);
}

static int damaged(const char *path, const char *what, cf_err *err)
{
    return cf_fail(err, "%s is damaged (%s); the session was not loaded", path, what);
}

/* The model record of a local file (name, path and pick malloc'ed; the
 * last two NULL before version 5). */
typedef struct model_rec {
    uint64_t fp, size;
    char *name, *path, *pick;
    uint32_t n_vocab;
} model_rec;

static bool get_model(rbuf *r, uint32_t version, model_rec *m)
{
    GET(r, uint64_t, m->fp);
    GET(r, uint64_t, m->size);
    m->name = get_str(r, 4096);
    if (version >= 5) {
        m->path = get_str(r, 4096);
        m->pick = get_str(r, 4096);
    }
    GET(r, uint32_t, m->n_vocab);
    return !r->bad && m->name && (version < 5 || (m->path && m->pick)) && m->n_vocab <= INT32_MAX;
}

static void model_rec_free(model_rec *m)
{
    free(m->name);
    free(m->path);
    free(m->pick);
}

/* The model a file wants, as a person finds it: "'NAME' (PATH, 'confab
 * models' name PICK)". */
static void wanted(const model_rec *m, char *buf, size_t n)
{
    char pick[4200] = "";
    if (m->pick && *m->pick)
        snprintf(pick, sizeof pick, ", 'confab models' name %s", m->pick);
    snprintf(buf, n, "'%s' (%s%s)", m->name, m->path && *m->path ? m->path : "path not recorded",
             pick);
}

/* The model record; a local session's must be its own model's (the
 * tokens and cache are that model's) unless the session takes any
 * model's files as their transcript (*other then says so); a remote
 * session takes only the transcript.  The file's vocabulary size into
 * *n_vocab. */
static int parse_model(rbuf *r, uint32_t version, const cf_session *s, const char *path,
                       uint32_t *n_vocab, bool *other, cf_err *err)
{
    model_rec m = {0};
    int rc = 0;
    const cf_gguf *g = s->model ? cf_model_gguf(s->model) : NULL;
    *other = false;
    if (!get_model(r, version, &m)) {
        rc = damaged(path, "bad model record", err);
    } else if (g && (m.fp != cf_gguf_fingerprint(g) || m.size != cf_gguf_file_size(g) ||
                     m.n_vocab != (uint32_t)cf_model_hparams(s->model)->n_vocab)) {
        char want[9000];
        wanted(&m, want, sizeof want);
        *other = true;
        if (!s->any_model)
            rc = cf_fail(err, "%s was saved with another model, %s, not this one (%s); -m %s "
                         "resumes it, or --session-any-model brings its transcript into this one",
                         path, want, s->model_path,
                         m.pick && *m.pick ? m.pick : m.path && *m.path ? m.path : m.name);
    }
    *n_vocab = m.n_vocab;
    model_rec_free(&m);
    return rc;
}

static bool parse_settings(rbuf *r, uint32_t version, loaded *l, cf_err *err)
{
    cf_sampler_params *p = &l->par;
    GET(r, float, p->temp);
    GET(r, int32_t, p->top_k);
    GET(r, float, p->top_p);
    GET(r, float, p->min_p);
    GET(r, float, p->typical_p);
    GET(r, float, p->repeat_penalty);
    GET(r, int32_t, p->repeat_last_n);
    GET(r, float, p->presence_penalty);
    GET(r, float, p->frequency_penalty);
    GET(r, int32_t, p->min_keep);
    GET(r, uint64_t, l->seed);
    GET(r, int32_t, l->n_predict);
    if (version >= 2) {
        GET(r, uint8_t, l->thinking);
        GET(r, uint8_t, l->effort);
    }
    GET(r, uint32_t, l->smp_len);
    l->smp_state = take(r, l->smp_len);
    if (version >= 4)
        GET(r, uint32_t, l->set_mask);
    return !r->bad && l->n_predict >= -1 && l->thinking <= THINK_OFF && l->effort <= EFFORT_HIGH &&
           cf_sampler_params_check(p, err) == 0;
}

/* A message's tool_calls and tool_call_id ("" saved for none), each
 * valid UTF-8; tool_calls a JSON list is the session's to check when it
 * renders. */
static bool get_tool_fields(rbuf *r, sess_msg *m)
{
    char *calls = get_str(r, SIZE_MAX), *id = calls ? get_str(r, SIZE_MAX) : NULL;
    if (!calls || !id) {
        free(calls);
        return false;
    }
    if (*calls)
        m->pub.tool_calls = calls;
    else
        free(calls);
    if (*id)
        m->pub.tool_call_id = id;
    else
        free(id);
    return true;
}

static bool parse_messages(rbuf *r, uint32_t version, int32_t n_vocab, sess_msg **msgs,
                           uint32_t *n_msgs)
{
    GET(r, uint32_t, *n_msgs);
    /* each message takes at least 14 bytes (version 1), 22 (version 2) */
    if (r->bad || *n_msgs > (r->n - r->pos) / (version >= 2 ? 22 : 14))
        return false;
    *msgs = calloc(*n_msgs + 1, sizeof **msgs);
    if (!*msgs)
        return false;
    for (uint32_t i = 0; i < *n_msgs; i++) {
        sess_msg *m = &(*msgs)[i];
        uint8_t role, flags;
        int32_t start;
        GET(r, uint8_t, role);
        GET(r, uint8_t, flags);
        GET(r, int32_t, start);
        char *text = get_str(r, SIZE_MAX), *reasoning = version >= 2 ? get_str(r, SIZE_MAX) : NULL;
        *m = (sess_msg){.pub = {.role = (cf_role)role, .content = text,
                                .cut = flags & F_CUT, .thinking_cut = flags & F_THINKING_CUT,
                                .length_cut = flags & F_LENGTH_CUT},
                        .start = start};
        if (flags & F_REASONING) {
            m->pub.reasoning = reasoning;
            reasoning = NULL;
        }
        bool assistant = role == CF_ROLE_ASSISTANT, ok = reasoning || version < 2 || m->pub.reasoning;
        free(reasoning);
        if (ok && (flags & F_TOOL) && !get_tool_fields(r, m))
            ok = false;
        if (!text || !ok || !get_ids(r, n_vocab, &m->ids) ||
            (version >= 2 && !get_ids(r, n_vocab, &m->rids)) ||
            role > (version >= 7 ? CF_ROLE_TOOL : CF_ROLE_ASSISTANT) ||
            flags > (version >= 7 ? 31 : version >= 5 ? 15 : version >= 2 ? 7 : F_CUT) ||
            (role == CF_ROLE_SYSTEM && i != 0) ||
            (!assistant && (m->ids.n || m->rids.n || (flags & ~(F_CUT | F_TOOL)))) ||
            ((flags & F_TOOL) && role != CF_ROLE_ASSISTANT && role != CF_ROLE_TOOL) ||
            start < -1 || (role != CF_ROLE_USER && start != -1))
            return false;
    }
    return true;
}

/* An older file's one branch, "main". */
static bool one_branch(loaded *l)
{
    if (!(l->branches = calloc(1, sizeof *l->branches)))
        return false;
    l->branches[0] = (sess_branch){.id = 1, .name = "main"};
    l->n_branches = 1;
    l->next_branch = 2;
    return true;
}

/* The branches (version 3 on), each but the current one with its
 * messages; ids distinct and below the next one, names distinct. */
static bool parse_branches(rbuf *r, uint32_t version, int32_t n_vocab, loaded *l)
{
    GET(r, uint32_t, l->n_branches);
    GET(r, uint32_t, l->cur);
    GET(r, uint32_t, l->next_branch);
    if (r->bad || l->n_branches < 1 || l->n_branches > MAX_BRANCHES || l->cur >= l->n_branches ||
        !(l->branches = calloc(l->n_branches, sizeof *l->branches)))
        return false;
    for (uint32_t k = 0; k < l->n_branches; k++) {
        sess_branch *b = &l->branches[k];
        GET(r, int32_t, b->id);
        char *name = get_str(r, sizeof b->name - 1);
        if (!name)
            return false;
        snprintf(b->name, sizeof b->name, "%s", name);
        free(name);
        uint32_t n = 0;
        if (b->id < 1 || (uint32_t)b->id >= l->next_branch ||
            (k != l->cur && !parse_messages(r, version, n_vocab, &b->msgs, &n)))
            return false;
        b->n_msgs = (int)n;
        for (uint32_t j = 0; j < k; j++)
            if (l->branches[j].id == b->id || (*b->name && !strcmp(l->branches[j].name, b->name)))
                return false;
        for (int i = 0; i < b->n_msgs; i++)
            if (b->msgs[i].start != -1)
                return false;
    }
    return true;
}

/* Parse and check the file's image into l. */
static int parse(const uint8_t *p, size_t n, const cf_session *s, const char *path, loaded *l,
                 cf_err *err)
{
    rbuf r = {p, n, 0, false};
    uint32_t version;
    if (n < sizeof MAGIC || memcmp(p, MAGIC, sizeof MAGIC) != 0)
        return cf_fail(err, "%s is not a confab session file", path);
    r.pos = sizeof MAGIC;
    GET(&r, uint32_t, version);
    uint64_t sum;
    if (r.bad || n < r.pos + 8)
        return damaged(path, "truncated", err);
    /* the checksum first: a flipped version is damage, not a newer file */
    memcpy(&sum, p + n - 8, 8);
    if (sum != sess_checksum(p, n - 8))
        return damaged(path, "truncated or corrupt: the checksum does not match", err);
    if (version < 1 || version > VERSION)
        return cf_fail(err, "%s is a session file of format version %u; this confab reads "
                       "versions 1 to %d", path, version, VERSION);
    r.n = n - 8;
    uint8_t engine = 0;
    if (version >= 4)
        GET(&r, uint8_t, engine);
    if (r.bad || engine > 1)
        return damaged(path, "bad engine record", err);
    /* a remote file holds no tokens (n_vocab 0 refuses any) */
    uint32_t n_vocab = 0, n_ctx = 1, type_k = 0, type_v = 0, kv_flags = 0;
    if ((l->remote = engine == 1)) {
        l->endpoint = get_str(&r, 4096);
        l->model = get_str(&r, 4096);
        if (!l->endpoint || !l->model)
            return damaged(path, "bad server record", err);
    } else {
        if (parse_model(&r, version, s, path, &n_vocab, &l->other, err))
            return -1;
        GET(&r, uint32_t, n_ctx);
        GET(&r, uint32_t, type_k);
        type_v = type_k;
        if (version >= 6) {
            GET(&r, uint32_t, type_v);
            GET(&r, uint32_t, kv_flags);
        }
    }
    GET(&r, int64_t, l->now);
    char *tmpl = get_str(&r, 4096);
    free(tmpl);
    if (r.bad || !tmpl || n_ctx < 1 || n_ctx > (1u << 24) || type_k > CF_KV_Q4_0 ||
        type_v > CF_KV_Q4_0 || kv_flags > 1)
        return damaged(path, "bad context record", err);
    l->n_ctx = (int32_t)n_ctx;
    l->type_k = (cf_kv_type)type_k;
    l->type_v = (cf_kv_type)type_v;
    l->rotated = kv_flags & 1;
    cf_err why = {0};
    if (!parse_settings(&r, version, l, &why))
        return damaged(path, why.msg[0] ? why.msg : "bad settings", err);
    GET(&r, uint32_t, l->n_stops);
    if (r.bad || l->n_stops > MAX_STOPS || !(l->stops = calloc(l->n_stops + 1, sizeof *l->stops)))
        return damaged(path, "bad stop strings", err);
    for (uint32_t i = 0; i < l->n_stops; i++)
        if (!(l->stops[i] = get_str(&r, 4096)) || !l->stops[i][0])
            return damaged(path, "bad stop string", err);
    if (!parse_messages(&r, version, (int32_t)n_vocab, &l->msgs, &l->n_msgs))
        return damaged(path, "bad message", err);
    if (version >= 3 ? !parse_branches(&r, version, (int32_t)n_vocab, l) : !one_branch(l))
        return damaged(path, version >= 3 ? "bad branch" : "out of memory", err);
    if (!get_ids(&r, (int32_t)n_vocab, &l->cache) || l->cache.n > n_ctx)
        return damaged(path, "bad token history", err);
    for (uint32_t i = 0, prev = 0; i < l->n_msgs; i++) {
        int start = l->msgs[i].start;
        if (start > (int)l->cache.n || (start >= 0 && start < (int)prev))
            return damaged(path, "bad turn boundaries", err);
        prev = start >= 0 ? (uint32_t)start : prev;
    }
    GET(&r, uint64_t, l->kv_len);
    l->kv = r.bad || l->kv_len > r.n - r.pos ? NULL : take(&r, (size_t)l->kv_len);
    if (!l->kv || r.pos != r.n || (l->remote && (l->kv_len || l->smp_len)))
        return damaged(path, "bad cache record", err);
    return 0;
}

/* The file mapped read-only (no copy: tens of MB come straight from the
 * page cache).  Saves replace files by renaming, so a mapped file is never
 * cut short under us by confab itself. */
static const uint8_t *map_file(const char *path, size_t *n, cf_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cf_fail(err, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    void *p = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        cf_fail(err, "cannot read %s: not a regular file", path);
    else if (st.st_size == 0)
        p = (void *)"";
    else if ((p = cf_map_file_now(fd, (size_t)st.st_size)) == MAP_FAILED) {
        cf_fail(err, "cannot read %s: %s", path, strerror(errno));
        p = NULL;
    }
    close(fd);
    *n = (size_t)st.st_size;
    return p;
}

/* Messages without their tokens and turn starts. */
static void text_only(sess_msg *msgs, int n)
{
    for (int i = 0; i < n; i++) {
        msgs[i].start = -1;
        cf_tokens_free(&msgs[i].ids);
        cf_tokens_free(&msgs[i].rids);
    }
}

static int load_file(cf_session *s, const char *path, cf_err *err)
{
    size_t n;
    const uint8_t *data = map_file(path, &n, err);
    if (!data)
        return -1;
    loaded l = {0};
    cf_ctx *ctx = NULL;
    cf_sampler *smp = NULL;
    int rc = -1;
    if (parse(data, n, s, path, &l, err))
        goto out;
    /* a local file of this model brings its cache and random state too;
     * any other the transcript and settings, rendered afresh next turn */
    bool whole = !l.remote && !s->remote && !l.other;
    cf_err why;
    if (whole) {
        /* the live context serves when the cells fit and the types agree */
        if (cf_ctx_kv_type_k(s->ctx) != l.type_k || cf_ctx_kv_type_v(s->ctx) != l.type_v ||
            cf_ctx_kv_rotated(s->ctx) != l.rotated || cf_ctx_n_ctx(s->ctx) < (int)l.cache.n) {
            cf_ctx_params cp = {.n_ctx = l.n_ctx, .n_threads = cf_ctx_n_threads(s->ctx),
                                .type_k = l.type_k, .type_v = l.type_v, .kv_no_rotate = !l.rotated};
            cf_ctx_gpu_asked(s->ctx, &cp.n_gpu_layers, &cp.gpu_device); /* as the live context */
            if (cf_ctx_new(s->model, &cp, &ctx, err))
                goto out;
            if (cf_ctx_kv_rotated(ctx) != l.rotated) {
                damaged(path, "the cache's rotation does not fit this model", err);
                goto out;
            }
        }
        if (l.kv_len != cf_ctx_kv_bytes(ctx ? ctx : s->ctx, (int)l.cache.n)) {
            damaged(path, "the cache size does not match the token history", err);
            goto out;
        }
    }
    if (!s->remote &&
        (cf_sampler_create(cf_model_hparams(s->model)->n_vocab, &l.par, l.seed, &smp, err) ||
         (whole && cf_sampler_state_load(smp, l.smp_state, l.smp_len, &why)))) {
        if (smp)
            damaged(path, why.msg, err);
        goto out;
    }
    /* every check passed: from here on nothing fails */
    sess_close_reply(s);
    if (ctx) {
        cf_ctx_free(s->ctx);
        s->ctx = ctx;
        ctx = NULL;
    }
    if (s->remote) {
        s->remote->par = l.par;
        s->remote->seed = l.seed;
    } else {
        if (whole)
            cf_ctx_kv_load(s->ctx, (int)l.cache.n, l.kv, l.kv_len, NULL);
        else
            cf_ctx_kv_truncate(s->ctx, 0, NULL);
        cf_sampler_free(s->smp);
        s->smp = smp;
        smp = NULL;
    }
    if (!whole) { /* text only: the tokens were another model's, or none */
        text_only(l.msgs, (int)l.n_msgs);
        for (uint32_t k = 0; k < l.n_branches; k++)
            text_only(l.branches[k].msgs, l.branches[k].n_msgs);
        cf_tokens_free(&l.cache);
    }
    s->set_mask = l.set_mask;
    s->n_predict = l.n_predict;
    s->thinking = l.thinking;
    s->effort = l.effort;
    s->now = l.now;
    for (size_t i = 0; i < s->n_stops; i++)
        free(s->stops[i]);
    free(s->stops);
    s->stops = l.stops;
    s->n_stops = l.n_stops;
    l.stops = NULL;
    while (s->n_msgs > 0)
        sess_pop_msg(s);
    free(s->msgs);
    s->msgs = l.msgs;
    s->n_msgs = s->cap_msgs = (int)l.n_msgs;
    l.msgs = NULL;
    sess_branches_free(s);
    s->branches = l.branches;
    s->n_branches = (int)l.n_branches;
    s->cur = (int)l.cur;
    s->next_branch = (int)l.next_branch;
    l.branches = NULL;
    cf_tokens_free(&s->cache);
    s->cache = l.cache;
    l.cache = (cf_tokens){0};
    s->have_logits = false;
    memset(&s->stats, 0, sizeof s->stats);
    s->dirty = false;
    rc = 0;
out:
    cf_sampler_free(smp);
    cf_ctx_free(ctx);
    loaded_free(&l);
    if (n > 0)
        munmap((void *)data, n);
    return rc;
}

int cf_session_file_origin(const char *path, cf_session_origin *o, cf_err *err)
{
    *o = (cf_session_origin){0};
    size_t n;
    const uint8_t *data = map_file(path, &n, err);
    if (!data)
        return cf_err_class(err, CF_E_SESSION);
    rbuf r = {data, n, sizeof MAGIC, false};
    uint32_t version = 0;
    uint8_t engine = 0;
    uint64_t sum = 0;
    model_rec m = {0};
    int rc = -1;
    if (n < sizeof MAGIC + 12 || memcmp(data, MAGIC, sizeof MAGIC) != 0) {
        cf_fail(err, "%s is not a confab session file", path);
        goto out;
    }
    memcpy(&sum, data + n - 8, 8);
    r.n = n - 8;
    GET(&r, uint32_t, version);
    if (version >= 4)
        GET(&r, uint8_t, engine);
    if (sum != sess_checksum(data, n - 8)) {
        damaged(path, "truncated or corrupt: the checksum does not match", err);
    } else if (version < 1 || version > VERSION) {
        cf_fail(err, "%s is a session file of format version %u; this confab reads versions 1 to "
                "%d", path, version, VERSION);
    } else if (engine == 1) {
        o->endpoint = get_str(&r, 4096);
        o->model = get_str(&r, 4096);
        rc = o->endpoint && o->model ? 0 : damaged(path, "bad server record", err);
    } else if (!get_model(&r, version, &m)) {
        damaged(path, "bad model record", err);
    } else {
        /* handed on: the name, and the path and pick when not empty */
        o->model = m.name;
        m.name = NULL;
        if (m.path && *m.path)
            o->path = m.path, m.path = NULL;
        if (m.pick && *m.pick)
            o->pick = m.pick, m.pick = NULL;
        rc = 0;
    }
out:
    model_rec_free(&m);
    if (rc < 0)
        cf_session_origin_free(o);
    if (n > 0)
        munmap((void *)data, n);
    return rc < 0 ? cf_err_class(err, CF_E_SESSION) : 0;
}

void cf_session_origin_free(cf_session_origin *o)
{
    free(o->endpoint);
    free(o->model);
    free(o->path);
    free(o->pick);
    *o = (cf_session_origin){0};
}

/* Every failure to save or load is of the session-file class. */
int cf_session_save(cf_session *s, const char *path, cf_err *err)
{
    return save_file(s, path, err) ? cf_err_class(err, CF_E_SESSION) : 0;
}

int cf_session_load(cf_session *s, const char *path, cf_err *err)
{
    return load_file(s, path, err) ? cf_err_class(err, CF_E_SESSION) : 0;
}
