/* Session files:
 *   - saved after 10 turns and loaded in a new process, the next reply is
 *     bit-identical to the uninterrupted session's (every step's logits,
 *     every sampled token): same cache bytes, same random state;
 *   - a file truncated at every offset, or with any one byte flipped, gives
 *     an error and leaves the live session as it was;
 *   - another model, another format version, not a session file: one
 *     clear message each;
 *   - a save killed (SIGKILL) in the middle of writing leaves the previous
 *     file intact and loadable.
 * The child processes are this program run again with a mode argument. */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "sess_util.h"
#include "session_internal.h"

static const char *const BIG_MODEL = "models/qwen2.Q8_0.gguf";
static const char *const SMALL_MODEL = "models/stories260K-chatml.gguf";

static const char *const msgs[] = {
    "Hi!", "What is your name?", "Tell me about the sea.", "Is it deep?", "How deep?",
    "What lives there?", "Whales?", "And fish?", "Thanks.", "One more thing.", "Go on, please.",
};

static cf_session *big_session(void)
{
    return open_shared(BIG_MODEL, 1024, "You are terse.", 12);
}

/* The reply to msgs[10] as bytes: each step's logits, then the text. */
static size_t record_reply(cf_session *s, uint8_t **out)
{
    const size_t V = (size_t)cf_model_hparams(cf_session_model(s))->n_vocab;
    size_t cap = 32 * (V * 4 + 64), n = 0;
    uint8_t *buf = calloc(1, cap);
    cf_err err;
    const char *piece;
    int rc = cf_session_begin_reply(s, msgs[10], &err) == 0 ? CF_NEXT_TOKEN : -1;
    CHECKF(rc == CF_NEXT_TOKEN, "%s", err.msg);
    while (rc == CF_NEXT_TOKEN) {
        const float *lg = cf_session_logits(s);
        if (lg && n + V * 4 <= cap) {
            memcpy(buf + n, lg, V * 4);
            n += V * 4;
        }
        rc = cf_session_next(s, &piece, &err);
        if (rc == CF_NEXT_TOKEN && n + strlen(piece) <= cap) {
            memcpy(buf + n, piece, strlen(piece));
            n += strlen(piece);
        }
    }
    cf_session_end_reply(s, false);
    *out = buf;
    return n;
}

/* A small session: a short exchange, an f16 cache. */
static cf_session *small_session(void)
{
    cf_session_params p = {.model_path = shared_path(SMALL_MODEL), .n_ctx = 64, .n_threads = 1,
                           .type_k = CF_KV_F16, .type_v = CF_KV_F16};
    cf_session *s;
    cf_err err;
    if (cf_session_new(&p, &s, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return NULL;
    }
    CHECK(cf_session_set(s, "seed", "7", &err) == 0 &&
          cf_session_set(s, "n-predict", "2", &err) == 0);
    return s;
}

static int child_continue(const char *file, const char *out)
{
    cf_session *s = big_session();
    cf_err err;
    if (!s || cf_session_load(s, file, &err) != 0) {
        fprintf(stderr, "child: %s\n", s ? err.msg : "no session");
        return 1;
    }
    uint8_t *rec;
    size_t n = record_reply(s, &rec);
    FILE *f = fopen(out, "wb");
    int rc = !f || fwrite(rec, 1, n, f) != n;
    if (f)
        fclose(f);
    free(rec);
    cf_session_free(s);
    return rc;
}

static int child_save_slowly(const char *file)
{
    cf_session *s = small_session();
    cf_err err;
    if (!s || cf_session_load(s, file, &err) != 0)
        return 1;
    exchange(s, "More", NULL, 0);
    setenv("CONFAB_TEST_SAVE_PAUSE_MS", "20000", 1);
    cf_session_save(s, file, &err);
    return 0; /* not reached when the test kills it */
}

static pid_t spawn(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    return pid;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    cf_err err;
    return (uint8_t *)sess_read_file(path, n, &err);
}

static void spill(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(p, 1, n, f) == n);
    if (f)
        fclose(f);
}

