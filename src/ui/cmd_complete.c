/* confab complete: plain text completion of a prompt, as llama-cli/llama-simple
 * do it: the prompt tokenized with BOS iff the model adds one and special
 * tokens parsed, one batched prefill, then sampling until -n tokens, an
 * end-of-generation token or a full context.  Ctrl-C (or SIGTERM, SIGHUP)
 * stops either part within a layer or a token, with one line saying so. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cache_opts.h"
#include "gpu_opts.h"
#include "draft.h"
#include "grammar_opt.h"
#include "confab/model.h"
#include "confab/platform.h"
#include "confab/sampler.h"
#include "confab/tokenizer.h"
#include "term.h"

typedef struct complete_opts {
    const char *model, *tokenizer, *prompt, *prompt_file, *dump_logits;
    long long n_predict, n_ctx, threads, seed;
    ui_cache cache;
    ui_gpu gpu;
    cf_load_mode load_mode;
    cf_sampler_params sp;
    ui_draft draft;
    ui_grammar grammar;
    cf_constraint *constraint; /* the grammar bound to the vocabulary */
    bool ids, no_special, special, ignore_eos, verbose;
    bool last_n_whole; /* --repeat-last-n -1 */
} complete_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: confab complete -m FILE (-p TEXT | -f FILE) [options]\n"
            "\n"
            "Print the continuation of a prompt (the prompt itself is not echoed).\n"
            "\n"
            "  -m, --model FILE         GGUF model or llama2.c checkpoint, or a model's name\n"
            "                           as 'confab models' lists it\n"
            "      --tokenizer FILE     llama2.c tokenizer.bin (default: beside the checkpoint)\n"
            "  -p, --prompt TEXT        the prompt\n"
            "  -f, --file FILE          read the prompt from a file\n"
            "  -n, --n-predict N        tokens to generate (default 128; -1: until the end;\n"
            "                           also --predict)\n"
            "  -c, --ctx-size N         context size (default: the model's, at most 4096)\n"
            "  -t, --threads N          threads (default: physical cores)\n"
            "      --temp T             temperature (default 0.8; 0 = greedy)\n"
            "      --top-k N            (40)   --top-p P (0.95)   --min-p P (0.05)\n"
            "      --typical P          (1.0 = off)\n"
            "      --repeat-penalty P   (1.0 = off)   --repeat-last-n N (64)\n"
            "      --presence-penalty P (0)   --frequency-penalty P (0)\n"
            "  -s, --seed S             random seed (default: random)\n"
            "      --mmap, --no-mmap    map the model file / copy it into memory (default:\n"
            "                           copy into huge pages when it fits)\n"
            "      --no-special         do not parse special tokens in the prompt text\n"
            "      --special            print control tokens' text in the output\n"
            "      --ignore-eos         keep generating after end-of-generation tokens\n"
            "      --grammar FILE       only output the GBNF grammar in FILE (or this text)\n"
            "                           derives (also --grammar-file)\n"
            "  -j, --json-schema FILE   only output JSON the schema in FILE (or this text)\n"
            "                           describes (also --json-schema-file)\n"
            "      --json               only output a JSON object\n"
            "      --ids                print the generated token ids on one line instead\n"
            "      --dump-logits FILE   write the logits of the last prompt position\n"
            "                           (n_vocab little-endian f32)\n"
            "  -v, --verbose            timing on stderr\n");
    ui_cache_usage(f, "f32");
    ui_gpu_usage(f);
    ui_draft_usage(f);
}

enum {
    OPT_SAMPLER = 256, OPT_SEED, OPT_MMAP, OPT_NO_MMAP, OPT_KV, OPT_NO_SPECIAL, OPT_SPECIAL, OPT_IGNORE_EOS,
    OPT_IDS, OPT_DUMP, OPT_TOKENIZER, OPT_DRAFT, OPT_GRAMMAR, OPT_SCHEMA, OPT_JSON, OPT_GPU,
};

