/* confab bench: prompt and generation speed in llama-bench's format, with
 * the machine's read bandwidth and how close decoding runs to it. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_session.h"
#include "bench_spec.h"
#include "cache_opts.h"
#include "gpu_opts.h"
#include "cli.h"
#include "confab/bench.h"
#include "confab/kernels.h"
#include "confab/platform.h"

#define BW_REPS 5
#define N_DEPTHS 3

static const int sweep_depths[N_DEPTHS] = {0, 1024, 4096};

typedef struct opts {
    const char *model;
    int n_prompt, n_gen, threads, reps, bw_mib;
    bool json, sweep;
    ui_cache kv;
    ui_gpu gpu;
    int offloaded; /* layers the context runs on the GPU */
    cf_load_mode load;
} opts;

typedef struct stats {
    double mean, sd;
} stats;

typedef struct results {
    stats pp, tg, tg_at[N_DEPTHS];
    double bandwidth_gbs;
    uint64_t bytes_per_token, kv_bytes, kv_per_token, file_bytes, peak_rss;
    /* a generated token's reads at each sweep depth: the weights and the
     * K/V of the context at the run's middle token */
    uint64_t bytes_at[N_DEPTHS];
    /* each generation run against a probe taken just before it: the
     * bandwidth a VM gets can change from one second to the next, and a
     * run and probes seconds apart may see different machines */
    stats run_frac[N_DEPTHS];
    double run_bw_lo, run_bw_hi;
} results;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: confab bench -m FILE [-p N] [-n N] [-t N] [-r N] [-ctk T] [-ctv T]\n"
            "                    [-ngl N] [--device N]\n"
            "                    [--json] [--ctx-sweep] [--bw-mib N] [--mmap | --no-mmap]\n"
            "       confab bench -m FILE --chat-turns N | --session-restore [-t N]\n"
            "       confab bench -m FILE --draft [-md FILE | --lookup] [-n N] [-r N] [-t N]\n"
            "\n"
            "Measure prompt processing (ppN: N tokens in one batch) and generation (tgN: N\n"
            "tokens one at a time) in tokens/s, mean ± sd over the repetitions, like\n"
            "llama-bench; then the machine's memory read bandwidth, the weight bytes each\n"
            "generated token reads, and the fraction of that roofline generation reaches\n"
            "(also run by run, against a probe taken just before each generation run).\n"
            "\n"
            "  -m FILE         the model: a GGUF file or a name 'confab models' lists\n"
            "  -p N            prompt tokens (default 512; 0 skips)\n"
            "  -n N            generated tokens (default 128; 0 skips)\n"
            "  -t N            threads (default: physical cores)\n"
            "  -r N            repetitions (default 5), after one warm-up run\n"
            "  -ctk T, -ctv T  the KV cache's key and value types: f16 (default, as\n"
            "                  llama-bench), q8_0, q4_0, bf16, f32; --kv-type T both,\n"
            "                  --kv-rotate on|off a quantized cache's rotation\n"
            "  -ngl N          offload the last N layers to the GPU (99 or all: every layer\n"
            "                  and the output; --gpu-layers N); --device N which GPU\n"
            "  --json          print one JSON object instead of the table\n"
            "  --ctx-sweep     also generation after 0, 1024 and 4096 tokens of context\n"
            "  --bw-mib N      buffer of the bandwidth probe in MiB (default 1024; keep it\n"
            "                  well above the last-level cache)\n"
            "  --mmap          map the model file (default: copy it into huge pages when\n"
            "                  it fits, as chat does)\n"
            "  --no-mmap       always copy the model into memory\n"
            "  --chat-turns N  time N chat turns through a session\n"
            "  --session-restore  time saving and restoring a session\n"
            "  --draft         speculative decoding: the cost of checking 0..8 guesses in one\n"
            "                  pass, and with -md FILE (a draft model) or --lookup greedy\n"
            "                  generation plainly and speculatively (the draft options of\n"
            "                  confab complete apply)\n");
}

