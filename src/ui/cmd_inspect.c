/* confab inspect: a model file's metadata and tensor table, like gguf-dump,
 * then a summary. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "confab/gguf.h"
#include "confab/model.h"
#include "confab/template.h"
#include "confab/tokenizer.h"

#define SHOWN_ELEMS 8
#define SHOWN_CHARS 72

/* Print s quoted, escaping control bytes; cut after max bytes (0 = all). */
static void print_quoted(cf_str s, size_t max)
{
    size_t n = max && s.len > max ? max : s.len;
    putchar('\'');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s.ptr[i];
        if (ch == '\n')
            fputs("\\n", stdout);
        else if (ch == '\t')
            fputs("\\t", stdout);
        else if (ch == '\\' || ch == '\'')
            printf("\\%c", ch);
        else if (ch < 32 || ch == 127)
            printf("\\x%02x", ch);
        else
            putchar(ch);
    }
    putchar('\'');
    if (n < s.len)
        printf("... (%zu bytes)", s.len);
}

static void print_elem(const cf_gguf_kv *kv, uint64_t i, bool full)
{
    switch (kv->elem) {
    case CF_GGUF_STRING:
        print_quoted(cf_gguf_kv_str(kv, i), full ? 0 : SHOWN_CHARS);
        break;
    case CF_GGUF_FLOAT32:
    case CF_GGUF_FLOAT64:
        printf("%.9g", cf_gguf_kv_float(kv, i));
        break;
    case CF_GGUF_BOOL:
        fputs(cf_gguf_kv_int(kv, i) ? "true" : "false", stdout);
        break;
    case CF_GGUF_UINT64:
        printf("%llu", (unsigned long long)cf_gguf_kv_int(kv, i));
        break;
    default:
        printf("%lld", (long long)cf_gguf_kv_int(kv, i));
    }
}

static void print_kv(const cf_gguf_kv *kv, bool full)
{
    char type[32];
    if (kv->type == CF_GGUF_ARRAY)
        snprintf(type, sizeof type, "[%s; %llu]", cf_gguf_vtype_name(kv->elem),
                 (unsigned long long)kv->n);
    else
        snprintf(type, sizeof type, "%s", cf_gguf_vtype_name(kv->type));
    printf("  %-44s %-14s = ", kv->key, type);
    if (kv->type != CF_GGUF_ARRAY) {
        print_elem(kv, 0, full);
        const char *ftype = NULL;
        bool integer = kv->type <= CF_GGUF_INT32 || kv->type == CF_GGUF_UINT64 ||
                       kv->type == CF_GGUF_INT64;
        if (!strcmp(kv->key, "general.file_type") && integer &&
            (ftype = cf_gguf_file_type_name((uint32_t)cf_gguf_kv_int(kv, 0))))
            printf(" (%s)", ftype);
    } else {
        uint64_t shown = full || kv->n <= SHOWN_ELEMS ? kv->n : SHOWN_ELEMS;
        putchar('[');
        for (uint64_t i = 0; i < shown; i++) {
            if (i)
                fputs(", ", stdout);
            print_elem(kv, i, full);
        }
        if (shown < kv->n)
            printf(", ... %llu more", (unsigned long long)(kv->n - shown));
        putchar(']');
    }
    putchar('\n');
}

/* "Q8_0 96%, F32 4%": the tensor types by their share of the bytes. */
static void quant_mix(const cf_gguf *g, char *buf, size_t n)
{
    uint64_t bytes[CF_TYPE_COUNT] = {0}, total = 0;
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        if ((unsigned)t->type < CF_TYPE_COUNT)
            bytes[t->type] += t->nbytes;
        total += t->nbytes;
    }
    size_t at = 0;
    buf[0] = 0;
    for (bool any = true; any && at < n;) {
        int top = -1;
        for (int k = 0; k < CF_TYPE_COUNT; k++)
            if (bytes[k] && (top < 0 || bytes[k] > bytes[top]))
                top = k;
        if ((any = top >= 0)) {
            double pct = total ? 100.0 * (double)bytes[top] / (double)total : 0;
            at += (size_t)snprintf(buf + at, n - at, "%s%s %.*f%%", at ? ", " : "",
                                   cf_type_name((cf_type)top), pct < 1 ? 1 : 0, pct);
            bytes[top] = 0;
        }
    }
    if (!at)
        snprintf(buf, n, "none (no tensors)");
}

static uint64_t n_params(const cf_gguf *g)
{
    uint64_t sum = 0;
    for (int64_t i = 0; i < cf_gguf_n_tensors(g); i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        uint64_t e = 1;
        for (uint32_t d = 0; d < t->n_dims; d++)
            e *= (uint64_t)t->ne[d];
        sum += e;
    }
    return sum;
}

/* What a person asks first: what the model is, how it is quantized,
 * whether it brings a chat template, and whether confab runs it (and if
 * not, why: the loader's own words). */
