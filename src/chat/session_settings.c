/* Settings by name, as /set and the command line spell them: the
 * sampler's, the seed and n-predict.  A bad name or value changes nothing. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

typedef enum { S_FLOAT, S_INT, S_SEED, S_N_PREDICT } setting_kind;

typedef struct setting {
    const char *name;
    setting_kind kind;
    size_t off; /* into cf_sampler_params (S_FLOAT, S_INT) */
    double lo, hi;
} setting;

static const setting settings[] = {
    {"temp", S_FLOAT, offsetof(cf_sampler_params, temp), 0, 100},
    {"top-k", S_INT, offsetof(cf_sampler_params, top_k), 0, 1000000},
    {"top-p", S_FLOAT, offsetof(cf_sampler_params, top_p), 0, 1},
    {"min-p", S_FLOAT, offsetof(cf_sampler_params, min_p), 0, 1},
    {"typical", S_FLOAT, offsetof(cf_sampler_params, typical_p), 0, 1},
    {"repeat-penalty", S_FLOAT, offsetof(cf_sampler_params, repeat_penalty), 0, 100},
    {"repeat-last-n", S_INT, offsetof(cf_sampler_params, repeat_last_n), 0, CF_SAMPLER_MAX_LAST_N},
    {"presence-penalty", S_FLOAT, offsetof(cf_sampler_params, presence_penalty), -2, 2},
    {"frequency-penalty", S_FLOAT, offsetof(cf_sampler_params, frequency_penalty), -2, 2},
    {"seed", S_SEED, 0, 0, 0},
    {"n-predict", S_N_PREDICT, 0, -1, 1000000000},
};
#define N_SETTINGS (sizeof settings / sizeof settings[0])

const char *const *cf_session_setting_names(void)
{
    static const char *names[N_SETTINGS + 1];
    for (size_t i = 0; i < N_SETTINGS; i++)
        names[i] = settings[i].name;
    return names;
}

static const setting *find(const char *name)
{
    for (size_t i = 0; i < N_SETTINGS; i++)
        if (strcmp(settings[i].name, name) == 0)
            return &settings[i];
    return NULL;
}

int sess_sampler_reset(cf_session *s, const cf_sampler_params *p, uint64_t seed, cf_err *err)
{
    cf_sampler *smp;
    if (cf_sampler_create(cf_model_hparams(s->model)->n_vocab, p, seed, &smp, err))
        return -1;
    cf_sampler_free(s->smp);
    s->smp = smp;
    return 0;
}

static int set_seed(cf_session *s, const char *value, cf_err *err)
{
    uint64_t seed = CF_SAMPLER_SEED_RANDOM;
    /* "random" or -1 (llama.cpp's spelling) draws a seed */
    if (strcmp(value, "random") != 0 && strcmp(value, "-1") != 0) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (!*value || *end || errno || value[0] == '-' || v >= CF_SAMPLER_SEED_RANDOM)
            return cf_fail_as(err, CF_E_USAGE,
                              "seed: '%s' is not a seed (valid: 0 to %llu, or random / -1)", value,
                              (unsigned long long)CF_SAMPLER_SEED_RANDOM - 1);
        seed = v;
    }
    if (sess_sampler_reset(s, cf_sampler_get_params(s->smp), seed, err))
        return -1;
    /* the new sampler's penalties see what the old one saw */
    for (size_t i = 0; i < s->cache.n; i++)
        cf_sampler_accept(s->smp, s->cache.ids[i]);
    if (s->reply.active && s->reply.pending >= 0)
        cf_sampler_accept(s->smp, s->reply.pending);
    return 0;
}

int cf_session_set(cf_session *s, const char *name, const char *value, cf_err *err)
{
    const setting *st = find(name);
    if (!st) {
        char list[256] = "";
        for (size_t i = 0; i < N_SETTINGS; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     settings[i].name);
        return cf_fail_as(err, CF_E_USAGE, "unknown setting '%s' (settings: %s)", name, list);
    }
    if (st->kind == S_SEED) {
        if (set_seed(s, value, err))
            return -1;
        s->dirty = true;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    bool integral = st->kind != S_FLOAT;
    if (!*value || *end || errno || !isfinite(v) || (integral && v != floor(v)) || v < st->lo ||
        v > st->hi)
        return cf_fail_as(err, CF_E_USAGE, "%s: '%s' is not %s from %g to %g", name, value,
                       integral ? "a whole number" : "a number", st->lo, st->hi);
    if (st->kind == S_N_PREDICT) {
        s->n_predict = (int)v;
        s->dirty = true;
        return 0;
    }
    cf_sampler_params p = *cf_sampler_get_params(s->smp);
    if (st->kind == S_FLOAT)
        *(float *)((char *)&p + st->off) = (float)v;
    else
        *(int32_t *)((char *)&p + st->off) = (int32_t)v;
    if (cf_sampler_params_check(&p, err) || cf_sampler_set_params(s->smp, &p, err))
        return -1;
    s->dirty = true;
    return 0;
}

const char *cf_session_get(const cf_session *s, const char *name, char *buf, size_t n)
{
    const setting *st = find(name);
    if (!st)
        return NULL;
    const cf_sampler_params *p = cf_sampler_get_params(s->smp);
    switch (st->kind) {
    case S_FLOAT:
        snprintf(buf, n, "%g", (double)*(const float *)((const char *)p + st->off));
        break;
    case S_INT:
        snprintf(buf, n, "%d", (int)*(const int32_t *)((const char *)p + st->off));
        break;
    case S_SEED:
        snprintf(buf, n, "%llu", (unsigned long long)cf_sampler_seed(s->smp));
        break;
    case S_N_PREDICT:
        snprintf(buf, n, "%d", s->n_predict);
        break;
    }
    return buf;
}