/* mean and sample standard deviation of v[0..n) */
static stats mean_sd(const double *v, int n)
{
    stats s = {0, 0};
    for (int i = 0; i < n; i++)
        s.mean += v[i];
    s.mean /= n;
    for (int i = 0; i < n && n > 1; i++)
        s.sd += (v[i] - s.mean) * (v[i] - s.mean);
    s.sd = n > 1 ? sqrt(s.sd / (n - 1)) : 0;
    return s;
}

/* tokens/s of each repetition (secs: its seconds; overwritten) */
static stats tps(double *secs, int reps, int n_tokens)
{
    for (int i = 0; i < reps; i++)
        secs[i] = n_tokens / secs[i];
    return mean_sd(secs, reps);
}

/* The bandwidth probe runs in a child process, so that its 1 GiB buffer
 * does not count in this process's peak RSS.  The child is started before
 * the model is loaded (the fork then copies little, and no OpenMP thread
 * exists yet) and keeps its buffer from one probe to the next: freeing
 * and taking a GiB around every run stalled the runs on a VM that hands
 * freed memory back to its host (tokens of 40 ms, 2.7-11 % of the
 * generation time of a llama-1b bench). */
typedef struct prober {
    pid_t pid; /* 0: no child, each probe runs here */
    int sock;
    size_t bytes;
    int threads;
} prober;

static void prober_serve(int sock, size_t bytes, int threads)
{
    cf_bw_probe *p = cf_bw_probe_new(bytes, threads);
    char req;
    while (recv(sock, &req, 1, 0) == 1) {
        const double gbs = p ? cf_bw_probe_run(p, BW_REPS) : -1;
        if (cf_send(sock, &gbs, sizeof gbs) != (ssize_t)sizeof gbs)
            break;
    }
    cf_bw_probe_free(p);
}

static prober prober_start(size_t bytes, int threads)
{
    prober pr = {0, -1, bytes, threads};
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return pr;
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        prober_serve(sv[1], bytes, threads);
        _exit(0);
    }
    close(sv[1]);
    if (pid < 0)
        close(sv[0]);
    else
        pr = (prober){pid, sv[0], bytes, threads};
    return pr;
}

/* GB/s, negative when the probe could not be taken. */
static double prober_measure(const prober *pr)
{
    if (pr->pid > 0) {
        double gbs;
        if (cf_send(pr->sock, "p", 1) == 1 &&
            recv(pr->sock, &gbs, sizeof gbs, MSG_WAITALL) == (ssize_t)sizeof gbs)
            return gbs;
        return -1;
    }
    cf_bw_probe *p = cf_bw_probe_new(pr->bytes, pr->threads);
    const double gbs = p ? cf_bw_probe_run(p, BW_REPS) : -1;
    cf_bw_probe_free(p);
    return gbs;
}

static void prober_stop(const prober *pr)
{
    if (pr->pid > 0) {
        close(pr->sock);
        waitpid(pr->pid, NULL, 0);
    }
}

/* The share of the roofline (bandwidth bw GB/s) reading bytes a token
 * at tps tokens/s reaches. */
static double share_of(uint64_t bytes, double tps, double bw)
{
    return bw > 0 ? (double)bytes * tps / (bw * 1e9) : 0;
}

/* One warm-up run, then o->reps timed ones of each test (r->bytes_at
 * set: each generation run's share of the roofline is taken against a
 * probe just before it). */
