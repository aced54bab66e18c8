/* confab serve: the engine behind the OpenAI chat completions protocol
 * (the server itself: src/serve).  Here only the options, the signals
 * that stop it and where its log goes. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache_opts.h"
#include "gpu_opts.h"
#include "cli.h"
#include "confab/serve.h"
#include "draft.h"
#include "confab/platform.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: confab serve -m FILE [--host ADDR] [--port N] [--api-key-env VAR] [options]\n"
            "\n"
            "Serve the model over the OpenAI chat completions protocol, for confab --endpoint\n"
            "and any other client of it: POST /v1/chat/completions, /v1/completions and\n"
            "/v1/responses (streamed or not), GET /v1/models[/ID], GET /health, GET /slots.\n"
            "Requests are answered by --parallel slots, in the order they come; each one's\n"
            "messages replace its slot's conversation, and the slot's cache keeps what the\n"
            "last one shares with it.  Stop with Ctrl-C or SIGTERM.\n"
            "\n"
            "  -m, --model FILE|NAME   the model, a file or a name 'confab models' lists\n"
            "                          (default: the one 'confab chat' would use)\n"
            "      --host ADDR         the address to listen on (default 127.0.0.1: this\n"
            "                          machine only; 0.0.0.0 for every interface)\n"
            "      --port N            the port (default 8080; 0: any free one)\n"
            "      --api-key-env VAR   ask for the key in $VAR (Authorization: Bearer KEY);\n"
            "                          without it, anyone who reaches the port may use it\n"
            "      --cors ORIGIN       the origin browsers may call from (Access-Control-Allow-\n"
            "                          Origin; '*' any; 'off' none); default '*' when --host\n"
            "                          is a loopback address, none otherwise\n"
            "      --model-id NAME     the model's name in the protocol (default: -m's name, or\n"
            "                          the file's); requests naming another model get 404\n"
            "  -c, --ctx-size N        context size in tokens (default: the model's, at most\n"
            "                          4096)\n"
            "  -t, --threads N         threads (default: the physical cores)\n"
            "  -np, --parallel N       slots answering at once (default 1, at most 64): each\n"
            "                          has -c / N of the context and its own cache; their\n"
            "                          replies decode together, a reply the same alone or not\n"
            "  -ctk T, -ctv T          the KV cache's key and value types: f32 (default),\n"
            "                          f16, q8_0, q4_0, bf16; --kv-type T both, --kv-rotate\n"
            "                          on|off a quantized cache's rotation (as for chat)\n"
            "  -ngl, --gpu-layers N    offload the last N layers to the GPU (99 or all:\n"
            "                          every layer and the output); --device N which GPU\n"
            "      --chat-template NAME, --chat-template-file FILE   as for confab chat\n"
            "  -v, --verbose           log each request's settings too\n"
            "  -md FILE, --lookup, --draft-max N, --draft-min N, --draft-p-min P\n"
            "                          speculative decoding, as for confab complete\n"
            "\n"
            "Every request and its outcome is logged on stderr, one line each.\n");
}

static void log_line(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "%s\n", line);
}

static void ready(void *ud, const char *host, int port)
{
    const cf_serve_params *p = ud;
    fprintf(stderr, "confab serve: listening on http://%s%s%s:%d/v1 (model '%s'%s)\n",
            strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port,
            p->model_id, p->api_key ? ", API key required" : "");
}

int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'},       {"host", required_argument, 0, 'H'},
        {"port", required_argument, 0, 'P'},        {"api-key-env", required_argument, 0, 'K'},
        {"model-id", required_argument, 0, 'I'},    {"ctx-size", required_argument, 0, 'c'},
        {"threads", required_argument, 0, 't'},     {"kv-type", required_argument, 0, 'k'},
        {"cache-type-k", required_argument, 0, 'k'}, {"cache-type-v", required_argument, 0, 'k'},
        {"kv-rotate", required_argument, 0, 'k'},
        {"chat-template", required_argument, 0, 'T'},
        {"chat-template-file", required_argument, 0, 'F'},
        {"cors", required_argument, 0, 'C'},
        {"verbose", no_argument, 0, 'v'},           {"help", no_argument, 0, 'h'},
        {"model-draft", required_argument, 0, 'd'}, {"draft-max", required_argument, 0, 'd'},
        {"draft-min", required_argument, 0, 'd'},   {"draft-p-min", required_argument, 0, 'd'},
        {"lookup", no_argument, 0, 'd'},
        {"gpu-layers", required_argument, 0, 'G'}, {"device", required_argument, 0, 'G'},
        {"parallel", required_argument, 0, 'N'},
        {0, 0, 0, 0},
    };
    ui_draft draft;
    ui_draft_init(&draft);
    ui_cache cache;
    ui_cache_init(&cache, CF_KV_F32);
    ui_gpu gpu = {0};
    cf_serve_params p = {.port = 8080, .stop = &stop, .log = log_line, .ready = ready};
    p.ud = &p;
    const char *model_opt = NULL, *key_env = NULL;
    long long v;
    int c, li = 0;
    optind = 1;
    opterr = 0;
    ui_draft_argv(argc, argv);
    ui_cache_argv(argc, argv);
    ui_gpu_argv(argc, argv);
    static char parallel[] = "--parallel"; /* llama-server's -np */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-np"))
            argv[i] = parallel;
    while ((c = getopt_long(argc, argv, ":m:c:t:vh", opts, &li)) != -1) {
        switch (c) {
        case 'm': model_opt = optarg; break;
        case 'H': p.host = optarg; break;
        case 'P':
            if (!cli_parse_int("--port", optarg, 0, 65535, &v))
                return CF_EXIT_USAGE;
            p.port = (int)v;
            break;
        case 'K': key_env = optarg; break;
        case 'I': p.model_id = optarg; break;
        case 'C': p.cors = strcmp(optarg, "off") ? optarg : ""; break;
        case 'c':
            if (!cli_parse_int("--ctx-size", optarg, 0, 1 << 20, &v))
                return CF_EXIT_USAGE;
            p.session.n_ctx = (int)v;
            break;
        case 't':
            if (!cli_parse_threads("--threads", optarg, &v))
                return CF_EXIT_USAGE;
            p.session.n_threads = (int)v;
            break;
        case 'k':
            if (ui_cache_option(&cache, opts[li].name, optarg) < 0)
                return CF_EXIT_USAGE;
            break;
        case 'G':
            if (ui_gpu_option(&gpu, opts[li].name, optarg) < 0)
                return CF_EXIT_USAGE;
            break;
        case 'N':
            if (!cli_parse_int("--parallel", optarg, 1, CF_SERVE_MAX_PARALLEL, &v))
                return CF_EXIT_USAGE;
            p.n_parallel = (int)v;
            break;
        case 'T': p.session.chat_template = optarg; break;
        case 'F': p.session.chat_template_file = optarg; break;
        case 'v': p.verbose = true; break;
        case 'd':
            if (ui_draft_option(&draft, opts[li].name, optarg) < 0)
                return CF_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CF_EXIT_OK;
        case ':':
            cli_error("serve: %s needs a value", argv[optind - 1]);
            return CF_EXIT_USAGE;
        default:
            cli_error("serve: unknown option '%s' (see confab serve --help)", argv[optind - 1]);
            return CF_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("serve: unexpected argument '%s'", argv[optind]);
        return CF_EXIT_USAGE;
    }
    if (key_env) {
        p.api_key = getenv(key_env);
        if (!p.api_key || !*p.api_key) {
            cli_error("--api-key-env: $%s is not set (or empty)", key_env);
            return CF_EXIT_USAGE;
        }
    }
    char *model = cli_resolve_model(model_opt), *draft_path = NULL;
    if (!model || (draft.model && !(draft_path = cli_model_path(draft.model)))) {
        free(model);
        return CF_EXIT_MODEL;
    }
    p.session.model_path = model;
    p.session.type_k = cache.k;
    p.session.type_v = cache.v;
    p.session.kv_no_rotate = cache.no_rotate;
    p.session.n_gpu_layers = gpu.layers;
    p.session.gpu_device = gpu.device;
    p.session.draft_model = draft_path;
    p.session.lookup = draft.lookup;
    p.session.spec = &draft.p;
    if (!p.session.n_threads)
        p.session.n_threads = cf_cpu_cores();
    /* a store's name (qwen3:0.6b) names it better than its blob's file */
    const char *slash = strrchr(model, '/');
    if (!p.model_id)
        p.model_id = model_opt && *model_opt && access(model_opt, F_OK) != 0 ? model_opt
                     : slash                                              ? slash + 1
                                                                          : model;
    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    cf_err err = {.msg = ""};
    int rc = cf_serve_run(&p, &err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    int status = CF_EXIT_OK;
    if (rc) {
        cli_error("%s", err.msg);
        status = cli_exit_for(&err);
    } else {
        fprintf(stderr, "confab serve: stopped\n");
    }
    free(model);
    free(draft_path);
    return status;
}