static void summary(const cf_gguf *g, const char *path, const char *tokenizer)
{
    cf_str arch = {"?", 1}, name = {"", 0}, tmpl = {NULL, 0};
    cf_gguf_get_str(g, "general.architecture", &arch);
    cf_gguf_get_str(g, "general.name", &name);
    char key[160], mix[256], how[CF_ERR_MSG_MAX + 64];
    uint64_t layers = 0, ctx = 0;
    snprintf(key, sizeof key, "%.*s.block_count", (int)arch.len, arch.ptr);
    cf_gguf_get_u64(g, key, &layers);
    snprintf(key, sizeof key, "%.*s.context_length", (int)arch.len, arch.ptr);
    cf_gguf_get_u64(g, key, &ctx);
    quant_mix(g, mix, sizeof mix);
    printf("summary:\n  model      %.*s%s%.*s%s, %.1fM parameters, %llu layers, context %llu\n"
           "  weights    %s\n",
           (int)arch.len, arch.ptr, name.len ? " '" : "", (int)name.len, name.ptr,
           name.len ? "'" : "", (double)n_params(g) / 1e6, (unsigned long long)layers,
           (unsigned long long)ctx, mix);
    cf_err err = {0};
    cf_chat_template *t = NULL;
    if (!cf_gguf_get_str(g, "tokenizer.chat_template", &tmpl))
        snprintf(how, sizeof how, "none (a chat uses the chatml built-in; --chat-template picks "
                 "another)");
    else if (cf_chat_template_from_jinja(tmpl.ptr, tmpl.len, "GGUF", &t, &err) < 0)
        snprintf(how, sizeof how, "Jinja, %zu bytes, which does not compile: %s", tmpl.len,
                 err.msg);
    else
        snprintf(how, sizeof how, "Jinja, %zu bytes%s%s%s", tmpl.len,
                 cf_chat_template_family(t) ? " (" : "",
                 cf_chat_template_family(t) ? cf_chat_template_family(t) : "",
                 cf_chat_template_family(t) ? " format)" : "");
    cf_chat_template_free(t);
    printf("  template   %s\n", how);
    cf_model *m = NULL;
    cf_tokenizer *tok = NULL;
    if (cf_model_load_as(path, tokenizer, CF_LOAD_MMAP, &m, &err) == 0 &&
        cf_tokenizer_create(cf_model_gguf(m), &tok, &err) == 0)
        printf("  confab     runs it (confab -m %s)\n", path);
    else
        printf("  confab     cannot run it: %s\n", err.msg);
    cf_tokenizer_free(tok);
    cf_model_free(m);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: confab inspect [--full] FILE|NAME\n"
               "\n"
               "Print a model file's metadata (long arrays and strings shortened unless --full)\n"
               "and its tensor table: name, type, shape (ne0 first), data offset and bytes;\n"
               "then a summary: parameters, the quant types' shares, the chat template, and\n"
               "whether confab runs the model (if not, why).\n"
               "FILE is a GGUF file or a llama2.c checkpoint (.bin, with tokenizer.bin or the\n"
               "only tok*.bin beside it, or --tokenizer FILE), or a model's name as\n"
               "'confab models' lists it.\n");
}

int cmd_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"full", no_argument, 0, 'F'},
        {"tokenizer", required_argument, 0, 'T'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    bool full = false;
    const char *tokenizer = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'F':
            full = true;
            break;
        case 'T':
            tokenizer = optarg;
            break;
        case 'h':
            usage(stdout);
            return CF_EXIT_OK;
        default:
            usage(stderr);
            return CF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CF_EXIT_USAGE;
    }
    char *path = cli_model_path(argv[optind]);
    cf_gguf *g;
    cf_err err;
    if (!path)
        return CF_EXIT_MODEL;
    int rc = tokenizer ? cf_gguf_open_llama2c(path, tokenizer, &g, &err) : cf_gguf_open(path, &g, &err);
    if (rc != 0) {
        cli_error("%s", err.msg);
        free(path);
        return CF_EXIT_MODEL;
    }
    printf("%s: %s", path, cf_gguf_source_format(g));
    if (strcmp(cf_gguf_source_format(g), "gguf") == 0)
        printf(" v%u", cf_gguf_version(g));
    printf(", %llu bytes, alignment %llu, tensor data at offset %llu\n",
           (unsigned long long)cf_gguf_file_size(g), (unsigned long long)cf_gguf_alignment(g),
           (unsigned long long)cf_gguf_data_offset(g));

    printf("metadata: %lld keys\n", (long long)cf_gguf_n_kv(g));
    for (int64_t i = 0; i < cf_gguf_n_kv(g); i++)
        print_kv(cf_gguf_kv_at(g, i), full);

    int64_t nt = cf_gguf_n_tensors(g);
    uint64_t total = 0;
    printf("tensors: %lld\n", (long long)nt);
    printf("  %5s  %-36s %-7s %-24s %12s %12s\n", "#", "name", "type", "shape", "offset", "bytes");
    for (int64_t i = 0; i < nt; i++) {
        const cf_gguf_tensor *t = cf_gguf_tensor_at(g, i);
        char shape[64];
        int k = 0;
        for (uint32_t d = 0; d < (t->n_dims ? t->n_dims : 1); d++)
            k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%lld", d ? " x " : "",
                          (long long)t->ne[d]);
        printf("  %5lld  %-36s %-7s %-24s %12llu %12llu\n", (long long)i, t->name,
               cf_type_name(t->type), shape, (unsigned long long)t->offset,
               (unsigned long long)t->nbytes);
        total += t->nbytes;
    }
    printf("total tensor bytes: %llu\n", (unsigned long long)total);
    summary(g, path, tokenizer);
    cf_gguf_close(g);
    free(path);
    return CF_EXIT_OK;
}
