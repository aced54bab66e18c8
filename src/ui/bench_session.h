/* The chat and session benchmarks of `confab bench` (--chat-turns,
 * --session-restore).  Each prints its own report and returns an exit code. */
#ifndef CONFAB_UI_BENCH_SESSION_H
#define CONFAB_UI_BENCH_SESSION_H

int bench_chat_turns(const char *model, int turns, int threads);
int bench_session_restore(const char *model, int threads);

#endif
