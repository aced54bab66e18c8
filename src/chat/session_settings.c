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

static int set_seed(cf_session *s, const char *value, cf_err *err)
{
    uint64_t seed = CF_SAMPLER_SEED_RANDOM;
    if (parse_seed(value, &seed, err))
        return -1;
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

/* The index of value in a NULL-terminated list, or -1. */
static int choice(const char *const *list, const char *value)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], value))
            return i;
    return -1;
}

/* A new thinking setting renders the prompt differently: the cache keeps
 * what still agrees at the next turn. */
static int set_choice(cf_session *s, const char *name, const char *value, cf_err *err)
{
    bool thinking = !strcmp(name, "thinking");
    const char *const *list = thinking ? thinking_values : effort_values;
    int v = choice(list, value);
    if (v < 0)
        return cf_fail_as(err, CF_E_USAGE, "%s: '%s' is not one of %s", name, value,
                          thinking ? "auto, on, off" : "auto, low, medium, high");
    *(thinking ? &s->thinking : &s->effort) = v;
    return 0;
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
    if (strcmp(name, "seed") == 0) {
        if (set_seed(s, value, err))
            return -1;
    } else if (strcmp(name, "thinking") == 0 || strcmp(name, "reasoning-effort") == 0) {
        if (set_choice(s, name, value, err))
            return -1;
    } else if (strcmp(name, "probs") == 0) {
        int v = choice(onoff_values, value);
        if (v < 0)
            return cf_fail_as(err, CF_E_USAGE, "probs: '%s' is not on or off", value);
        if (v && s->remote)
            return cf_fail_as(err, CF_E_USAGE, "probs: a remote server's replies come without "
                              "token probabilities here");
        s->probs = v; /* a display choice: the conversation is unchanged */
        return 0;
    } else if (strcmp(name, "format") == 0) {
        return sess_set_format(s, value, err); /* not saved: no mask bit */
    } else if (strcmp(name, "n-predict") == 0) {
        char *end;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (!*value || *end || errno || v < -1 || v > N_PREDICT_MAX)
            return cf_fail_as(err, CF_E_USAGE, "n-predict: '%s' is not a whole number from -1 to %d", value,
                              N_PREDICT_MAX);
        s->n_predict = (int)v;
    } else if (s->remote) {
        if (cf_sampler_setting_set(&s->remote->par, name, value, err))
            return -1;
    } else {
        cf_sampler_params p = *cf_sampler_get_params(s->smp);
        if (cf_sampler_setting_set(&p, name, value, err) || cf_sampler_set_params(s->smp, &p, err))
            return -1;
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
