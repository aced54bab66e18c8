/* confab mkmodel: write a GGUF with deterministic random weights in a real
 * model's shape (benchmarks and tests without downloading weights). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "confab/mkmodel.h"

/* The option texts' column, and a ", "-separated list wrapped under it. */
#define TEXT_COL 17

static void put_list(FILE *f, const char *list)
{
    int col = TEXT_COL;
    for (const char *p = list; *p;) {
        const int n = (int)strcspn(p, ",");
        if (p != list) {
            const bool wrap = col + 2 + n > 80;
            fputs(wrap ? ",\n" : ", ", f);
            col = wrap ? fprintf(f, "%*s", TEXT_COL, "") : col + 2;
        }
        col += fprintf(f, "%.*s", n, p);
        p += n;
        p += strspn(p, ", ");
    }
    fputc('\n', f);
}

static void usage(FILE *f)
{
    fputs("usage: confab mkmodel (--shape NAME | --dims SPEC | both) --type TYPE -o FILE\n"
          "                      [--pure] [--vocab VOCAB.gguf] [--seed S] [-t N]\n"
          "\n"
          "Write a GGUF model with random weights (N(0, 1/fan_in) matrices, norms near 1)\n"
          "in the shape of a real model, quantized like llama-quantize does it.\n"
          "\n"
          "  --shape NAME   ",
          f);
    put_list(f, cf_mk_shape_list());
    fputs("  --dims SPEC    a custom shape, or changes to --shape's: comma-separated\n"
          "                 KEY=VALUE, keys embd, layers, heads, kv_heads, head_dim\n"
          "                 (default embd/heads), ff, ctx, rope_base, eps, tied (0|1),\n"
          "                 swa and rope_base_swa (gemma3's and gemma4's sliding window\n"
          "                 and its RoPE base; gpt-oss's window), experts, experts_used,\n"
          "                 expert_ff (default ff; llama with experts is Mixtral),\n"
          "                 yarn_factor, yarn_orig_ctx (YaRN RoPE), rot (RoPE dims,\n"
          "                 default head_dim),\n"
          "                 ssm_conv, ssm_state, ssm_k_heads, ssm_v_heads (qwen35's delta\n"
          "                 nets; granitehybrid's Mamba2: kernel, states, groups, heads),\n"
          "                 attn_period (granitehybrid: layer l attends when l mod N is\n"
          "                 N/2), head_dim_swa, swa_period (every Nth layer global),\n"
          "                 kv_shared (last layers without a cache), ple (per-layer\n"
          "                 embedding dims; all four gemma4's), dense_layers (glm4moe's\n"
          "                 and deepseek2's first FFNs without experts), kv_lora, q_lora,\n"
          "                 nope, v_mla (deepseek2's latent attention, head_dim =\n"
          "                 kv_lora + rot), shexp_ff (the shared expert's width:\n"
          "                 qwen3next, deepseek2), name, and arch, one of\n"
          "                 ",
          f);
    put_list(f, cf_mk_arch_list());
    fputs("                 (without --shape, embd, layers, heads and ff are required,\n"
          "                 e.g. embd=256,layers=2,heads=4,ff=512)\n"
          "  --type TYPE    ",
          f);
    put_list(f, cf_mk_ftype_list());
    fputs("                 (MXFP4_MOE: MXFP4 experts, other matrices Q8_0)\n"
          "  --pure         every matrix of TYPE's own type (llama-quantize --pure; IQ2_M:\n"
          "                 IQ2_S, IQ3_M and IQ3_XS: IQ3_S, MXFP4_MOE: MXFP4), only row\n"
          "                 lengths its blocks do not divide fall back\n"
          "  -o FILE        the file to write\n"
          "  --vocab FILE   copy the tokenizer.* keys of this GGUF (default: under\n"
          "                 $CONFAB_SHARED or ../shared, the shape's real vocabulary:\n"
          "                 models/qwen3-bpe.Q8_0.gguf for qwen3*-* and gpt-oss-20b,\n"
          "                 vocab/ggml-vocab-gemma3.gguf for gemma3-1b,\n"
          "                 vocab/ggml-vocab-llama-bpe.gguf for smollm3-3b,\n"
          "                 else vocab/ggml-vocab-llama-spm.gguf)\n"
          "  --seed S       random seed (default 1); the same seed gives the same file\n"
          "  -t N           threads (default: all)\n",
          f);
}

