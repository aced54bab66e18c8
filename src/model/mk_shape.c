/* mkmodel's model shapes: the built-in ones (real models' hyper-parameters)
 * and the --dims KEY=VALUE syntax for custom ones. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "confab/mkmodel.h"

static const cf_mk_shape builtin[] = {
    /* HuggingFaceTB/SmolLM2-135M */
    {"smollm2-135m", CF_ARCH_LLAMA, 576, 30, 9, 3, 1536, 8192, 100000.0f, 1e-5f, true},
    /* meta-llama/Llama-3.2-1B (without its llama3 RoPE scaling) */
    {"llama-1b", CF_ARCH_LLAMA, 2048, 16, 32, 8, 8192, 131072, 500000.0f, 1e-5f, true},
    /* Qwen/Qwen2.5-0.5B */
    {"qwen2.5-0.5b", CF_ARCH_QWEN2, 896, 24, 14, 2, 4864, 32768, 1000000.0f, 1e-6f, true},
};

int cf_mk_shape_named(const char *name, cf_mk_shape *out)
{
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (!strcasecmp(name, builtin[i].name)) {
            *out = builtin[i];
            return 0;
        }
    return -1;
}

const char *cf_mk_shape_list(void)
{
    return "smollm2-135m, llama-1b, qwen2.5-0.5b";
}

static int parse_int(const char *key, const char *v, int lo, int hi, int *out, cf_err *err)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < lo || x > hi)
        return cf_fail(err, "--dims %s=%s: expected an integer in [%d, %d]", key, v, lo, hi);
    *out = (int)x;
    return 0;
}

static int parse_float(const char *key, const char *v, float *out, cf_err *err)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x) || x <= 0 || x > 1e12)
        return cf_fail(err, "--dims %s=%s: expected a positive number", key, v);
    *out = (float)x;
    return 0;
}

static int apply_one(cf_mk_shape *s, const char *key, const char *v, cf_err *err)
{
    static const struct {
        const char *key;
        size_t off;
        int lo, hi;
    } ints[] = {
        {"embd", offsetof(cf_mk_shape, n_embd), 32, 65536},
        {"layers", offsetof(cf_mk_shape, n_layer), 1, 1024},
        {"heads", offsetof(cf_mk_shape, n_head), 1, 1024},
        {"kv_heads", offsetof(cf_mk_shape, n_head_kv), 1, 1024},
        {"ff", offsetof(cf_mk_shape, n_ff), 32, 1 << 20},
        {"ctx", offsetof(cf_mk_shape, n_ctx), 1, 1 << 24},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(key, ints[i].key))
            return parse_int(key, v, ints[i].lo, ints[i].hi, (int *)((char *)s + ints[i].off), err);
    if (!strcmp(key, "rope_base"))
        return parse_float(key, v, &s->rope_base, err);
    if (!strcmp(key, "eps"))
        return parse_float(key, v, &s->norm_eps, err);
    if (!strcmp(key, "tied")) {
        int t = 0;
        if (parse_int(key, v, 0, 1, &t, err) != 0)
            return -1;
        s->tied = t;
        return 0;
    }
    if (!strcmp(key, "arch")) {
        if (!strcmp(v, "llama"))
            s->arch = CF_ARCH_LLAMA;
        else if (!strcmp(v, "qwen2"))
            s->arch = CF_ARCH_QWEN2;
        else
            return cf_fail(err, "--dims arch=%s: mkmodel writes llama or qwen2", v);
        return 0;
    }
    if (!strcmp(key, "name")) {
        if (!*v || strlen(v) >= sizeof s->name)
            return cf_fail(err, "--dims name: 1 to %zu characters", sizeof s->name - 1);
        strcpy(s->name, v);
        return 0;
    }
    return cf_fail(err, "--dims: unknown key '%s' (keys: arch embd layers heads kv_heads ff ctx "
                        "rope_base eps tied name)", key);
}

int cf_mk_shape_apply_dims(cf_mk_shape *s, const char *dims, cf_err *err)
{
    char buf[512];
    if (strlen(dims) >= sizeof buf)
        return cf_fail(err, "--dims: the spec is too long");
    strcpy(buf, dims);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            return cf_fail(err, "--dims: '%s' is not KEY=VALUE", item);
        *eq = '\0';
        if (apply_one(s, item, eq + 1, err) != 0)
            return -1;
    }
    return 0;
}

int cf_mk_shape_check(const cf_mk_shape *s, cf_err *err)
{
    if (!s->n_embd || !s->n_layer || !s->n_head || !s->n_ff)
        return cf_fail(err, "the shape needs at least embd, layers, heads and ff");
    const int kv = s->n_head_kv ? s->n_head_kv : s->n_head;
    if (s->n_embd % s->n_head || (s->n_embd / s->n_head) % 2)
        return cf_fail(err, "embd %d is not an even head size times %d heads", s->n_embd, s->n_head);
    if (s->n_head % kv)
        return cf_fail(err, "%d heads cannot share %d KV heads", s->n_head, kv);
    if (s->n_embd % 32 || s->n_ff % 32)
        return cf_fail(err, "embd and ff must be multiples of 32 (the quantization block)");
    if (s->n_embd / s->n_head > 1024)
        return cf_fail(err, "head size %d is larger than 1024", s->n_embd / s->n_head);
    return 0;
}