static int parse_args(int argc, char **argv, complete_opts *o)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'},
        {"prompt", required_argument, 0, 'p'},
        {"file", required_argument, 0, 'f'},
        {"n-predict", required_argument, 0, 'n'},
        {"predict", required_argument, 0, 'n'},
        {"ctx-size", required_argument, 0, 'c'},
        {"threads", required_argument, 0, 't'},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {"temp", required_argument, 0, OPT_SAMPLER},
        {"top-k", required_argument, 0, OPT_SAMPLER},
        {"top-p", required_argument, 0, OPT_SAMPLER},
        {"min-p", required_argument, 0, OPT_SAMPLER},
        {"typical", required_argument, 0, OPT_SAMPLER},
        {"repeat-penalty", required_argument, 0, OPT_SAMPLER},
        {"repeat-last-n", required_argument, 0, OPT_SAMPLER},
        {"presence-penalty", required_argument, 0, OPT_SAMPLER},
        {"frequency-penalty", required_argument, 0, OPT_SAMPLER},
        {"seed", required_argument, 0, OPT_SEED},
        {"kv-type", required_argument, 0, OPT_KV},
        {"cache-type-k", required_argument, 0, OPT_KV},
        {"cache-type-v", required_argument, 0, OPT_KV},
        {"kv-rotate", required_argument, 0, OPT_KV},
        {"gpu-layers", required_argument, 0, OPT_GPU},
        {"device", required_argument, 0, OPT_GPU},
        {"mmap", no_argument, 0, OPT_MMAP},
        {"no-mmap", no_argument, 0, OPT_NO_MMAP},
        {"no-special", no_argument, 0, OPT_NO_SPECIAL},
        {"special", no_argument, 0, OPT_SPECIAL},
        {"ignore-eos", no_argument, 0, OPT_IGNORE_EOS},
        {"ids", no_argument, 0, OPT_IDS},
        {"dump-logits", required_argument, 0, OPT_DUMP},
        {"tokenizer", required_argument, 0, OPT_TOKENIZER},
        {"model-draft", required_argument, 0, OPT_DRAFT},
        {"draft-max", required_argument, 0, OPT_DRAFT},
        {"draft-min", required_argument, 0, OPT_DRAFT},
        {"draft-p-min", required_argument, 0, OPT_DRAFT},
        {"lookup", no_argument, 0, OPT_DRAFT},
        {"grammar", required_argument, 0, OPT_GRAMMAR},
        {"grammar-file", required_argument, 0, OPT_GRAMMAR},
        {"json-schema", required_argument, 0, 'j'},
        {"json-schema-file", required_argument, 0, 'j'},
        {"json", no_argument, 0, OPT_JSON},
        {0, 0, 0, 0},
    };
    int c;
    optind = 1;
    int li = 0;
    ui_draft_argv(argc, argv);
    ui_cache_argv(argc, argv);
    ui_gpu_argv(argc, argv);
    while ((c = getopt_long(argc, argv, "m:p:f:n:c:t:s:j:vh", opts, &li)) != -1) {
        bool ok = true;
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'p': o->prompt = optarg; break;
        case 'f': o->prompt_file = optarg; break;
        case 'n': ok = cli_parse_int("-n", optarg, -1, 1 << 24, &o->n_predict); break;
        case 'c': ok = cli_parse_int("-c", optarg, 1, 1 << 20, &o->n_ctx); break;
        case 't': ok = cli_parse_threads("-t", optarg, &o->threads); break;
        case 'v': o->verbose = true; break;
        case 'h': usage(stdout); return 1;
        case OPT_SAMPLER: {
            cf_err err = {0};
            /* llama.cpp's -1, the whole context, once it is known */
            if (!strcmp(opts[li].name, "repeat-last-n") &&
                (o->last_n_whole = !strcmp(optarg, "-1")))
                break;
            if (cf_sampler_setting_set(&o->sp, opts[li].name, optarg, &err)) {
                cli_option_error(opts[li].name, err.msg);
                ok = false;
            }
            break;
        }
        case 's':
        case OPT_SEED: ok = cli_parse_int("--seed", optarg, 0, INT64_MAX, &o->seed); break;
        case OPT_KV: ok = ui_cache_option(&o->cache, opts[li].name, optarg) > 0; break;
        case OPT_GPU: ok = ui_gpu_option(&o->gpu, opts[li].name, optarg) > 0; break;
        case OPT_MMAP: o->load_mode = CF_LOAD_MMAP; break;
        case OPT_NO_MMAP: o->load_mode = CF_LOAD_COPY; break;
        case OPT_NO_SPECIAL: o->no_special = true; break;
        case OPT_SPECIAL: o->special = true; break;
        case OPT_IGNORE_EOS: o->ignore_eos = true; break;
        case OPT_IDS: o->ids = true; break;
        case OPT_DUMP: o->dump_logits = optarg; break;
        case OPT_TOKENIZER: o->tokenizer = optarg; break;
        case OPT_DRAFT: ok = ui_draft_option(&o->draft, opts[li].name, optarg) > 0; break;
        case OPT_GRAMMAR: o->grammar.gbnf = optarg; break;
        case 'j': o->grammar.schema = optarg; break;
        case OPT_JSON: o->grammar.json = true; break;
        default: usage(stderr); return -1;
        }
        if (!ok)
            return -1;
    }
    if (optind != argc) {
        cli_error("complete: unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (!o->prompt == !o->prompt_file) {
        cli_error("complete: give the prompt with -p TEXT or -f FILE");
        return -1;
    }
    return 0;
}

