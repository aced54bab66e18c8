/* Built-in chat formats and their detection, against llama.cpp: the phi3
 * model's recorded llm_chat_apply_template output (refs/phi3.Q8_0.chat.json)
 * and the expectations of llama.cpp's tests/test-chat-template.cpp for its
 * six-message conversation; the formats that test does not cover follow
 * llama-chat.cpp's code.  Also the session's choice rule and stop strings. */
#include "harness.h"
#include "tt_util.h"

#include "confab/template.h"

static const cf_chat_msg conv[] = {
    {"system", "You are a helpful assistant", NULL},
    {"user", "Hello", NULL},
    {"assistant", "Hi there", NULL},
    {"user", "Who are you", NULL},
    {"assistant", "   I am an assistant   ", NULL},
    {"user", "Another question", NULL},
};

static const struct {
    const char *name;
    const char *tmpl; /* a Jinja template llama.cpp detects as `name` */
    const char *expected;
} cases[] = {
    {"chatml",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
     "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n"},
    {"llama2",
     "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% endif %}{% endfor %}",
     "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
    {"llama2-sys",
     "{% if messages[0]['role'] == 'system' %}{{ '[INST] <<SYS>>\\n' + messages[0]['content'] + '\\n<</SYS>>\\n\\n' }}{% endif %}",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
    {"llama2-sys-bos",
     "{%- for idx in range(0, messages|length) -%}\n{%- if messages[idx]['role'] == 'user' -%}\n{%- if idx > 1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == 'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}\n{%- elif messages[idx]['role'] == 'assistant' -%}\n{{- ' '  + messages[idx]['content'] + ' ' + eos_token -}}\n{% endif %}\n{% endfor %}",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]"},
    {"llama2-sys-strip",
     "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'system' %}{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}{% endif %}{% endfor %}",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>[INST] Another question [/INST]"},
    {"monarch",
     "{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + eos_token + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}",
     "system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n<s>assistant\n"},
    {"gemma",
     "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}",
     "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n"},
    {"orion",
     "{% for message in messages %}{% if loop.first %}{{ bos_token }}{% endif %}{% if message['role'] == 'user' %}{{ 'Human: ' + message['content'] + '\\n\\nAssistant: ' + eos_token }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}",
     "Human: You are a helpful assistant\n\nHello\n\nAssistant: </s>Hi there</s>Human: Who are you\n\nAssistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: </s>"},
    {"openchat",
     "{{ bos_token }}{% for message in messages %}{{ 'GPT4 Correct ' + message['role'].title() + ': ' + message['content'] + '<|end_of_turn|>'}}{% endfor %}{% if add_generation_prompt %}{{ 'GPT4 Correct Assistant:' }}{% endif %}",
     "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   <|end_of_turn|>GPT4 Correct User: Another question<|end_of_turn|>GPT4 Correct Assistant:"},
    {"deepseek",
     "{%- for message in messages %}{%- if message['role'] == 'user' %}{{'### Instruction:\\n' + message['content'] + '\\n'}}{%- else %}{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}{%- endif %}{%- endfor %}",
     "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\nAnother question\n### Response:\n"},
    {"vicuna",
     "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{- '' + message['content'] + '\n\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
     "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"vicuna-orca",
     "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{-'SYSTEM: ' + message['content'] + '\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%}",
     "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"command-r",
     "{{ bos_token }}{% for message in loop_messages %}{% if message['role'] == 'user' %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% endfor %}",
     "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
    {"llama3",
     "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}",
     "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"phi3",
     "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
    {"chatglm3",
     "{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n {{ message['content'] }}{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
     "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question<|assistant|>"},
    {"chatglm4",
     "[gMASK]<sop>{% for item in messages %}{% if item['content'] %}<|{{ item['role'] }}|>{{ item['metadata'] }}\n{{ item['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
     "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>\n"},
    {"glmedge",
     "{% for item in messages %}{% if item['role'] == 'system' %}<|system|>\n{{ item['content'] }}{% elif item['role'] == 'user' %}<|user|>\n{{ item['content'] }}{% elif item['role'] == 'assistant' %}<|assistant|>\n{{ item['content'] }}{% endif %}{% endfor %}<|assistant|>",
     "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
    {"minicpm",
     "{% for message in messages %}{% if message['role'] == 'user' %}{{'<\xE7\x94\xA8\xE6\x88\xB7>' + message['content'].strip() + '<AI>'}}{% else %}{{message['content'].strip()}}{% endif %}{% endfor %}",
     "You are a helpful assistant<\xE7\x94\xA8\xE6\x88\xB7>Hello<AI>Hi there<\xE7\x94\xA8\xE6\x88\xB7>Who are you<AI>I am an assistant<\xE7\x94\xA8\xE6\x88\xB7>Another question<AI>"},
    {"deepseek2",
     "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}{% endif %}{% endfor %}",
     "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>User: Who are you\n\nAssistant:    I am an assistant   <\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>User: Another question\n\nAssistant:"},
    {"granite",
     "{%- for message in messages %}{{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}{%- endfor %}",
     "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>Hi there<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>   I am an assistant   <|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>"},
    {"mistral-v1",
     "{{- bos_token }}{%- for message in loop_messages %}{%- if loop.first and system_message is defined %}{{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}{%- endif %}{%- endfor %}",
     " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]"},
    {"mistral-v3",
     "{%- for message in loop_messages %}{{- \"[AVAILABLE_TOOLS] [\" }}{{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}{%- endfor %}",
     "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an assistant</s>[INST] Another question[/INST]"},
    {"mistral-v3-tekken",
     "{%- for message in loop_messages %}{{- \"[AVAILABLE_TOOLS][\" }}{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}{%- endfor %}",
     "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]"},
    {"mistral-v7",
     "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}{% endif %}{% endfor %}",
     "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]"},
    {"gigachat",
     "{%- if loop.index0 == 0 -%}{{ message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1] -}}{%- endif -%}",
     "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi there<|message_sep|>user<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>   I am an assistant   <|message_sep|>user<|role_sep|>Another question<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>"},
    {"megrez",
     "{% for message in messages %}{{ '<|role_start|>' + message['role'] + '<|role_end|>' + message['content'] + '<|turn_end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|role_start|>assistant<|role_end|>' }}{% endif %}",
     "<|role_start|>system<|role_end|>You are a helpful assistant<|turn_end|><|role_start|>user<|role_end|>Hello<|turn_end|><|role_start|>assistant<|role_end|>Hi there<|turn_end|><|role_start|>user<|role_end|>Who are you<|turn_end|><|role_start|>assistant<|role_end|>   I am an assistant   <|turn_end|><|role_start|>user<|role_end|>Another question<|turn_end|><|role_start|>assistant<|role_end|>"},
    {"phi4",
     "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|><|im_start|>assistant<|im_sep|>'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}",
     "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   <|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant<|im_sep|>"},
    {"bailing",
     "{% for message in messages %}{% set role = message['role'] | lower %}{% if role == 'user' %}{% set role = 'HUMAN' %}{% endif %}{% set role = role | upper %}{{ '<role>' + role + '</role>' + message['content'] }}{% endfor %}{% if add_generation_prompt %}{{ '<role>ASSISTANT</role>' }}{% endif %}",
     "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   <role>HUMAN</role>Another question<role>ASSISTANT</role>"},
    /* formats llama.cpp's test does not cover: as llama-chat.cpp writes them */
    {"zephyr", "{{ '<|user|>\\n' + message['content'] + '<|endoftext|>' }}",
     "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n   I am an assistant   <|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n<|assistant|>\n"},
    {"falcon3", "{{ '<|user|>\\n' + content + '</s>' }}{{ '<|assistant|>\\n' }}",
     "<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\nHi there\n<|user|>\nWho are you\n<|assistant|>\n   I am an assistant   \n<|user|>\nAnother question\n<|assistant|>\n"},
    {"deepseek3",
     "{{'<\xEF\xBD\x9CUser\xEF\xBD\x9C>' + content + '<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>' + '<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>'}}",
     "You are a helpful assistant\n\n<\xEF\xBD\x9CUser\xEF\xBD\x9C>Hello<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>Hi there<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C><\xEF\xBD\x9CUser\xEF\xBD\x9C>Who are you<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>   I am an assistant   <\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C><\xEF\xBD\x9CUser\xEF\xBD\x9C>Another question<\xEF\xBD\x9C" "Assistant\xEF\xBD\x9C>"},
    {"exaone3", "[|system|]{{ c }}[|endofturn|][|assistant|]",
     "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
    {"exaone4", "[|system|]{{ c }}[|endofturn|][|assistant|][|tool|]",
     "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
    {"rwkv-world", "rwkv-world",
     "System: You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there\n\nUser: Who are you\n\nAssistant: I am an assistant\n\nUser: Another question\n\nAssistant:"},
    {"llama4", "<|header_start|>{{ role }}<|header_end|>",
     "<|header_start|>system<|header_end|>\n\nYou are a helpful assistant<|eot|><|header_start|>user<|header_end|>\n\nHello<|eot|><|header_start|>assistant<|header_end|>\n\nHi there<|eot|><|header_start|>user<|header_end|>\n\nWho are you<|eot|><|header_start|>assistant<|header_end|>\n\nI am an assistant<|eot|><|header_start|>user<|header_end|>\n\nAnother question<|eot|><|header_start|>assistant<|header_end|>\n\n"},
    {"smolvlm", "<|im_start|>{{ 'User: ' + c + '<end_of_utterance>' }}",
     "<|im_start|>You are a helpful assistant\n\nUser: Hello<end_of_utterance>\nAssistant: Hi there<end_of_utterance>\nUser: Who are you<end_of_utterance>\nAssistant:    I am an assistant   <end_of_utterance>\nUser: Another question<end_of_utterance>\nAssistant:"},
    {"mistral-v7-tekken", "mistral-v7-tekken",
     "[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT][INST]Hello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]"},
    {"none", NULL,
     "You are a helpful assistantHelloHi thereWho are you   I am an assistant   Another question"},
};

static char *render(const cf_chat_template *t, const cf_chat_msg *msgs, size_t n, bool agp, cf_err *err)
{
    cf_chat_opts o = {0};
    o.add_generation_prompt = agp;
    char *out = NULL;
    if (cf_chat_render(t, msgs, n, &o, &out, NULL, err) < 0)
        return NULL;
    return out;
}

static void test_llama_cpp_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cf_chat_template *t;
        cf_err err;
        CHECKF(cf_chat_template_from_name(cases[i].name, &t, &err) == 0, "%s: %s", cases[i].name, err.msg);
        char *out = render(t, conv, 6, true, &err);
        CHECKF(out && strcmp(out, cases[i].expected) == 0, "%s:\n--- expected ---\n%s\n--- got ---\n%s",
               cases[i].name, cases[i].expected, out ? out : err.msg);
        free(out);
        cf_chat_template_free(t);
        if (cases[i].tmpl) {
            const char *d = cf_chat_detect(cases[i].tmpl, strlen(cases[i].tmpl));
            CHECKF(d && strcmp(d, cases[i].name) == 0, "detect %s: got %s", cases[i].name, d ? d : "none");
        }
    }
    /* every built-in is covered above */
    for (const char *const *n = cf_chat_builtin_names(); *n; n++) {
        bool found = false;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            found |= strcmp(cases[i].name, *n) == 0;
        CHECKF(found, "built-in %s has no test", *n);
    }
    CHECK(cf_chat_detect("INVALID TEMPLATE", 16) == NULL);
    CHECK(cf_chat_detect("", 0) == NULL);
}

static void test_phi3_reference(void)
{
    cf_json *ref = json_load_file(shared_path("refs/phi3.Q8_0.chat.json"));
    CHECK(ref != NULL);
    if (!ref)
        return;
    const char *tmpl = tt_str(ref, "chat_template");
    CHECK(tmpl && cf_chat_detect(tmpl, strlen(tmpl)) && strcmp(cf_chat_detect(tmpl, strlen(tmpl)), "phi3") == 0);
    /* the session's path: the GGUF template is Jinja and renders the same */
    cf_chat_choice choice = {0};
    choice.gguf_template = tmpl;
    choice.gguf_len = strlen(tmpl);
    choice.eos_token = "<|endoftext|>";
    cf_chat_template *builtin, *jinja;
    cf_err err;
    CHECK(cf_chat_template_from_name("phi3", &builtin, &err) == 0);
    CHECK(cf_chat_template_choose(&choice, &jinja, NULL, 0, &err) == 0);
    CHECK(strcmp(cf_chat_template_label(jinja), "jinja (from GGUF)") == 0);
    const cf_json *convs = cf_json_get(ref, "conversations");
    for (size_t i = 0; convs && i < convs->n; i++) {
        const cf_json *c = convs->items[i], *msgs = cf_json_get(c, "messages");
        const char *expected = tt_str(c, "formatted");
        bool agp = cf_json_get(c, "add_generation_prompt")->b;
        char *text = cf_json_dump(msgs, NULL, NULL), *out = NULL;
        cf_chat_opts o = {0};
        o.add_generation_prompt = agp;
        CHECK(cf_chat_render_json(builtin, text, strlen(text), &o, &out, NULL, &err) == 0);
        CHECKF(out && strcmp(out, expected) == 0, "phi3 %s: got [%s]", tt_str(c, "id"), out ? out : err.msg);
        free(out);
        /* the Jinja template differs only without a generation prompt (it adds eos_token) */
        o.eos_token = "<|endoftext|>";
        CHECK(cf_chat_render_json(jinja, text, strlen(text), &o, &out, NULL, &err) == 0);
        if (agp)
            CHECKF(out && strcmp(out, expected) == 0, "phi3 jinja %s: got [%s]", tt_str(c, "id"), out);
        free(out);
        free(text);
    }
    cf_chat_template_free(builtin);
    cf_chat_template_free(jinja);
    cf_json_free(ref);
}

static bool stops_has(const cf_chat_template *t, const char *s)
{
    for (const char *const *p = cf_chat_template_stops(t); *p; p++)
        if (strcmp(*p, s) == 0)
            return true;
    return false;
}

static void test_choice(void)
{
    cf_chat_template *t;
    cf_err err;
    char note[512];
    cf_chat_choice c = {0};

    /* nothing: chatml */
    CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) == 0);
    CHECK(strcmp(cf_chat_template_label(t), "chatml (built-in, default)") == 0);
    CHECK(stops_has(t, "<|im_end|>") && !cf_chat_template_is_jinja(t));
    cf_chat_template_free(t);

    /* a name beats everything; a bad name is an error */
    c.name = "llama3";
    c.gguf_template = "{{ x }}";
    c.gguf_len = 7;
    CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) == 0);
    CHECK(strcmp(cf_chat_template_label(t), "llama3 (built-in)") == 0 && stops_has(t, "<|eot_id|>"));
    cf_chat_template_free(t);
    c.name = "no-such-format";
    CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) < 0 && t == NULL);
    CHECK(strstr(err.msg, "no-such-format") != NULL);

    /* a file beats the GGUF; a broken file is an error with its position */
    c.name = NULL;
    c.file_text = "{% for m in messages %}{{ m.content }}{% endfor %}";
    c.file_len = strlen(c.file_text);
    c.file_name = "my.jinja";
    CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) == 0);
    CHECK(strcmp(cf_chat_template_label(t), "jinja (from my.jinja)") == 0 && cf_chat_template_is_jinja(t));
    cf_chat_template_free(t);
    c.file_text = "{% for m in messages %}";
    c.file_len = strlen(c.file_text);
    CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) < 0);
    CHECK(strncmp(err.msg, "template line 1, column", 23) == 0);

    /* a GGUF template that does not compile: the built-in detected from it */
    c.file_text = NULL;
    c.gguf_template = "{{ '<|start_header_id|>' }}{% if %}<|end_header_id|>";
    c.gguf_len = strlen(c.gguf_template);
    CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) == 0);
    CHECK(strcmp(cf_chat_template_label(t), "llama3 (built-in, detected)") == 0);
    CHECKF(strstr(note, "does not compile") && strstr(note, "llama3"), "note: %s", note);
    CHECK(strcmp(cf_chat_template_family(t), "llama3") == 0);
    cf_chat_template_free(t);

    /* one that compiles but fails on an ordinary conversation (tools=None) */
    size_t len;
    char *hermes = tt_read(shared_path("templates/NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"), &len);
    CHECK(hermes != NULL);
    if (hermes) {
        c.gguf_template = hermes;
        c.gguf_len = len;
        c.bos_token = "<|begin_of_text|>";
        CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) == 0);
        CHECK(strcmp(cf_chat_template_label(t), "chatml (built-in, detected)") == 0);
        CHECKF(strstr(note, "fails on a test conversation") && strstr(note, "not iterable"), "note: %s", note);
        cf_chat_template_free(t);
        free(hermes);
    }

    /* one nothing recognises: chatml, saying so */
    c.gguf_template = "{{ nope.x }}";
    c.gguf_len = strlen(c.gguf_template);
    CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) == 0);
    CHECK(strcmp(cf_chat_template_label(t), "chatml (built-in, default)") == 0 && note[0]);
    cf_chat_template_free(t);

    /* a good one: Jinja, with the detected family's stops */
    char *qwen = tt_read(shared_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja"), &len);
    if (qwen) {
        c.gguf_template = qwen;
        c.gguf_len = len;
        CHECK(cf_chat_template_choose(&c, &t, note, sizeof note, &err) == 0);
        CHECK(strcmp(cf_chat_template_label(t), "jinja (from GGUF)") == 0 && note[0] == 0);
        CHECK(strcmp(cf_chat_template_family(t), "chatml") == 0 && stops_has(t, "<|im_end|>"));
        cf_chat_template_free(t);
        free(qwen);
    }
}

