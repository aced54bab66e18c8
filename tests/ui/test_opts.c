/* The chat options: command line, config file, presets, --help. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "cli.h"
#include "opts.h"
#include "prompts.h"

static int parse(chat_opts *o, const char *const *args, int n)
{
    char *argv[32];
    argv[0] = (char *)"chat";
    for (int i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    opts_init(o);
    return opts_parse_args(o, n + 1, argv);
}

#define ARGS(...) (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)

static const char *setting(const chat_opts *o, const char *name)
{
    for (int i = 0; i < OPTS_N_SETTINGS; i++)
        if (!strcmp(opts_setting_names[i], name))
            return o->settings[i];
    return NULL;
}

/* llama.cpp's cache types, keys and values apart, and the rotation */
static void test_cache_args(void)
{
    chat_opts o;
    CHECK(parse(&o, ARGS("-ctk", "q8_0", "-ctv", "q4_0", "--kv-rotate", "off")) == 0);
    CHECK(o.cache.k == CF_KV_Q8_0 && o.cache.v == CF_KV_Q4_0 && o.cache.no_rotate);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--cache-type-k=bf16")) == 0);
    CHECK(o.cache.k == CF_KV_BF16 && o.cache.v == CF_KV_F16 && !o.cache.no_rotate);
    opts_free(&o);
    CHECK(parse(&o, ARGS("-ctk", "q9")) != 0);
    opts_free(&o);
}

static void test_args(void)
{
    chat_opts o;
    CHECK(parse(&o, ARGS("-m", "x.gguf", "-c", "1024", "-t", "1", "-n", "50", "--temp", "0.3",
                         "--top-k=7", "--kv-type", "f32", "--tui", "--system", "Be brief.",
                         "--session", "s.bin", "--autosave", "--seed", "random")) == 0);
    CHECK(o.model && !strcmp(o.model, "x.gguf"));
    CHECK(o.n_ctx == 1024 && o.n_threads == 1 && o.cache.k == CF_KV_F32 && o.cache.v == CF_KV_F32);
    CHECK(o.tui && o.autosave && !o.whole);

    CHECK(setting(&o, "n-predict") && !strcmp(setting(&o, "n-predict"), "50"));
    CHECK(setting(&o, "temp") && !strcmp(setting(&o, "temp"), "0.3"));
    CHECK(setting(&o, "top-k") && !strcmp(setting(&o, "top-k"), "7"));
    CHECK(setting(&o, "seed") && !strcmp(setting(&o, "seed"), "random"));
    CHECK(!setting(&o, "top-p"));
    CHECK(o.system_from == SYSTEM_TEXT && !strcmp(o.system, "Be brief."));
    CHECK(o.session && !strcmp(o.session, "s.bin"));
    opts_free(&o);

    /* the later of --system and --system-file wins */
    CHECK(parse(&o, ARGS("--system", "a", "--system-file", "storyteller")) == 0);
    CHECK(o.system_from == SYSTEM_FILE && !strcmp(o.system, "storyteller"));
    opts_free(&o);
    CHECK(parse(&o, ARGS("-p", "hi", "--whole", "--verbose", "--no-color", "-h")) == 0);
    CHECK(o.prompt && o.whole && o.verbose && o.no_color && o.help);
    CHECK(o.load_mode == CF_LOAD_AUTO);
    opts_free(&o);
    /* how the weights load: the later flag wins */
    CHECK(parse(&o, ARGS("--no-mmap")) == 0 && o.load_mode == CF_LOAD_COPY);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--no-mmap", "--mmap")) == 0 && o.load_mode == CF_LOAD_MMAP);
    opts_free(&o);
    /* markdown is on unless told */
    CHECK(parse(&o, ARGS("-m", "x")) == 0 && o.markdown);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--markdown", "off")) == 0 && !o.markdown);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--markdown=on")) == 0 && o.markdown);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--markdown", "fancy")) < 0);
    opts_free(&o);

    /* every bad input is refused */
    CHECK(parse(&o, ARGS("--temp", "warm")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--top-k", "1.5")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("-c", "-5")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--kv-type", "q4")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--frobnicate")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("-m")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--tui=yes")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("stray")) < 0);
    opts_free(&o);
    CHECK(parse(&o, ARGS("-x")) < 0);
    opts_free(&o);
}