int cmd_mkmodel(int argc, char **argv)
{
    static const struct option opts[] = {
        {"shape", required_argument, 0, 'S'}, {"dims", required_argument, 0, 'D'},
        {"type", required_argument, 0, 'T'},  {"vocab", required_argument, 0, 'V'},
        {"seed", required_argument, 0, 's'},  {"threads", required_argument, 0, 't'},
        {"pure", no_argument, 0, 'P'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *shape = NULL, *dims = NULL, *type = NULL, *vocab = NULL;
    cf_mk_params p = {.seed = 1};
    long long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': shape = optarg; break;
        case 'D': dims = optarg; break;
        case 'T': type = optarg; break;
        case 'V': vocab = optarg; break;
        case 'o': p.out_path = optarg; break;
        case 'P': p.pure = true; break;
        case 's':
            if (!cli_parse_int("--seed", optarg, 0, INT64_MAX, &v))
                return CF_EXIT_USAGE;
            p.seed = (uint64_t)v;
            break;
        case 't':
            if (!cli_parse_int("-t", optarg, 1, 1024, &v))
                return CF_EXIT_USAGE;
            p.n_threads = (int)v;
            break;
        case 'h': usage(stdout); return CF_EXIT_OK;
        default: usage(stderr); return CF_EXIT_USAGE;
        }
    }
    if (optind != argc || (!shape && !dims) || !type || !p.out_path) {
        usage(stderr);
        return CF_EXIT_USAGE;
    }
    cf_err err;
    if (shape && cf_mk_shape_named(shape, &p.shape) != 0) {
        cli_error("--shape: no shape '%s' (shapes: %s)", shape, cf_mk_shape_list());
        return CF_EXIT_USAGE;
    }
    if (!shape)
        p.shape = (cf_mk_shape){.name = "custom", .arch = CF_ARCH_LLAMA, .n_ctx = 2048,
                                .rope_base = 10000.0f, .norm_eps = 1e-5f};
    if (dims && cf_mk_shape_apply_dims(&p.shape, dims, &err) != 0) {
        cli_error("%s", err.msg);
        return CF_EXIT_USAGE;
    }
    if (cf_mk_shape_check(&p.shape, &err) != 0) {
        cli_error("%s", err.msg);
        return CF_EXIT_USAGE;
    }
    int ft = cf_mk_ftype_parse(type);
    if (ft < 0) {
        cli_error("--type: unknown type '%s' (types: %s)", type, cf_mk_ftype_list());
        return CF_EXIT_USAGE;
    }
    p.ftype = (cf_mk_ftype)ft;
    /* a type confab cannot write is refused before the vocabulary is read */
    cf_mk_tensor *plan;
    int n;
    if (cf_mk_plan(&p.shape, p.ftype, p.pure, 1, &plan, &n, &err) != 0) {
        cli_error("%s", err.msg);
        return CF_EXIT_USAGE;
    }
    free(plan);
    char vocab_buf[4096];
    if (!vocab) {
        const char *shared = getenv("CONFAB_SHARED");
        snprintf(vocab_buf, sizeof vocab_buf, "%s/%s", shared && *shared ? shared : "../shared",
                 p.shape.vocab ? p.shape.vocab : "vocab/ggml-vocab-llama-spm.gguf");
        vocab = vocab_buf;
    }
    p.vocab_path = vocab;
    const double t0 = cf_now_ms();
    if (cf_mkmodel(&p, &err) != 0) {
        if (vocab == vocab_buf)
            cli_error("%s (the default vocabulary; name one with --vocab FILE or set CONFAB_SHARED)",
                      err.msg);
        else
            cli_error("%s", err.msg);
        return CF_EXIT_ERROR;
    }
    fprintf(stderr, "wrote %s (%s %s) in %.1f s\n", p.out_path, p.shape.name,
            cf_mk_ftype_name(p.ftype), (cf_now_ms() - t0) / 1e3);
    return CF_EXIT_OK;
}
