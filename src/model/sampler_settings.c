/* The sampler's settings by name, as the command line and /set spell them,
 * with the ranges they take: one table for every front end. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confab/sampler.h"

typedef struct param {
    const char *name;
    bool integral;
    size_t off; /* of the float or int32_t in cf_sampler_params */
    double lo, hi;
    bool above; /* lo itself is out */
} param;

static const param params[] = {
    {"temp", false, offsetof(cf_sampler_params, temp), 0, 100, false},
    {"top-k", true, offsetof(cf_sampler_params, top_k), 0, 1000000, false},
    {"top-p", false, offsetof(cf_sampler_params, top_p), 0, 1, false},
    {"min-p", false, offsetof(cf_sampler_params, min_p), 0, 1, false},
    {"typical", false, offsetof(cf_sampler_params, typical_p), 0, 1, false},
    {"repeat-penalty", false, offsetof(cf_sampler_params, repeat_penalty), 0, 100, true},
    /* -1, llama.cpp's "the whole context", is the session's to replace */
    {"repeat-last-n", true, offsetof(cf_sampler_params, repeat_last_n), -1, CF_SAMPLER_MAX_LAST_N,
     false},
    {"presence-penalty", false, offsetof(cf_sampler_params, presence_penalty), -2, 2, false},
    {"frequency-penalty", false, offsetof(cf_sampler_params, frequency_penalty), -2, 2, false},
};
#define N_PARAMS (sizeof params / sizeof params[0])

const char *const *cf_sampler_setting_names(void)
{
    static const char *names[N_PARAMS + 1];
    for (size_t i = 0; i < N_PARAMS; i++)
        names[i] = params[i].name;
    return names;
}

static const param *find(const char *name)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (strcmp(params[i].name, name) == 0)
            return &params[i];
    return NULL;
}

int cf_sampler_setting_set(cf_sampler_params *p, const char *name, const char *value, cf_err *err)
{
    const param *st = find(name);
    if (!st)
        return cf_fail_as(err, CF_E_USAGE, "'%s' is not a sampler setting", name);
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (!*value || *end || errno || !isfinite(v) || (st->integral && v != floor(v)) || v < st->lo ||
        (st->above && v == st->lo) || v > st->hi)
        return cf_fail_as(err, CF_E_USAGE, "%s: '%s' is not %s %s %.15g %s %.15g", name, value,
                          st->integral ? "a whole number" : "a number",
                          st->above ? "above" : "from", st->lo, st->above ? "up to" : "to", st->hi);
    cf_sampler_params q = *p;
    if (st->integral)
        *(int32_t *)((char *)&q + st->off) = (int32_t)v;
    else
        *(float *)((char *)&q + st->off) = (float)v;
    if (cf_sampler_params_check(&q, err))
        return -1;
    *p = q;
    return 0;
}

const char *cf_sampler_setting_get(const cf_sampler_params *p, const char *name, char *buf, size_t n)
{
    const param *st = find(name);
    if (!st)
        return NULL;
    if (st->integral)
        snprintf(buf, n, "%d", (int)*(const int32_t *)((const char *)p + st->off));
    else
        snprintf(buf, n, "%g", (double)*(const float *)((const char *)p + st->off));
    return buf;
}