/* What a call printed on stderr (its last line), into buf. */
static char err_text[1024];
static const char *stderr_tail(void)
{
    fflush(stderr);
    static long seen;
    FILE *f = fopen(getenv("OPTS_ERR"), "r");
    err_text[0] = 0;
    if (f) {
        fseek(f, seen, SEEK_SET);
        size_t n = fread(err_text, 1, sizeof err_text - 1, f);
        err_text[n] = 0;
        seen += (long)n;
        fclose(f);
    }
    return err_text;
}

/* One validator and one wording for the command line and the config
 * file; a missing value is named; -t is capped at the CPUs online. */
static void test_values(const char *dir)
{
    chat_opts o;
    stderr_tail();
    CHECK(parse(&o, ARGS("-m", "-p", "hi")) < 0);
    CHECKF(strstr(stderr_tail(), "-m needs a value (FILE) before -p\n"), "%s", err_text);
    opts_free(&o);
    CHECK(parse(&o, ARGS("-n", "-1", "--seed", "-1")) == 0 && !strcmp(setting(&o, "n-predict"), "-1"));
    opts_free(&o);
    CHECK(parse(&o, ARGS("--repeat-penalty", "0")) < 0);
    CHECKF(strstr(stderr_tail(), "--repeat-penalty: '0' is not a number above 0 up to 100\n"), "%s",
           err_text);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--repeat-penalty", "-2")) < 0);
    CHECKF(strstr(stderr_tail(), "--repeat-penalty: '-2' is not a number above 0 up to 100\n"),
           "%s", err_text);
    opts_free(&o);
    CHECK(parse(&o, ARGS("--repeat-last-n", "-1", "--probs", "1", "--thinking", "yes",
                         "--markdown", "no", "--temperature", "0.2")) == 0);
    CHECK(!strcmp(setting(&o, "repeat-last-n"), "-1") && !o.markdown);
    CHECK(!strcmp(setting(&o, "temp"), "0.2"));
    opts_free(&o);
    CHECK(parse(&o, ARGS("--thinking", "maybe")) < 0);
    CHECKF(strstr(stderr_tail(), "--thinking: 'maybe' is not one of auto, on, off\n"), "%s",
           err_text);
    opts_free(&o);
    CHECK(parse(&o, ARGS("-t", "100000")) < 0);
    opts_free(&o);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    stderr_tail();
    CHECK(parse(&o, ARGS("-t", "1024")) == 0 && o.n_threads == (online < 1024 ? online : 1024));
    CHECKF(online >= 1024 || strstr(stderr_tail(), "-t 1024: only "), "%s", err_text);
    opts_free(&o);

    /* the config file: the same names (ollama's too) and the same words */
    char path[512];
    snprintf(path, sizeof path, "%s/values", dir);
    FILE *f = fopen(path, "w");
    fputs("temperature = 0.7\ntop_k = 5\nrepeat-penalty = -2\n", f);
    fclose(f);
    opts_init(&o);
    CHECK(config_load(&o, path) == 1);
    CHECKF(strstr(stderr_tail(), "/values:3: repeat-penalty: '-2' is not a number above 0 up to "
                                 "100\n"),
           "%s", err_text);
    CHECK(!strcmp(setting(&o, "temp"), "0.7") && !strcmp(setting(&o, "top-k"), "5"));
    opts_free(&o);
}