/* Messages with extra fields reach a Jinja template; built-ins take text parts. */
static void test_messages(void)
{
    cf_chat_template *t;
    cf_err err;
    const char *src = "{% for m in messages %}{{ m.role }}:{{ m.content }}"
                      "{% if m.tool_calls %}[{{ m.tool_calls[0].function.name }}]{% endif %};{% endfor %}";
    CHECK(cf_chat_template_from_jinja(src, strlen(src), "test", &t, &err) == 0);
    cf_chat_msg msgs[] = {
        {"user", "hi", NULL},
        {"assistant", NULL, "{\"tool_calls\": [{\"function\": {\"name\": \"f\"}}]}"},
    };
    char *out = render(t, msgs, 2, false, &err);
    CHECKF(out && strcmp(out, "user:hi;assistant:None[f];") == 0, "got %s", out ? out : err.msg);
    free(out);
    msgs[1].extra_json = "[1]";
    CHECK(render(t, msgs, 2, false, &err) == NULL && strstr(err.msg, "object"));
    msgs[1].extra_json = "{bad";
    CHECK(render(t, msgs, 2, false, &err) == NULL && strstr(err.msg, "JSON"));
    cf_chat_template_free(t);

    CHECK(cf_chat_template_from_name("chatml", &t, &err) == 0);
    const char *parts = "[{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"a\"}, "
                        "{\"type\": \"text\", \"text\": \"b\"}]}, {\"role\": \"assistant\", \"content\": null}]";
    cf_chat_opts o = {0};
    CHECK(cf_chat_render_json(t, parts, strlen(parts), &o, &out, NULL, &err) == 0);
    CHECKF(out && strcmp(out, "<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n") == 0,
           "got %s", out);
    free(out);
    const char *no_role = "[{\"content\": \"x\"}]";
    CHECK(cf_chat_render_json(t, no_role, strlen(no_role), &o, &out, NULL, &err) < 0);
    CHECK(strstr(err.msg, "role") != NULL);
    CHECK(cf_chat_render_json(t, "{}", 2, &o, &out, NULL, &err) < 0);
    cf_chat_template_free(t);
}

int main(void)
{
    test_llama_cpp_cases();
    test_messages();
    if (!shared_dir()) {
        test_summary("template-builtin");
        return TEST_SKIP;
    }
    test_phi3_reference();
    test_choice();
    return test_summary("template-builtin");
}