static int write_logits(const char *path, const float *logits, int n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(logits, sizeof(float), (size_t)n, f) != (size_t)n) {
        if (f)
            fclose(f);
        cli_error("--dump-logits: cannot write '%s'", path);
        return -1;
    }
    if (fclose(f) != 0) {
        cli_error("--dump-logits: cannot write '%s'", path);
        return -1;
    }
    return 0;
}

static bool stops(void *tok, int32_t id)
{
    return cf_tok_is_eog(tok, id);
}

static bool signalled(void *ud)
{
    (void)ud;
    return sig_interrupt || sig_quit;
}

static int signal_status(void)
{
    return sig_quit ? 128 + sig_quit : CF_EXIT_INTERRUPT;
}

/* Sample up to n_predict tokens after the prompt; returns an exit code.
 * With speculation the tokens come a step at a time: each step's but the
 * last are in the cache already, the last is decoded by the next step. */
static int generate(const complete_opts *o, cf_ctx *ctx, const cf_tokenizer *tok, cf_sampler *smp,
                    float *logits)
{
    cf_utf8_stream stream = {0};
    char out[CF_UTF8_STREAM_OUT(256)];
    cf_err err;
    int generated = 0;
    bool cut = false; /* a full context stopped it short of -n */
    double t0 = cf_now_ms();
    cf_spec *spec = o->draft.spec;
    int32_t step[64];
    int n_step = 0, at = 0;
    for (long long i = 0; o->n_predict < 0 || i < o->n_predict; i++) {
        if (o->constraint) {
            const uint64_t *allowed = cf_constraint_mask(o->constraint);
            if (!allowed) {
                cli_error("out of memory for the grammar");
                return CF_EXIT_ERROR;
            }
            cf_sampler_set_mask(smp, allowed);
        }
        int32_t id = at < n_step ? step[at++] : cf_sampler_sample(smp, logits);
        if (!o->ignore_eos && cf_tok_is_eog(tok, id))
            break;
        if (o->constraint && !cf_tok_is_eog(tok, id) &&
            cf_constraint_accept(o->constraint, id, &err)) {
            cli_error("%s", err.msg);
            return CF_EXIT_ERROR;
        }
        if (!spec || i == 0)
            cf_sampler_accept(smp, id); /* a step accepts its own */
        generated++;
        if (o->ids) {
            printf(i ? " %d" : "%d", id);
        } else {
            cf_str piece = cf_tok_piece(tok, id, o->special);
            for (size_t at_byte = 0; at_byte < piece.len; at_byte += 256) {
                size_t chunk = piece.len - at_byte < 256 ? piece.len - at_byte : 256;
                fwrite(out, 1, cf_utf8_stream_feed(&stream, piece.ptr + at_byte, chunk, out), stdout);
            }
            fflush(stdout);
        }
        if (signalled(NULL))
            break;
        if (at < n_step)
            continue;
        if (cf_ctx_n_past(ctx) >= cf_ctx_n_ctx(ctx)) {
            cut = o->n_predict < 0 || generated < o->n_predict;
            break;
        }
        if (spec) {
            long long want = o->n_predict < 0 ? 64 : o->n_predict - i - 1;
            if (want == 0)
                break;
            n_step = cf_spec_step(spec, smp, id, step, want < 64 ? (int)want : 64, o->ignore_eos ? NULL : stops,
                                  (void *)tok, &err);
            at = 0;
            if (n_step < 1 && err.code == CF_E_CANCELLED)
                break; /* Ctrl-C during a check of the guesses */
            if (n_step < 1) {
                cli_error("%s", err.msg);
                return CF_EXIT_ERROR;
            }
        } else if (cf_ctx_decode(ctx, &id, 1, logits, false, &err) != 0) {
            cli_error("%s", err.msg);
            return CF_EXIT_ERROR;
        }
    }
    if (o->ids)
        putchar('\n');
    else
        fwrite(out, 1, cf_utf8_stream_flush(&stream, out), stdout);
    fflush(stdout);
    /* on a line of its own after the text (the ids end theirs) */
    if (cut)
        fprintf(stderr,
                "%sconfab: context full (%d tokens): stopped after %d generated tokens (-c sets the size)\n",
                o->ids ? "" : "\n", cf_ctx_n_ctx(ctx), generated);
    if (signalled(NULL))
        fprintf(stderr, "%sconfab: interrupted after %d generated tokens\n", o->ids ? "" : "\n",
                generated);
    if (o->verbose) {
        double ms = cf_now_ms() - t0;
        fprintf(stderr, "\nconfab: generated %d tokens in %.1f ms (%.2f t/s)\n", generated, ms,
                ms > 0 ? generated * 1e3 / ms : 0.0);
        if (spec) {
            char line[200];
            ui_draft_summary(&o->draft, line, sizeof line);
            fprintf(stderr, "confab: speculative: %s\n", line);
        }
    }
    return signalled(NULL) ? signal_status() : CF_EXIT_OK;
}