static void test_resume_exact(void)
{
    cf_session *s = big_session();
    if (!s)
        return;
    char file[64], out[64];
    temp_path(file, sizeof file, "sess");
    temp_path(out, sizeof out, "reply");
    cf_err err;
    for (int k = 0; k < 10; k++)
        exchange(s, msgs[k], NULL, 0);
    CHECK(cf_session_dirty(s));
    CHECKF(cf_session_save(s, file, &err) == 0, "%s", err.msg);
    CHECK(!cf_session_dirty(s));
    uint8_t *mine;
    size_t n_mine = record_reply(s, &mine);
    char *argv[] = {"test_sessfile", "continue", file, out, NULL};
    int status = -1;
    waitpid(spawn(argv), &status, 0);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    size_t n_theirs = 0;
    uint8_t *theirs = slurp(out, &n_theirs);
    CHECKF(theirs && n_theirs == n_mine && memcmp(mine, theirs, n_mine) == 0,
           "the reply after loading in a new process differs (%zu vs %zu bytes)", n_theirs, n_mine);
    const size_t V = (size_t)cf_model_hparams(cf_session_model(s))->n_vocab;
    CHECKF(n_mine > 12 * V * 4, "too little recorded: %zu bytes", n_mine);
    free(mine);
    free(theirs);
    unlink(file);
    unlink(out);
    cf_session_free(s);
}

static bool same_state(const cf_session *s, int n_msgs, const int32_t *h, int n)
{
    int m;
    const int32_t *now = cf_session_tokens(s, &m);
    return cf_session_n_messages(s) == n_msgs && m == n &&
           memcmp(now, h, (size_t)n * sizeof *h) == 0;
}

static void test_damage(void)
{
    cf_session *a = small_session(), *live = small_session();
    if (!a || !live) {
        cf_session_free(a);
        cf_session_free(live);
        return;
    }
    /* the damaged copies go to memory when it can: there are many */
    char good[64], bad[64];
    temp_path(good, sizeof good, "good");
    snprintf(bad, sizeof bad, "%s", access("/dev/shm", W_OK) == 0 ? "/dev/shm/confab-bad-XXXXXX"
                                                                   : "/tmp/confab-bad-XXXXXX");
    close(mkstemp(bad));
    cf_err err;
    exchange(a, "Hi", NULL, 0);
    CHECK(cf_session_save(a, good, &err) == 0);
    exchange(live, "Something else", NULL, 0);
    int n, n_msgs = cf_session_n_messages(live);
    int32_t *h = history(live, &n);
    size_t size;
    uint8_t *img = slurp(good, &size);
    if (!img) {
        CHECK(0);
        return;
    }
    int truncated_ok = 0, flipped_ok = 0;
    for (size_t off = 0; off < size; off++) {
        spill(bad, img, off);
        truncated_ok += cf_session_load(live, bad, &err) != 0 && same_state(live, n_msgs, h, n);
    }
    for (size_t i = 0; i < size; i++) {
        img[i] ^= 0xff;
        spill(bad, img, size);
        img[i] ^= 0xff;
        flipped_ok += cf_session_load(live, bad, &err) != 0 && same_state(live, n_msgs, h, n);
    }
    fprintf(stderr, "a %zu-byte session file: %d of %zu truncations and %d of %zu flipped bytes "
            "refused\n", size, truncated_ok, size, flipped_ok, size);
    CHECK(truncated_ok == (int)size && flipped_ok == (int)size);
    /* one clear message each */
    spill(bad, img, size - 1);
    CHECK(cf_session_load(live, bad, &err) != 0 && strstr(err.msg, "damaged") &&
          strstr(err.msg, "truncated"));
    CHECK(cf_session_load(live, shared_path(SMALL_MODEL), &err) != 0 &&
          strstr(err.msg, "not a confab session file"));
    CHECK(cf_session_load(live, "/nonexistent/x.session", &err) != 0 &&
          strstr(err.msg, "cannot open"));
    /* a newer format says so; four bytes flipped in the header are damage */
    uint64_t sum;
    memcpy(&sum, img + size - 8, 8);
    img[8] = 8;
    uint64_t resum = sess_checksum(img, size - 8);
    memcpy(img + size - 8, &resum, 8);
    spill(bad, img, size);
    CHECKF(cf_session_load(live, bad, &err) != 0 && strstr(err.msg, "version 8"), "%s", err.msg);
    img[8] = 7;
    memcpy(img + size - 8, &sum, 8);
    for (int i = 8; i < 12; i++)
        img[i] ^= 0xff;
    spill(bad, img, size);
    CHECKF(cf_session_load(live, bad, &err) != 0 && strstr(err.msg, "is damaged"), "%s", err.msg);
    for (int i = 8; i < 12; i++)
        img[i] ^= 0xff;
    /* another model's file is refused, naming the model it wants and the
     * way to bring its transcript anyway, which then loads as text */
    cf_session *other = open_shared("models/stories260K-llama2chat.gguf", 64, NULL, 2);
    CHECKF(other && cf_session_load(other, good, &err) != 0 && strstr(err.msg, "another model") &&
               strstr(err.msg, "/stories260K-chatml.gguf") && strstr(err.msg, "--session-any-model"),
           "%s", err.msg);
    cf_session_free(other);
    cf_session_params ap = {.model_path = shared_path("models/stories260K-llama2chat.gguf"),
                            .n_ctx = 64, .n_threads = 1, .any_model = true};
    if (cf_session_new(&ap, &other, &err) == 0) {
        int nt;
        CHECKF(cf_session_load(other, good, &err) == 0, "%s", err.msg);
        cf_session_tokens(other, &nt);
        CHECK(cf_session_n_messages(other) == 2 && nt == 0);
        cf_session_free(other);
    }
    /* and a good file loads and goes on */
    CHECK(cf_session_load(live, good, &err) == 0 && cf_session_n_messages(live) == 2);
    CHECK(exchange(live, "Again", NULL, 0) == CF_STOP_N_PREDICT);
    int m;
    cf_session_tokens(live, &m);
    CHECK(m > n / 2);
    free(img);
    free(h);
    unlink(good);
    unlink(bad);
    cf_session_free(a);
    cf_session_free(live);
}

