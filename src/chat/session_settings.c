/* Settings by name, as /set and the command line spell them: the
 * sampler's (its own table), the seed, n-predict, the thinking
 * switches the chat template reads, probs and the replies' format.  A bad name or value changes
 * nothing.  A remote session keeps the sampler's values and the seed
 * itself (they go into each request), and remembers which were given. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "remote.h"

#define N_PREDICT_MAX 1000000000

const char *const *cf_session_setting_names(void)
{
    static const char *names[32];
    if (!names[0]) {
        size_t n = 0;
        for (const char *const *p = cf_sampler_setting_names(); *p && n < 27; p++)
            names[n++] = *p;
        names[n++] = "seed";
        names[n++] = "n-predict";
        names[n++] = "thinking";
        names[n++] = "reasoning-effort";
        names[n++] = "probs";
        names[n] = "format";
    }
    return names;
}

/* The setting's index in cf_session_setting_names, or -1. */
static int index_of(const char *name)
{
    const char *const *names = cf_session_setting_names();
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

bool cf_session_setting_is_default(const cf_session *s, const char *name)
{
    int i = index_of(name);
    return i < 0 || !(s->set_mask & 1u << i);
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

/* The seed a value names (CF_SAMPLER_SEED_RANDOM: draw one). */
static int parse_seed(const char *value, uint64_t *out, cf_err *err)
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
    *out = seed;
    return 0;
}

static int set_seed(cf_session *s, uint64_t seed, cf_err *err)
{
    if (s->remote) {
        s->remote->seed = seed;
        return 0;
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

static const char *const thinking_values[] = {"auto", "on", "off", NULL};
static const char *const effort_values[] = {"auto", "low", "medium", "high", NULL};
static const char *const onoff_values[] = {"off", "on", NULL};

/* The index of value in a NULL-terminated list, or -1; a yes/no word is
 * the list's "on" or "off". */
static int choice(const char *const *list, const char *value)
{
    int b = cf_parse_bool(value);
    if (b >= 0)
        value = b ? "on" : "off";
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], value))
            return i;
    return -1;
}

static int parse_n_predict(const char *value, int *out, cf_err *err)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (!*value || *end || errno || v < -1 || v > N_PREDICT_MAX)
        return cf_fail_as(err, CF_E_USAGE, "n-predict: '%s' is not a whole number from -1 to %d",
                          value, N_PREDICT_MAX);
    *out = (int)v;
    return 0;
}

/* A value of a setting that is not the sampler's, parsed into *out (the
 * seed, or an int); the one check for every front end. */
static int parse_own(const char *name, const char *value, uint64_t *out, cf_err *err)
{
    int v = -1;
    if (!strcmp(name, "seed"))
        return parse_seed(value, out, err);
    if (!strcmp(name, "n-predict")) {
        if (parse_n_predict(value, &v, err))
            return -1;
    } else {
        bool thinking = !strcmp(name, "thinking"), probs = !strcmp(name, "probs");
        const char *const *list = thinking ? thinking_values : probs ? onoff_values : effort_values;
        if ((v = choice(list, value)) < 0)
            return cf_fail_as(err, CF_E_USAGE, "%s: '%s' is not one of %s", name, value,
                              thinking ? "auto, on, off" : probs ? "on, off"
                                                                 : "auto, low, medium, high");
    }
    *out = (uint64_t)(int64_t)v;
    return 0;
}

static bool is_sampler_setting(const char *name)
{
    return index_of(name) < index_of("seed");
}

int cf_session_setting_check(const char *name, const char *value, cf_err *err)
{
    if (index_of(name) < 0)
        return cf_fail_as(err, CF_E_USAGE, "unknown setting '%s'", name);
    uint64_t v;
    if (!strcmp(name, "format")) /* its file is read when it is set */
        return 0;
    if (!is_sampler_setting(name))
        return parse_own(name, value, &v, err);
    cf_sampler_params p;
    cf_sampler_params_default(&p);
    bool all = !strcmp(name, "repeat-last-n") && !strcmp(value, "-1");
    return cf_sampler_setting_set(&p, name, all ? "0" : value, err);
}