int cmd_complete(int argc, char **argv)
{
    complete_opts o = {.n_predict = 128, .seed = -1};
    cf_sampler_params_default(&o.sp);
    ui_draft_init(&o.draft);
    ui_cache_init(&o.cache, CF_KV_F32);
    o.threads = cf_cpu_cores();
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? CF_EXIT_OK : CF_EXIT_USAGE;

    char *prompt_buf = NULL;
    size_t prompt_len;
    if (o.prompt_file) {
        if (!(prompt_buf = cli_read_file(o.prompt_file, &prompt_len))) {
            cli_error("cannot read prompt file '%s'", o.prompt_file);
            return CF_EXIT_ERROR;
        }
    } else {
        prompt_len = strlen(o.prompt);
    }
    const char *prompt = prompt_buf ? prompt_buf : o.prompt;

    cf_err err;
    cf_model *model = NULL;
    cf_tokenizer *tok = NULL;
    cf_ctx *ctx = NULL;
    cf_sampler *smp = NULL;
    cf_grammar *grammar = NULL;
    cf_tokens ids = {0};
    float *logits = NULL;
    rc = CF_EXIT_MODEL;
    char *model_path = cli_resolve_model(o.model);
    if (!model_path)
        goto out;
    int loaded = cf_model_load_as(model_path, o.tokenizer, o.load_mode, &model, &err);
    free(model_path);
    if (loaded != 0 ||
        cf_tokenizer_create(cf_model_gguf(model), &tok, &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    rc = CF_EXIT_ERROR;
    if (cf_tokenize(tok, prompt, prompt_len, true, !o.no_special, &ids, &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    if (ids.n == 0) {
        cli_error("the prompt is empty and the model adds no BOS token: nothing to complete");
        rc = CF_EXIT_USAGE;
        goto out;
    }
    cf_ctx_params cp = {.n_ctx = (int)o.n_ctx, .n_threads = (int)o.threads, .type_k = o.cache.k,
                        .type_v = o.cache.v, .kv_no_rotate = o.cache.no_rotate,
                        .n_gpu_layers = o.gpu.layers, .gpu_device = o.gpu.device};
    if (cf_ctx_new(model, &cp, &ctx, &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    ui_gpu_note(cf_ctx_gpu_note(ctx));
    sig_install(false); /* until the end: sig_restore with the context freed */
    if ((int)ids.n >= cf_ctx_n_ctx(ctx)) {
        cli_error("the prompt has %zu tokens; the context holds %d (use -c)", ids.n, cf_ctx_n_ctx(ctx));
        rc = CF_EXIT_CONTEXT;
        goto out;
    }
    const int n_vocab = cf_model_hparams(model)->n_vocab;
    if (o.last_n_whole)
        o.sp.repeat_last_n = cf_ctx_n_ctx(ctx);
    if (cf_sampler_create(n_vocab, &o.sp, o.seed < 0 ? CF_SAMPLER_SEED_RANDOM : (uint64_t)o.seed,
                          &smp, &err) != 0) {
        cli_error("%s", err.msg);
        rc = CF_EXIT_USAGE;
        goto out;
    }
    if (!(logits = malloc((size_t)n_vocab * sizeof *logits))) {
        cli_error("out of memory");
        goto out;
    }
    double t0 = cf_now_ms();
    cf_ctx_set_cancel(ctx, signalled, NULL);
    if (cf_ctx_decode(ctx, ids.ids, (int)ids.n, logits, false, &err) != 0) {
        if (err.code == CF_E_CANCELLED) {
            cli_error("interrupted while the prompt (%zu tokens) was evaluated", ids.n);
            rc = signal_status();
        } else {
            cli_error("%s", err.msg);
        }
        goto out;
    }
    if (o.verbose)
        fprintf(stderr, "confab: prompt %zu tokens in %.1f ms\n", ids.n, cf_now_ms() - t0);
    for (size_t i = 0; i < ids.n; i++)
        cf_sampler_accept(smp, ids.ids[i]);
    if ((rc = ui_draft_open(&o.draft, ctx, tok)) != 0)
        goto out;
    rc = CF_EXIT_USAGE;
    if (o.draft.spec && ui_grammar_asked(&o.grammar)) {
        cli_error("a grammar and speculative decoding (-md, --lookup) cannot be used together");
        goto out;
    }
    if (ui_grammar_make(&o.grammar, &grammar))
        goto out;
    if (grammar && cf_constraint_create(grammar, tok, &o.constraint, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    rc = CF_EXIT_ERROR;
    if (o.draft.spec && cf_spec_begin(o.draft.spec, ids.ids, (int)ids.n, &err) != 0) {
        cli_error("%s", err.msg);
        goto out;
    }
    if (o.dump_logits && write_logits(o.dump_logits, logits, n_vocab) != 0)
        goto out;
    rc = generate(&o, ctx, tok, smp, logits);
out:
    cf_constraint_free(o.constraint);
    cf_grammar_free(grammar);
    ui_draft_close(&o.draft);
    if (ctx)
        sig_restore();
    free(logits);
    cf_tokens_free(&ids);
    cf_sampler_free(smp);
    cf_ctx_free(ctx);
    cf_tokenizer_free(tok);
    cf_model_free(model);
    free(prompt_buf);
    return rc;
}