/* Temp files a save of path left (path.tmp-XXXXXX) holding some bytes;
 * removed when remove is set. */
static int temps(const char *path, bool remove)
{
    char dir[64], prefix[64];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    snprintf(prefix, sizeof prefix, "%s.tmp-", strrchr(path, '/') + 1);
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            char full[600];
            struct stat st;
            snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
            n += stat(full, &st) == 0 && st.st_size > 0;
            if (remove)
                unlink(full);
        }
    if (d)
        closedir(d);
    return n;
}

static void test_kill_during_save(void)
{
    cf_session *s = small_session();
    if (!s)
        return;
    char file[64];
    temp_path(file, sizeof file, "killed");
    cf_err err;
    exchange(s, "Hi", NULL, 0);
    CHECK(cf_session_save(s, file, &err) == 0);
    size_t n0, n1;
    uint8_t *before = slurp(file, &n0);
    char *argv[] = {"test_sessfile", "save-slowly", file, NULL};
    pid_t pid = spawn(argv);
    /* wait until the child is halfway through writing its temp file */
    int half_written = 0;
    for (int i = 0; i < 400 && !half_written; i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
        half_written = temps(file, false);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    CHECKF(half_written && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
           "the save was not caught halfway (status %d)", status);
    uint8_t *after = slurp(file, &n1);
    CHECK(after && n1 == n0 && memcmp(before, after, n0) == 0);
    CHECK(cf_session_load(s, file, &err) == 0 && cf_session_n_messages(s) == 2);
    CHECK(temps(file, true) == 1);
    free(before);
    free(after);
    unlink(file);
    cf_session_free(s);
}

/* Files of versions 2 (before branches) and 3 (before remote sessions:
 * no engine byte, no given settings) load whole: messages, branches,
 * settings, cache. */
static void test_old_version(const char *name, int n_branches)
{
    const char *src = getenv("CONFAB_SRC");
    char v2[4096], buf[64];
    cf_session_origin org;
    snprintf(v2, sizeof v2, "%s/tests/session/%s", src ? src : ".", name);
    cf_err err;
    CHECK(cf_session_file_origin(v2, &org, &err) == 0 && !org.endpoint && org.model && !org.path);
    cf_session_origin_free(&org);
    cf_session *s = open_shared(SMALL_MODEL, 256, NULL, 4);
    if (!s)
        return;
    CHECKF(cf_session_load(s, v2, &err) == 0, "%s", err.msg);
    CHECK(cf_session_n_messages(s) == 2 && !strcmp(cf_session_message(s, 0)->content, "Hi."));
    CHECK(!strcmp(cf_session_get(s, "temp", buf, sizeof buf), "0.5") &&
          !strcmp(cf_session_get(s, "top-k", buf, sizeof buf), "7"));
    CHECK(cf_session_setting_is_default(s, "temp"));
    CHECKF(cf_session_n_branches(s) == n_branches, "%s: %d branches", name,
           cf_session_n_branches(s));
    char *text;
    int n, n_tokens, n_cached;
    cf_session_tokens(s, &n);
    CHECK(cf_session_prompt_text(s, "Again.", &text, &n_tokens, &n_cached, &err) == 0);
    CHECKF(n > 0 && n_cached == n, "%d of the loaded %d tokens agree", n_cached, n);
    free(text);
    CHECK(exchange(s, "Again.", NULL, 0) == CF_STOP_N_PREDICT);
    CHECK(cf_session_last_stats(s)->prompt_tokens == n_tokens - n);
    cf_session_free(s);
}

/* A new system prompt rewinds the cache; a message that then does not fit
 * fails after the turns' starts were found in the new rendering, past the
 * cache: a save must still give a file that loads (it gave one refused as
 * "bad turn boundaries"; fuzz_session found it). */
static void test_save_after_failed_turn(void)
{
    cf_session *s = open_shared(SMALL_MODEL, 128, NULL, 4);
    if (!s)
        return;
    char file[64], big[2000] = "";
    temp_path(file, sizeof file, "failed-turn");
    for (int i = 0; i < 300; i++)
        strcat(big, "word ");
    cf_err err;
    exchange(s, "Hi.", NULL, 0);
    exchange(s, "Tell me more.", NULL, 0);
    CHECK(cf_session_set_system(s, "Be brief.", &err) == 0);
    CHECK(cf_session_begin_reply(s, big, &err) != 0 && err.code == CF_E_CONTEXT);
    CHECKF(cf_session_save(s, file, &err) == 0, "%s", err.msg);
    CHECKF(cf_session_load(s, file, &err) == 0, "%s", err.msg);
    CHECK(cf_session_n_messages(s) == 5);
    CHECK(exchange(s, "And then?", NULL, 0) >= 0);
    unlink(file);
    cf_session_free(s);
}

/* A file system that maps no files (CONFAB_TEST_SAVE_NO_MAP plays one):
 * the save is built in memory and written, byte for byte the file a
 * mapped save writes, and it loads. */
static void test_save_unmapped(void)
{
    cf_session *s = small_session();
    if (!s)
        return;
    char mapped[64], written[64];
    temp_path(mapped, sizeof mapped, "mapped");
    temp_path(written, sizeof written, "written");
    cf_err err;
    exchange(s, "Hi", NULL, 0);
    CHECKF(cf_session_save(s, mapped, &err) == 0, "%s", err.msg);
    setenv("CONFAB_TEST_SAVE_NO_MAP", "1", 1);
    CHECKF(cf_session_save(s, written, &err) == 0, "%s", err.msg);
    unsetenv("CONFAB_TEST_SAVE_NO_MAP");
    size_t n0 = 0, n1 = 0;
    uint8_t *a = slurp(mapped, &n0), *b = slurp(written, &n1);
    CHECK(a && b && n0 == n1 && memcmp(a, b, n0) == 0);
    CHECKF(cf_session_load(s, written, &err) == 0, "%s", err.msg);
    CHECK(cf_session_n_messages(s) == 2 && temps(written, true) == 0);
    free(a);
    free(b);
    unlink(mapped);
    unlink(written);
    cf_session_free(s);
}

/* A q8_0 / q4_0 cache (rotated where the heads allow) is saved with its
 * types, and a session of another cache type loads it as it is: the reply
 * after loading is exactly the one the saving session gives. */
static void test_quantized_cache(void)
{
    cf_session_params p = {.model_path = shared_path(BIG_MODEL), .n_ctx = 256, .n_threads = 1,
                           .type_k = CF_KV_Q8_0, .type_v = CF_KV_Q4_0};
    cf_session *s, *t;
    cf_err err;
    if (cf_session_new(&p, &s, &err) != 0) {
        CHECKF(0, "%s", err.msg);
        return;
    }
    p.type_k = p.type_v = CF_KV_F16;
    CHECKF(cf_session_new(&p, &t, &err) == 0, "%s", err.msg);
    CHECK(cf_session_set(s, "seed", "7", &err) == 0 && cf_session_set(s, "n-predict", "6", &err) == 0);
    exchange(s, msgs[0], NULL, 0);
    char path[64];
    snprintf(path, sizeof path, "/tmp/confab-kvq-%d.session", (int)getpid());
    CHECKF(cf_session_save(s, path, &err) == 0, "%s", err.msg);
    CHECKF(cf_session_load(t, path, &err) == 0, "%s", err.msg);
    uint8_t *a, *b;
    size_t na = record_reply(s, &a), nb = record_reply(t, &b);
    CHECKF(na == nb && na > 0 && memcmp(a, b, na) == 0, "q8_0/q4_0 cache: the reply after loading differs");
    free(a);
    free(b);
    unlink(path);
    cf_session_free(s);
    cf_session_free(t);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "continue") == 0)
        return child_continue(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "save-slowly") == 0)
        return child_save_slowly(argv[2]);
    if (!shared_dir())
        return TEST_SKIP;
    test_resume_exact();
    test_damage();
    test_kill_during_save();
    test_old_version("v2.session", 1);
    test_old_version("v3.session", 2);
    test_save_after_failed_turn();
    test_save_unmapped();
    test_quantized_cache();
    return test_summary("session-file");
}
