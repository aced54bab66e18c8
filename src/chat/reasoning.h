/* Reasoning in replies: the markers each model family writes around its
 * thinking, and the split of a reply's text into reasoning and content as
 * it streams.
 *
 * Families (the markers come from the chat template's source, else from
 * the vocabulary):
 *   think     <think> ... </think>       Qwen3, Qwen3.5, DeepSeek-R1/V3.1,
 *                                        SmolLM3, Kimi-K2
 *   gemma4    <|channel>thought ... <channel|>
 *   mistral   [THINK] ... [/THINK]       Ministral/Magistral reasoning
 *   command-r <|START_THINKING|> ... <|END_THINKING|>
 *   gpt-oss   channels: <|start|>assistant<|channel|>analysis<|message|>
 *             ... <|end|>, then <|channel|>final<|message|> ... <|return|>
 *             (the analysis channel is reasoning, every other channel
 *             content; <|call|> ends a tool call; text outside any
 *             message is content, as llama.cpp's harmony parser has it:
 *             a header that a newline, 128 bytes, an end marker or the
 *             reply's end cuts off before <|message|> was none)
 * Tag families take the opening tag only at the start of a reply (leading
 * blanks aside): a reply that talks about "<think>" later is content.
 * Reasoning loses the blanks at its ends, content those right after the
 * closing tag; content with no reasoning before it is kept byte for byte.
 *
 * The splitter works on byte offsets into the reply's raw text (token
 * pieces, marker tokens included), so a marker cut across tokens or a
 * character cut across tokens changes nothing; what could still become a
 * marker is held back until it is decided. */
#ifndef CONFAB_CHAT_REASONING_H
#define CONFAB_CHAT_REASONING_H

#include <stdbool.h>
#include <stddef.h>

typedef enum reasoning_family {
    RF_NONE,
    RF_THINK,
    RF_GEMMA4,
    RF_MISTRAL,
    RF_COMMAND_R,
    RF_HARMONY,
} reasoning_family;

/* "think", "gpt-oss", ... ("none" for RF_NONE), and back (RF_NONE for
 * an unknown name). */
const char *reasoning_family_name(reasoning_family f);
reasoning_family reasoning_family_named(const char *name);
/* The family whose markers a chat template's source writes, or RF_NONE. */
reasoning_family reasoning_detect(const char *src, size_t len);
/* Whether the text of a control token belongs to the family's markup
 * (such tokens are kept in the raw text though their text is hidden). */
bool reasoning_is_markup(reasoning_family f, const char *text, size_t len);
/* Whether an end-of-generation token with this text only closes a
 * channel in this family (gpt-oss's <|end|>), so the reply goes on. */
bool reasoning_continues(reasoning_family f, const char *text, size_t len);

typedef enum split_kind { SPLIT_CONTENT, SPLIT_REASONING } split_kind;

/* Body bytes text[at, at + len) of a kind, in order. */
typedef void (*split_emit)(void *ud, split_kind kind, size_t at, size_t len);

typedef struct splitter {
    reasoning_family fam;
    int state;
    size_t pos;            /* bytes of the text consumed */
    size_t ws_at, ws_len;  /* blanks held back (reasoning ends, a reply's start) */
    bool any;              /* the reasoning block has body text */
    bool skip_ws;          /* drop blanks (content right after a closing tag) */
    bool touched;          /* was in reasoning since the caller last cleared it */
    char chan[16];         /* gpt-oss: the channel a header names */
    size_t chan_len;
    bool in_chan;
    size_t hdr_at, hdr_len; /* gpt-oss: the header's text since its last marker */
} splitter;

void split_init(splitter *sp, reasoning_family f);
/* Take the state the generation prompt leaves (text after the last
 * message): a template that opens the thinking block itself starts the
 * reply inside it. */
void split_prime(splitter *sp, const char *tail, size_t len);
/* Consume text[sp->pos, len): emit body ranges, hold back what could
 * still be a marker; flush: the text ends here (held bytes are body text,
 * trailing blanks of reasoning dropped). */
void split_feed(splitter *sp, const char *text, size_t len, bool flush, split_emit emit, void *ud);
bool split_in_reasoning(const splitter *sp);
/* gpt-oss: inside a header, the kind of what follows not yet known. */
bool split_in_header(const splitter *sp);

#endif
