/* Placeholders until the session benchmarks land. */
#include "bench_session.h"
#include "cli.h"

int bench_chat_turns(const char *model, int turns, int threads)
{
    (void)model;
    (void)turns;
    (void)threads;
    cli_error("'bench --chat-turns' is not available in this build yet");
    return CF_EXIT_ERROR;
}

int bench_session_restore(const char *model, int threads)
{
    (void)model;
    (void)threads;
    cli_error("'bench --session-restore' is not available in this build yet");
    return CF_EXIT_ERROR;
}
