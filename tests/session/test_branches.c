/* Branches: /regen and an edit keep the old path; switching keeps the
 * cache's common prefix and evaluates the rest, after which the chat goes
 * on exactly as one that never left the branch; names; save and load of
 * the tree; a failed edit changes nothing. */
#include "sess_util.h"

#define MODEL "models/stories260K-chatml.gguf"

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static cf_session *open_greedy(int n_ctx)
{
    cf_session *s = open_shared(MODEL, n_ctx, "Be brief.", 8);
    cf_err err;
    if (s)
        CHECK(cf_session_set(s, "temp", "0", &err) == 0);
    return s;
}

static int current(const cf_session *s, cf_branch_info *b)
{
    for (int k = 0; k < cf_session_n_branches(s); k++) {
        cf_session_branch(s, k, b);
        if (b->current)
            return k;
    }
    return -1;
}

/* The reply to an edit, streamed as after begin_reply. */
static void finish_reply(cf_session *s)
{
    const char *piece;
    cf_err err;
    while (cf_session_next(s, &piece, &err) == CF_NEXT_TOKEN)
        ;
    cf_session_end_reply(s, false);
}

static void test_regen_edit_switch(void)
{
    cf_session *s = open_greedy(512), *ref = open_greedy(512);
    if (!s || !ref)
        return;
    cf_err err;
    char a[256], b[256];
    exchange(s, "one", NULL, 0);
    exchange(s, "two", a, sizeof a);
    CHECK(cf_session_n_branches(s) == 1);

    /* regen: branch 2, the old reply stays on branch 1 */
    CHECK(cf_session_regen(s, &err) == 0);
    finish_reply(s);
    cf_branch_info bi;
    CHECK(cf_session_n_branches(s) == 2 && current(s, &bi) == 1 && bi.id == 2 &&
          same(bi.name, ""));
    CHECK(same(cf_session_branch_message(s, 0, 4)->content, a) &&
          cf_session_branch_message(s, 0, 5) == NULL);

    /* edit "two" on branch 2: branch 3 holds "deux", branch 2 keeps "two" */
    CHECK(cf_session_edit(s, 3, "deux", &err) == 0);
    finish_reply(s);
    CHECK(cf_session_n_branches(s) == 3 && current(s, &bi) == 2 && bi.id == 3);
    CHECK(same(cf_session_message(s, 3)->content, "deux") &&
          same(cf_session_branch_message(s, 1, 3)->content, "two"));
    CHECK(cf_session_edit(s, 2, "x", &err) != 0 && strstr(err.msg, "not one of yours"));
    CHECK(cf_session_n_branches(s) == 3);

    /* back to branch 1: the shared start is reused, the rest prefilled */
    int n_before, reused, prefilled;
    cf_session_tokens(s, &n_before);
    CHECK(cf_session_switch(s, "1", &reused, &prefilled, &err) == 0);
    int n_after;
    cf_session_tokens(s, &n_after);
    CHECKF(reused > 0 && prefilled > 0 && reused + prefilled == n_after,
           "reused %d + prefilled %d, cache %d", reused, prefilled, n_after);
    CHECK(same(cf_session_message(s, 3)->content, "two") &&
          same(cf_session_message(s, 4)->content, a));

    /* going on from there is what a chat that never left does */
    exchange(s, "three", a, sizeof a);
    exchange(ref, "one", NULL, 0);
    exchange(ref, "two", NULL, 0);
    exchange(ref, "three", b, sizeof b);
    CHECKF(same(a, b), "'%s' after switching, '%s' straight", a, b);
    int n1, n2;
    const int32_t *h1 = cf_session_tokens(s, &n1), *h2 = cf_session_tokens(ref, &n2);
    CHECK(n1 == n2 && memcmp(h1, h2, (size_t)n1 * sizeof *h1) == 0);
    /* the switch evaluated the branch's closing tokens, which the straight
     * chat evaluates with its next turn */
    CHECKF(cf_session_last_stats(s)->prompt_tokens <= cf_session_last_stats(ref)->prompt_tokens,
           "%d vs %d prefilled", cf_session_last_stats(s)->prompt_tokens,
           cf_session_last_stats(ref)->prompt_tokens);

    /* undo on this branch leaves the others */
    CHECK(cf_session_undo(s, &err) == 0);
    CHECK(cf_session_switch(s, "3", &reused, &prefilled, &err) == 0 &&
          same(cf_session_message(s, 3)->content, "deux"));
    CHECK(cf_session_switch(s, "3", &reused, &prefilled, &err) != 0 &&
          strstr(err.msg, "current one"));
    CHECK(cf_session_switch(s, "9", &reused, &prefilled, &err) != 0 &&
          strstr(err.msg, "no branch '9'"));
    cf_session_free(s);
    cf_session_free(ref);
}

static void test_names_and_files(void)
{
    cf_session *s = open_greedy(512);
    if (!s)
        return;
    cf_err err;
    exchange(s, "one", NULL, 0);
    CHECK(cf_session_fork(s, "42", &err) != 0 && strstr(err.msg, "only digits"));
    CHECK(cf_session_fork(s, "a b", &err) != 0 && strstr(err.msg, "no spaces"));
    CHECK(cf_session_fork(s, "main", &err) != 0 && strstr(err.msg, "already"));
    CHECK(cf_session_fork(s, "side", &err) == 0);
    exchange(s, "two", NULL, 0);
    int reused, prefilled;
    CHECK(cf_session_switch(s, "main", &reused, &prefilled, &err) == 0 &&
          cf_session_n_messages(s) == 3);
    CHECK(cf_session_switch(s, "side", &reused, &prefilled, &err) == 0 &&
          cf_session_n_messages(s) == 5 && reused > 0 && prefilled > 0);

    char path[] = "/tmp/confab-branches-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    CHECKF(cf_session_save(s, path, &err) == 0, "%s", err.msg);
    cf_session *t = open_greedy(512);
    CHECKF(t && cf_session_load(t, path, &err) == 0, "%s", err.msg);
    cf_branch_info b;
    CHECK(cf_session_n_branches(t) == 2 && current(t, &b) == 1 && same(b.name, "side") &&
          b.n_messages == 5);
    cf_session_branch(t, 0, &b);
    CHECK(b.id == 1 && same(b.name, "main") && b.n_messages == 3 &&
          same(cf_session_branch_message(t, 0, 1)->content, "one"));
    CHECK(cf_session_switch(t, "main", &reused, &prefilled, &err) == 0 &&
          cf_session_n_messages(t) == 3 && prefilled == 0);
    CHECK(cf_session_fork(t, "side", &err) != 0); /* the loaded names are taken */
    cf_session_free(t);
    unlink(path);

    /* an edit that cannot be answered (it does not fit) changes nothing */
    char big[4000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    for (size_t i = 4; i < sizeof big - 1; i += 5)
        big[i] = ' ';
    CHECK(cf_session_edit(s, 1, big, &err) != 0 && strstr(err.msg, "context"));
    CHECK(cf_session_n_branches(s) == 2 && current(s, &b) == 1 && b.n_messages == 5 &&
          same(cf_session_message(s, 1)->content, "one"));
    CHECK(exchange(s, "three", NULL, 0) >= 0);
    cf_session_free(s);
}

int main(void)
{
    if (!shared_dir())
        return TEST_SKIP;
    test_regen_edit_switch();
    test_names_and_files();
    return test_summary("session-branches");
}