static int run_tests(cf_ctx *c, const opts *o, const prober *pr, results *r, cf_err *err)
{
    double *secs = calloc(2 * (size_t)o->reps, sizeof *secs), *frac = secs + o->reps;
    if (!secs)
        return cf_fail(err, "out of memory");
    int rc = 0;
    if (o->n_prompt > 0) {
        rc = cf_bench_prompt(c, 0, o->n_prompt, err) < 0 ? -1 : 0;
        for (int i = 0; rc == 0 && i < o->reps; i++)
            rc = (secs[i] = cf_bench_prompt(c, 0, o->n_prompt, err)) < 0 ? -1 : 0;
        if (rc == 0)
            r->pp = tps(secs, o->reps, o->n_prompt);
    }
    if (rc == 0 && o->n_gen > 0) {
        rc = cf_bench_generate(c, 0, 1, err) < 0 ? -1 : 0;
        for (int d = 0; rc == 0 && d < (o->sweep ? N_DEPTHS : 1); d++) {
            for (int i = 0; rc == 0 && i < o->reps; i++) {
                const double bw = prober_measure(pr);
                rc = (secs[i] = cf_bench_generate(c, sweep_depths[d], o->n_gen, err)) < 0 ? -1 : 0;
                frac[i] = secs[i] > 0 ? share_of(r->bytes_at[d], o->n_gen / secs[i], bw) : 0;
                if (bw > 0) {
                    r->run_bw_lo = r->run_bw_lo > 0 ? fmin(r->run_bw_lo, bw) : bw;
                    r->run_bw_hi = fmax(r->run_bw_hi, bw);
                }
            }
            if (rc == 0) {
                r->tg_at[d] = tps(secs, o->reps, o->n_gen);
                r->run_frac[d] = mean_sd(frac, o->reps);
            }
        }
        r->tg = r->tg_at[0];
    }
    free(secs);
    return rc;
}