/* A sampler setting: repeat-last-n -1 is llama.cpp's "the whole
 * context" (a remote server takes -1 itself). */
static int set_sampler(cf_session *s, const char *name, const char *value, cf_err *err)
{
    char whole[16];
    bool all = !strcmp(name, "repeat-last-n") && !strcmp(value, "-1");
    if (s->remote) {
        if (cf_sampler_setting_set(&s->remote->par, name, all ? "0" : value, err))
            return -1;
        if (all)
            s->remote->par.repeat_last_n = -1;
        return 0;
    }
    if (all) {
        snprintf(whole, sizeof whole, "%d", cf_ctx_n_ctx(s->ctx));
        value = whole;
    }
    cf_sampler_params p = *cf_sampler_get_params(s->smp);
    return cf_sampler_setting_set(&p, name, value, err) || cf_sampler_set_params(s->smp, &p, err)
               ? -1
               : 0;
}

int cf_session_set(cf_session *s, const char *name, const char *value, cf_err *err)
{
    int idx = index_of(name);
    if (idx < 0) {
        char list[256] = "";
        for (const char *const *p = cf_session_setting_names(); *p; p++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "", *p);
        return cf_fail_as(err, CF_E_USAGE, "unknown setting '%s' (settings: %s)", name, list);
    }
    uint64_t v = 0;
    if (!strcmp(name, "format")) {
        return sess_set_format(s, value, err); /* not saved: no mask bit */
    } else if (is_sampler_setting(name)) {
        if (set_sampler(s, name, value, err))
            return -1;
    } else if (parse_own(name, value, &v, err)) {
        return -1;
    } else if (!strcmp(name, "seed")) {
        if (set_seed(s, v, err))
            return -1;
    } else if (!strcmp(name, "probs")) {
        if (v && s->remote)
            return cf_fail_as(err, CF_E_USAGE, "probs: a remote server's replies come without "
                              "token probabilities here");
        s->probs = (int)v; /* a display choice: the conversation is unchanged */
        return 0;
    } else if (!strcmp(name, "n-predict")) {
        s->n_predict = (int)(int64_t)v;
    } else {
        /* a new thinking setting renders the prompt differently: the
         * cache keeps what still agrees at the next turn */
        *(!strcmp(name, "thinking") ? &s->thinking : &s->effort) = (int)v;
    }
    s->set_mask |= 1u << idx;
    s->dirty = true;
    return 0;
}

const char *cf_session_get(const cf_session *s, const char *name, char *buf, size_t n)
{
    const sess_remote *r = s->remote;
    if (strcmp(name, "seed") == 0 && r && r->seed == CF_SAMPLER_SEED_RANDOM)
        snprintf(buf, n, "random");
    else if (strcmp(name, "seed") == 0)
        snprintf(buf, n, "%llu", r ? (unsigned long long)r->seed
                                   : (unsigned long long)cf_sampler_seed(s->smp));
    else if (strcmp(name, "n-predict") == 0)
        snprintf(buf, n, "%d", s->n_predict);
    else if (strcmp(name, "thinking") == 0)
        snprintf(buf, n, "%s", thinking_values[s->thinking]);
    else if (strcmp(name, "reasoning-effort") == 0)
        snprintf(buf, n, "%s", effort_values[s->effort]);
    else if (strcmp(name, "probs") == 0)
        snprintf(buf, n, "%s", onoff_values[s->probs]);
    else if (strcmp(name, "format") == 0)
        snprintf(buf, n, "%s", s->format ? s->format : "off");
    else
        return cf_sampler_setting_get(r ? &r->par : cf_sampler_get_params(s->smp), name, buf, n);
    return buf;
}