static void test_config(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/config", dir);
    FILE *f = fopen(path, "w");
    fputs("# defaults\n"
          "temp = 0.5\n"
          "  model=  m.gguf  \n"
          "tmep = 1\n"             /* 4: unknown key */
          "top-k = many\n"         /* 5: bad value */
          "no equals sign\n"       /* 6: not key = value */
          "system = \"  spaced  \"\n"
          "autosave = yes\n"
          "markdown = off\n"
          "tui = maybe\n"          /* 9: bad flag */
          "prompt = hi\n"          /* 10: command line only */
          "\n"
          "ctx-size = 2048\n",
          f);
    fclose(f);
    chat_opts o;
    opts_init(&o);
    CHECKF(config_load(&o, path) == 5, "errors counted");
    CHECK(setting(&o, "temp") && !strcmp(setting(&o, "temp"), "0.5"));
    CHECK(!setting(&o, "top-k"));
    CHECK(o.model && !strcmp(o.model, "m.gguf"));
    CHECK(o.system && !strcmp(o.system, "  spaced  "));
    CHECK(o.autosave && !o.tui && !o.prompt && o.n_ctx == 2048 && !o.markdown);
    /* the command line overrides the file */
    char *argv[] = {(char *)"chat", (char *)"--temp", (char *)"0.9", NULL};
    CHECK(opts_parse_args(&o, 3, argv) == 0);
    CHECK(!strcmp(setting(&o, "temp"), "0.9"));
    opts_free(&o);
    opts_init(&o);
    snprintf(path, sizeof path, "%s/none", dir);
    CHECK(config_load(&o, path) == 0);
    opts_free(&o);
}

static void test_presets(const char *dir)
{
    char *text = prompt_load("storyteller");
    CHECK(text && strstr(text, "storyteller") && text[strlen(text) - 1] != '\n');
    free(text);
    /* a user preset comes first */
    char path[512];
    snprintf(path, sizeof path, "%s/confab", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/confab/prompts", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/confab/prompts/storyteller.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("mine\n\n", f);
    fclose(f);
    setenv("XDG_CONFIG_HOME", dir, 1);
    text = prompt_load("storyteller");
    CHECKF(text && !strcmp(text, "mine"), "user preset: '%s'", text);
    free(text);
    /* a path is read as it is */
    text = prompt_load(path);
    CHECK(text && !strcmp(text, "mine"));
    free(text);
    CHECK(prompt_load("no-such-preset") == NULL);
    CHECK(prompt_load("/no/such/file.txt") == NULL);
}

static void test_help(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/help.txt", dir);
    FILE *f = fopen(path, "w+");
    opts_help(f);
    fflush(f);
    rewind(f);
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    static const char *const want[] = {
        "Model:", "Sampling", "Conversation:", "Interface:", "-m, --model FILE", "-c, --ctx-size N",
        "-t, --threads N", "-n, --n-predict N", "-p, --prompt TEXT", "--temp X", "--top-k N",
        "--top-p X", "--min-p X", "--typical X", "--repeat-penalty X", "--repeat-last-n N",
        "--presence-penalty X", "--frequency-penalty X", "--seed N|random", "--kv-type TYPE",
        "--cache-type-k TYPE", "--cache-type-v TYPE", "--kv-rotate on|off",
        "--chat-template NAME", "--chat-template-file FILE", "--system TEXT",
        "--system-file FILE|NAME", "--session FILE", "--autosave", "--tui", "--whole",
        "--verbose", "--no-color", "--markdown on|off", "--tokenizer FILE", "-h, --help",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECKF(strstr(buf, want[i]), "--help lacks '%s'", want[i]);
}

int main(void)
{
    char dir[] = "/tmp/confab-test-opts.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
    test_args();
    test_cache_args();
    char err[600];
    snprintf(err, sizeof err, "%s/stderr", dir);
    setenv("OPTS_ERR", err, 1);
    int saved = dup(2);
    if (!freopen(err, "w", stderr))
        return 1;
    test_values(dir);
    fflush(stderr);
    dup2(saved, 2);
    /* what it printed, failures included, where they can be seen */
    char *text = cli_read_file(err, NULL);
    fputs(text ? text : "", stderr);
    free(text);
    test_config(dir);
    test_presets(dir);
    test_help(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return test_summary("ui-opts");
}