static double roofline_fraction(const results *r)
{
    return share_of(r->bytes_per_token, r->tg.mean, r->bandwidth_gbs);
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

/* whether the weights were copied into memory (else mapped) */
static bool weights_copied(const cf_model *m) { return cf_gguf_loaded_as(cf_model_gguf(m)) == CF_LOAD_COPY; }

static void print_json(const opts *o, const cf_model *m, const results *r)
{
    printf("{\"model\": ");
    json_str(o->model);
    printf(", \"model_name\": ");
    json_str(cf_model_name(m));
    printf(", \"isa\": \"%s\", \"threads\": %d, \"n_prompt\": %d, \"n_gen\": %d, \"reps\": %d, "
           "\"gpu_layers\": %d, \"type_k\": \"%s\", \"type_v\": \"%s\", \"kv_rotate\": %s, \"weights\": \"%s\", ",
           cf_isa_name(cf_isa_active()), o->threads, o->n_prompt, o->n_gen, o->reps, o->offloaded, cf_kv_type_name(o->kv.k),
           cf_kv_type_name(o->kv.v), o->kv.no_rotate ? "false" : "true", weights_copied(m) ? "copied" : "mapped");
    printf("\"pp_tps\": %.3f, \"pp_tps_sd\": %.3f, \"tg_tps\": %.3f, \"tg_tps_sd\": %.3f, ",
           r->pp.mean, r->pp.sd, r->tg.mean, r->tg.sd);
    printf("\"bandwidth_gbs\": %.3f, \"bytes_per_token\": %llu, \"roofline_fraction\": %.4f, ",
           r->bandwidth_gbs, (unsigned long long)r->bytes_per_token, roofline_fraction(r));
    printf("\"run_roofline_fraction\": %.4f, \"run_roofline_fraction_sd\": %.4f, \"run_bandwidth_gbs_min\": %.3f, "
           "\"run_bandwidth_gbs_max\": %.3f, ",
           r->run_frac[0].mean, r->run_frac[0].sd, r->run_bw_lo, r->run_bw_hi);
    printf("\"file_bytes\": %llu, \"kv_bytes\": %llu, \"kv_bytes_per_token\": %llu, \"peak_rss_bytes\": %llu",
           (unsigned long long)r->file_bytes, (unsigned long long)r->kv_bytes,
           (unsigned long long)r->kv_per_token,
           (unsigned long long)r->peak_rss);
    if (o->sweep) {
        printf(", \"ctx_sweep\": [");
        for (int d = 0; d < N_DEPTHS; d++)
            printf("%s{\"depth\": %d, \"tg_tps\": %.3f, \"tg_tps_sd\": %.3f, "
                   "\"bytes_per_token\": %llu, \"roofline_fraction\": %.4f, \"run_roofline_fraction\": %.4f, "
                   "\"run_roofline_fraction_sd\": %.4f}",
                   d ? ", " : "", sweep_depths[d], r->tg_at[d].mean, r->tg_at[d].sd,
                   (unsigned long long)r->bytes_at[d],
                   share_of(r->bytes_at[d], r->tg_at[d].mean, r->bandwidth_gbs), r->run_frac[d].mean,
                   r->run_frac[d].sd);
        printf("]");
    }
    printf("}\n");
}

static void table_row(const opts *o, const cf_model *m, const char *test, stats s)
{
    char size[32], params[32], backend[32];
    snprintf(size, sizeof size, "%.2f GiB", (double)cf_gguf_file_size(cf_model_gguf(m)) / (1 << 30));
    snprintf(params, sizeof params, "%.2f B", (double)cf_model_n_params(m) * 1e-9);
    if (o->offloaded) /* llama-bench's backend column, with its ngl */
        snprintf(backend, sizeof backend, "GPU ngl %d", o->offloaded);
    else
        snprintf(backend, sizeof backend, "CPU %s", cf_isa_name(cf_isa_active()));
    char cell[32];
    snprintf(cell, sizeof cell, "%.2f ± %.2f", s.mean, s.sd);
    printf("| %-36s | %9s | %8s | %-11s | %7d | %13s | %17s |\n", cf_model_name(m), size, params,
           backend, o->threads, test, cell);
}

/* The bandwidth, the roofline it sets and generation's share of it. */
static void print_roofline(const opts *o, const results *r)
{
    printf("\nmemory read bandwidth: %.1f GB/s (%d MiB buffer, %d threads, best of %d before and %d "
           "after the runs)\n",
           r->bandwidth_gbs, o->bw_mib, o->threads, BW_REPS, BW_REPS);
    printf("weights read per token: %.1f MB; roofline %.1f t/s", (double)r->bytes_per_token * 1e-6,
           r->bandwidth_gbs * 1e9 / (double)r->bytes_per_token);
    if (o->n_gen > 0)
        printf("; tg%d reaches %.1f %% of it", o->n_gen, 100 * roofline_fraction(r));
    for (int d = 1; o->sweep && o->n_gen > 0 && d < N_DEPTHS; d++)
        printf("\nat depth %d: %.1f MB per token (weights and K/V); tg%d reaches %.1f %% of that "
               "roofline", sweep_depths[d], (double)r->bytes_at[d] * 1e-6, o->n_gen,
               100 * share_of(r->bytes_at[d], r->tg_at[d].mean, r->bandwidth_gbs));
    if (o->n_gen > 0) {
        printf("\neach run against a probe just before it (%.1f-%.1f GB/s):", r->run_bw_lo, r->run_bw_hi);
        for (int d = 0; d < (o->sweep ? N_DEPTHS : 1); d++)
            if (o->sweep)
                printf("%s %.1f ± %.1f %% at %s%d", d ? "," : "", 100 * r->run_frac[d].mean,
                       100 * r->run_frac[d].sd, d ? "" : "depth ", sweep_depths[d]);
            else
                printf(" %.1f ± %.1f %% of the roofline", 100 * r->run_frac[d].mean, 100 * r->run_frac[d].sd);
    }
}

static void print_table(const opts *o, const cf_model *m, const results *r)
{
    printf("| %-36s | %9s | %8s | %-11s | %7s | %13s | %16s |\n", "model", "size", "params",
           "backend", "threads", "test", "t/s");
    printf("| %.36s | %.9s | %.8s | %.11s | %.7s | %.13s | %.16s |\n",
           "------------------------------------", "--------:", "-------:", "-----------",
           "------:", "------------:", "---------------:");
    char test[32];
    if (o->n_prompt > 0) {
        snprintf(test, sizeof test, "pp%d", o->n_prompt);
        table_row(o, m, test, r->pp);
    }
    for (int d = 0; o->n_gen > 0 && d < (o->sweep ? N_DEPTHS : 1); d++) {
        if (o->sweep)
            snprintf(test, sizeof test, "tg%d @ d%d", o->n_gen, sweep_depths[d]);
        else
            snprintf(test, sizeof test, "tg%d", o->n_gen);
        table_row(o, m, test, r->tg_at[d]);
    }
    const double mib = 1024.0 * 1024.0;
    if (r->bandwidth_gbs > 0)
        print_roofline(o, r);
    else
        printf("\nmemory read bandwidth: not measured (no %d MiB buffer to read), so no roofline", o->bw_mib);
    printf("\nweights: %s\n", weights_copied(m) ? "copied into memory (huge pages where the kernel has them)"
                                             : "mapped from the file");
    printf("KV cache: keys %s, values %s%s, %llu bytes a token\n", cf_kv_type_name(o->kv.k),
           cf_kv_type_name(o->kv.v), o->kv.no_rotate ? " (not rotated)" : "",
           (unsigned long long)r->kv_per_token);
    printf("peak RSS: %.1f MiB (file %.1f MiB + KV cache %.1f MiB + %.1f MiB other)\n",
           (double)r->peak_rss / mib, (double)r->file_bytes / mib, (double)r->kv_bytes / mib,
           ((double)r->peak_rss - (double)r->file_bytes - (double)r->kv_bytes) / mib);
}

static int parse(int argc, char **argv, opts *o, int *chat_turns, bool *restore, bool *spec, ui_draft *d)
{
    static const struct option lopts[] = {
        {"json", no_argument, 0, 'J'},          {"ctx-sweep", no_argument, 0, 'S'},
        {"kv-type", required_argument, 0, 'K'}, {"chat-turns", required_argument, 0, 'C'},
        {"cache-type-k", required_argument, 0, 'K'}, {"cache-type-v", required_argument, 0, 'K'},
        {"kv-rotate", required_argument, 0, 'K'},
        {"session-restore", no_argument, 0, 'R'}, {"bw-mib", required_argument, 0, 'B'},
        {"mmap", no_argument, 0, 'M'},          {"no-mmap", no_argument, 0, 'N'},
        {"help", no_argument, 0, 'h'},          {"draft", no_argument, 0, 'D'},
        {"model-draft", required_argument, 0, 'd'}, {"draft-max", required_argument, 0, 'd'},
        {"draft-min", required_argument, 0, 'd'}, {"draft-p-min", required_argument, 0, 'd'},
        {"lookup", no_argument, 0, 'd'},
        {"gpu-layers", required_argument, 0, 'G'}, {"device", required_argument, 0, 'G'},
        {0, 0, 0, 0},
    };
    long long v;
    int c, li = 0;
    optind = 1;
    ui_draft_argv(argc, argv);
    ui_cache_argv(argc, argv);
    ui_gpu_argv(argc, argv);
    while ((c = getopt_long(argc, argv, "m:p:n:t:r:h", lopts, &li)) != -1) {
        switch (c) {
        case 'm': o->model = optarg; break;
        case 'p':
            if (!cli_parse_int("-p", optarg, 0, 1 << 20, &v))
                return CF_EXIT_USAGE;
            o->n_prompt = (int)v;
            break;
        case 'n':
            if (!cli_parse_int("-n", optarg, 0, 1 << 20, &v))
                return CF_EXIT_USAGE;
            o->n_gen = (int)v;
            break;
        case 't':
            if (!cli_parse_threads("-t", optarg, &v))
                return CF_EXIT_USAGE;
            o->threads = (int)v;
            break;
        case 'r':
            if (!cli_parse_int("-r", optarg, 1, 1000, &v))
                return CF_EXIT_USAGE;
            o->reps = (int)v;
            break;
        case 'C':
            if (!cli_parse_int("--chat-turns", optarg, 1, 100000, &v))
                return CF_EXIT_USAGE;
            *chat_turns = (int)v;
            break;
        case 'M': o->load = CF_LOAD_MMAP; break;
        case 'N': o->load = CF_LOAD_COPY; break;
        case 'B':
            if (!cli_parse_int("--bw-mib", optarg, 16, 1 << 20, &v))
                return CF_EXIT_USAGE;
            o->bw_mib = (int)v;
            break;
        case 'K':
            if (ui_cache_option(&o->kv, lopts[li].name, optarg) < 0)
                return CF_EXIT_USAGE;
            break;
        case 'G':
            if (ui_gpu_option(&o->gpu, lopts[li].name, optarg) < 0)
                return CF_EXIT_USAGE;
            break;
        case 'J': o->json = true; break;
        case 'S': o->sweep = true; break;
        case 'R': *restore = true; break;
        case 'D': *spec = true; break;
        case 'd':
            if (ui_draft_option(d, lopts[li].name, optarg) < 0)
                return CF_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return -1;
        default: usage(stderr); return CF_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return CF_EXIT_USAGE;
    }
    return CF_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
    opts o = {.n_prompt = 512, .n_gen = 128, .threads = cf_cpu_cores(), .reps = 5,
              .bw_mib = 1024};
    ui_cache_init(&o.kv, CF_KV_F16);
    int chat_turns = 0;
    bool restore = false, spec = false;
    ui_draft draft;
    ui_draft_init(&draft);
    int rc = parse(argc, argv, &o, &chat_turns, &restore, &spec, &draft);
    if (rc != CF_EXIT_OK)
        return rc < 0 ? CF_EXIT_OK : rc;
    char *path = cli_resolve_model(o.model);
    if (!path)
        return CF_EXIT_USAGE;
    o.model = path;
    if ((draft.model || draft.lookup) && !spec) {
        cli_error("bench: -md and --lookup go with --draft");
        free(path);
        return CF_EXIT_USAGE;
    }
    if (spec) {
        rc = bench_spec(path, o.threads, o.n_gen, o.reps, &draft);
        free(path);
        return rc;
    }
    if (chat_turns || restore) {
        rc = chat_turns ? bench_chat_turns(path, chat_turns, o.threads)
                        : bench_session_restore(path, o.threads);
        free(path);
        return rc;
    }
    results r = {0};
    /* before anything else runs threads: the probe forks */
    const prober pr = prober_start((size_t)o.bw_mib << 20, o.threads);
    r.bandwidth_gbs = prober_measure(&pr);
    cf_err err;
    cf_model *m;
    if (cf_model_load_as(path, NULL, o.load, &m, &err) != 0) {
        cli_error("%s", err.msg);
        prober_stop(&pr);
        free(path);
        return CF_EXIT_MODEL;
    }
    const int depth = o.sweep ? sweep_depths[N_DEPTHS - 1] : 0;
    cf_ctx_params cp = {.n_ctx = (o.n_prompt > depth ? o.n_prompt : depth) + o.n_gen,
                        .n_batch = o.n_prompt > 512 ? o.n_prompt : 512,
                        .n_threads = o.threads,
                        .type_k = o.kv.k,
                        .type_v = o.kv.v,
                        .kv_no_rotate = o.kv.no_rotate,
                        .n_gpu_layers = o.gpu.layers,
                        .gpu_device = o.gpu.device};
    cf_ctx *c = NULL;
    if (cf_ctx_new(m, &cp, &c, &err) == 0) {
        ui_gpu_note(cf_ctx_gpu_note(c));
        o.offloaded = cf_ctx_gpu_layers(c, NULL);
        r.bytes_per_token = cf_model_bytes_per_token(m);
        for (int d = 0; d < N_DEPTHS; d++)
            r.bytes_at[d] = r.bytes_per_token + cf_ctx_kv_bytes(c, sweep_depths[d] + o.n_gen / 2);
    }
    if (!c || run_tests(c, &o, &pr, &r, &err) != 0) {
        cli_error("%s", err.msg);
        rc = CF_EXIT_ERROR;
    } else {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        r.peak_rss = (uint64_t)ru.ru_maxrss * 1024;
        /* the bandwidth a VM gets drifts over seconds: probe again after the
         * runs and keep the better reading, so the roofline is not one taken
         * in a slow moment */
        const double after = prober_measure(&pr);
        r.bandwidth_gbs = after > r.bandwidth_gbs ? after : r.bandwidth_gbs;
        r.kv_bytes = cf_ctx_kv_bytes(c, cf_ctx_n_ctx(c));
        r.kv_per_token = cf_ctx_kv_bytes(c, 1);
        r.file_bytes = cf_gguf_file_size(cf_model_gguf(m));
        if (o.json)
            print_json(&o, m, &r);
        else
            print_table(&o, m, &r);
    }
    prober_stop(&pr);
    cf_ctx_free(c);
    cf_model_free(m);
    free(path);
    return rc;
}
