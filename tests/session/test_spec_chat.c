/* Speculative decoding in a chat: a conversation with a draft model or
 * with lookup is the same conversation as without, turn by turn (replies,
 * token history), through regen, undo, a stop string that ends a reply in
 * the middle of a step, a context shift and a saved and loaded session,
 * greedy and sampled with a seed; recurrent models too. */
#include "sess_util.h"

typedef struct variant {
    const char *model, *draft; /* draft NULL and lookup false: plain */
    bool lookup;
} variant;

static int string_stops; /* replies a stop string ended, speculatively */

static cf_session *open_variant(const variant *v, bool spec, const char *temp)
{
    cf_spec_params sp;
    cf_spec_params_default(&sp);
    sp.p_min = 0.0f; /* random weights are never confident */
    sp.draft_max = 6;
    char model[4096], draft[4096];
    snprintf(model, sizeof model, "%s", shared_path(v->model));
    snprintf(draft, sizeof draft, "%s", v->draft ? shared_path(v->draft) : "");
    cf_session_params p = {.model_path = model, .n_ctx = 200, .n_threads = 1,
                           .draft_model = spec && v->draft ? draft : NULL, .lookup = spec && v->lookup,
                           .spec = &sp};
    cf_session *s;
    cf_err err;
    if (cf_session_new(&p, &s, &err) != 0) {
        CHECKF(0, "%s: %s", v->model, err.msg);
        return NULL;
    }
    CHECK(cf_session_set(s, "seed", "11", &err) == 0 && cf_session_set(s, "n-predict", "30", &err) == 0 &&
          cf_session_set(s, "temp", temp, &err) == 0);
    return s;
}

/* Both sessions' last replies and histories agree. */
static void same(cf_session *a, cf_session *b, const char *ta, const char *tb, const char *what)
{
    int na, nb;
    int32_t *ha = history(a, &na), *hb = history(b, &nb);
    CHECKF(!strcmp(ta, tb), "%s: replies differ:\n  plain: %s\n  spec:  %s", what, ta, tb);
    CHECKF(na == nb && !memcmp(ha, hb, (size_t)na * sizeof *ha), "%s: histories differ (%d, %d tokens)", what, na,
           nb);
    free(ha);
    free(hb);
}

static void conversation(const variant *v, const char *temp)
{
    cf_session *a = open_variant(v, false, temp), *b = open_variant(v, true, temp);
    cf_err err;
    char ta[4096], tb[4096], what[160];
    if (!a || !b)
        goto out;
    static const char *const msgs[] = {"Tell me a story about a dog.", "And then what happened?",
                                       "What did the cat say?", "Tell me more.", "How did it end?",
                                       "Once more, please."};
    int passes = 0, drafted = 0;
    for (int i = 0; i < 6; i++) {
        snprintf(what, sizeof what, "%s/%s temp %s turn %d", v->model, v->lookup ? "lookup" : v->draft, temp, i);
        exchange(a, msgs[i], ta, sizeof ta);
        exchange(b, msgs[i], tb, sizeof tb);
        same(a, b, ta, tb, what);
        passes += cf_session_last_stats(b)->spec_passes;
        CHECK(cf_session_last_stats(a)->stop == cf_session_last_stats(b)->stop);
        string_stops += cf_session_last_stats(b)->stop == CF_STOP_STRING;
        drafted += cf_session_last_stats(b)->drafted;
        if (i == 1) { /* regen, then undo */
            CHECK(cf_session_regen(a, &err) == 0 && cf_session_regen(b, &err) == 0);
            const char *piece;
            ta[0] = tb[0] = '\0';
            while (cf_session_next(a, &piece, &err) == CF_NEXT_TOKEN)
                strncat(ta, piece, sizeof ta - strlen(ta) - 1);
            while (cf_session_next(b, &piece, &err) == CF_NEXT_TOKEN)
                strncat(tb, piece, sizeof tb - strlen(tb) - 1);
            cf_session_end_reply(a, false);
            cf_session_end_reply(b, false);
            same(a, b, ta, tb, "regen");
            CHECK(cf_session_undo(a, &err) == 0 && cf_session_undo(b, &err) == 0);
            same(a, b, "", "", "undo");
        }
        if (i == 2) { /* a stop string ends the next reply inside a step */
            const char *stop[] = {"e"};
            CHECK(cf_session_set_stops(a, stop, 1, &err) == 0 && cf_session_set_stops(b, stop, 1, &err) == 0);
        }
        if (i == 3) {
            CHECK(cf_session_set_stops(a, NULL, 0, &err) == 0 && cf_session_set_stops(b, NULL, 0, &err) == 0);
            char pa[64], pb[64];
            snprintf(pa, sizeof pa, "/tmp/confab-spec-a-%d.session", (int)getpid());
            snprintf(pb, sizeof pb, "/tmp/confab-spec-b-%d.session", (int)getpid());
            CHECKF(cf_session_save(a, pa, &err) == 0 && cf_session_save(b, pb, &err) == 0, "save: %s", err.msg);
            CHECKF(cf_session_load(a, pa, &err) == 0 && cf_session_load(b, pb, &err) == 0, "load: %s", err.msg);
            unlink(pa);
            unlink(pb);
        }
    }
    printf("%-24s %-24s temp %s: %d guesses, %d passes\n", v->model, v->lookup ? "lookup" : v->draft, temp,
           drafted, passes);
    CHECK(passes > 0);
out:
    cf_session_free(a);
    cf_session_free(b);
}

int main(void)
{
    if (!shared_dir()) {
        printf("no ../shared: skipped\n");
        return TEST_SKIP;
    }
    const variant vs[] = {
        {"models/stories260K-chatml.gguf", "models/stories260K-chatml.gguf", false},
        {"models/stories260K-chatml.gguf", NULL, true},
        {"models/qwen35.Q8_0.gguf", "models/qwen35.Q8_0.gguf", false},
        {"models/lfm2.Q8_0.gguf", NULL, true},
    };
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        conversation(&vs[i], "0");
        conversation(&vs[i], "0.8");
    }
    printf("%d replies ended by the stop string\n", string_stops);
    CHECK(string_stops > 0);
    /* one error line for a draft of another vocabulary, and for both ways */
    cf_session_params p = {.model_path = shared_path("models/stories260K.gguf"), .n_ctx = 64,
                           .draft_model = shared_path("models/llama-spm.Q8_0.gguf")};
    cf_session *s = NULL;
    cf_err err;
    CHECK(cf_session_new(&p, &s, &err) != 0 && !s && strstr(err.msg, "vocabulary") && !strchr(err.msg, '\n'));
    p.draft_model = shared_path("models/stories260K.gguf");
    p.lookup = true;
    CHECK(cf_session_new(&p, &s, &err) != 0 && !s && strstr(err.msg, "choose one"));
    printf("%d checks, %d failed\n", harness_checks, harness_failures);
    return harness_failures ? 1 : 0;
}
