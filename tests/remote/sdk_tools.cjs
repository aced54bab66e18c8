// The official openai package against confab serve's tools, JSON output and
// logprobs, on a random-weight model whose chat template (Qwen3's) renders
// tools: a grammar makes even such a model write a well-formed call.  Run by
// sdk_openai.sh; one line per case, non-zero exit when any fails.
const OpenAI = require('openai');

const base = process.env.CONFAB_URL, key = process.env.CONFAB_KEY;
const client = new OpenAI({ baseURL: base, apiKey: key, timeout: 60000, maxRetries: 0 });
const ask = [{ role: 'user', content: 'What is the weather in Paris, and what time is it?' }];
const tools = [
    { type: 'function', function: { name: 'get_weather', description: 'The weather in a city',
        parameters: { type: 'object', properties: {
            city: { type: 'string', maxLength: 16 },
            unit: { enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'unit'] } } },
    { type: 'function', function: { name: 'get_time', description: 'The time now',
        parameters: { type: 'object', properties: {} } } },
];
const { state, check, assert, rejects } = require('./sdk_util.cjs');

/* A call as the tools describe it: a known name, arguments that parse and
 * keep to the function's parameters. */
function wellFormed(call, only) {
    assert(call.type === 'function' && typeof call.id === 'string' && call.id.length > 0,
           JSON.stringify(call));
    const args = JSON.parse(call.function.arguments);
    if (only)
        assert(call.function.name === only, `called ${call.function.name}, not ${only}`);
    if (call.function.name === 'get_weather')
        assert(typeof args.city === 'string' && args.city.length <= 16 &&
               ['celsius', 'fahrenheit'].includes(args.unit), call.function.arguments);
    else
        assert(call.function.name === 'get_time' && typeof args === 'object' && !Array.isArray(args),
               JSON.stringify(call));
}

(async () => {
    await check('tools round trip', async () => {
        const r = await client.chat.completions.create({
            model: 'tiny', messages: ask, tools, tool_choice: 'required', max_tokens: 200, seed: 1 });
        const m = r.choices[0].message;
        assert(r.choices[0].finish_reason === 'tool_calls' && m.tool_calls && m.tool_calls.length >= 1,
               JSON.stringify(r));
        m.tool_calls.forEach((c) => wellFormed(c));
        const results = m.tool_calls.map((c) => ({ role: 'tool', tool_call_id: c.id,
                                                   content: '22 degrees, sunny' }));
        const next = await client.chat.completions.create({
            model: 'tiny', messages: [...ask, m, ...results], tools, max_tokens: 8 });
        assert(typeof next.choices[0].message.content === 'string' &&
               next.usage.prompt_tokens > r.usage.prompt_tokens, JSON.stringify(next));
    });
    await check('tool_choice required: always a well-formed call', async () => {
        for (let seed = 1; seed <= 6; seed++) {
            const r = await client.chat.completions.create({
                model: 'tiny', messages: ask, tools, tool_choice: 'required', max_tokens: 200,
                temperature: 1.5, seed });
            assert(r.choices[0].finish_reason === 'tool_calls', `seed ${seed}: ${JSON.stringify(r)}`);
            r.choices[0].message.tool_calls.forEach((c) => wellFormed(c));
        }
    });
    await check('tool_choice names a function', async () => {
        const r = await client.chat.completions.create({
            model: 'tiny', messages: ask, tools, max_tokens: 100, seed: 4,
            tool_choice: { type: 'function', function: { name: 'get_time' } } });
        wellFormed(r.choices[0].message.tool_calls[0], 'get_time');
    });
    await check('tool_choice none: no tools rendered, no calls', async () => {
        const r = await client.chat.completions.create({
            model: 'tiny', messages: ask, tools, tool_choice: 'none', max_tokens: 4 });
        assert(!r.choices[0].message.tool_calls && r.choices[0].finish_reason === 'length',
               JSON.stringify(r));
    });
    await check('streamed delta.tool_calls assembled by finalChatCompletion', async () => {
        const runner = client.chat.completions.stream({
            model: 'tiny', messages: ask, tools, tool_choice: 'required', max_tokens: 200, seed: 2 });
        let done = null;
        runner.on('tool_calls.function.arguments.done', (e) => { done = e; });
        const final = await runner.finalChatCompletion();
        const c = final.choices[0];
        assert(c.finish_reason === 'tool_calls' && c.message.tool_calls.length >= 1,
               JSON.stringify(final));
        c.message.tool_calls.forEach((t) => wellFormed(t));
        assert(done && done.name === c.message.tool_calls[c.message.tool_calls.length - 1].function.name,
               `arguments.done: ${JSON.stringify(done)}`);
    });
    await check('response_format json_schema parses and validates', async () => {
        const schema = { type: 'object', properties: {
            name: { type: 'string', maxLength: 10 }, age: { type: 'integer' },
            tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 3 } },
            required: ['name', 'age', 'tags'] };
        for (const stream of [false, true]) {
            let text = '';
            if (stream) {
                const runner = client.chat.completions.stream({
                    model: 'tiny', messages: ask, max_tokens: 200, seed: 3,
                    response_format: { type: 'json_schema', json_schema: { name: 'p', schema } } });
                text = (await runner.finalChatCompletion()).choices[0].message.content;
            } else {
                const r = await client.chat.completions.create({
                    model: 'tiny', messages: ask, max_tokens: 200, seed: 3,
                    response_format: { type: 'json_schema', json_schema: { name: 'p', schema } } });
                text = r.choices[0].message.content;
            }
            const v = JSON.parse(text);
            assert(typeof v.name === 'string' && v.name.length <= 10 && Number.isInteger(v.age) &&
                   Array.isArray(v.tags) && v.tags.length <= 3 &&
                   v.tags.every((t) => t === 'a' || t === 'b') && Object.keys(v).length === 3, text);
        }
    });
    await check('responses.create text.format json_schema', async () => {
        const r = await client.responses.create({
            model: 'tiny', input: 'Say yes or no.', max_output_tokens: 60,
            text: { format: { type: 'json_schema', name: 'yn', schema: {
                type: 'object', properties: { yes: { type: 'boolean' } }, required: ['yes'] } } } });
        assert(typeof JSON.parse(r.output_text).yes === 'boolean', r.output_text);
    });
    await check('top_logprobs 20', async () => {
        const r = await client.chat.completions.create({
            model: 'tiny', messages: ask, max_tokens: 3, logprobs: true, top_logprobs: 20,
            temperature: 1, top_k: 0, top_p: 1, min_p: 0 });
        const lp = r.choices[0].logprobs.content;
        assert(lp.length === 3 && lp.every((t) => t.top_logprobs.length === 20 &&
                                               t.top_logprobs[0].logprob >= t.top_logprobs[19].logprob),
               JSON.stringify(lp[0]));
    });
    await check('errors as typed exceptions', async () => {
        await rejects(() => client.chat.completions.create({
            model: 'tiny', messages: ask, logprobs: true, top_logprobs: 21 }), OpenAI.BadRequestError,
                      (e) => assert(e.param === 'top_logprobs', `param ${e.param}`));
        await rejects(() => client.chat.completions.create({
            model: 'tiny', messages: ask, tools,
            tool_choice: { type: 'function', function: { name: 'launch' } } }), OpenAI.BadRequestError,
                      (e) => assert(e.param === 'tool_choice', `param ${e.param}`));
        await rejects(() => client.chat.completions.create({
            model: 'tiny', messages: ask, response_format: { type: 'json_schema', json_schema: {
                name: 'x', schema: { type: 'string', format: 'email' } } } }), OpenAI.BadRequestError,
                      (e) => assert(e.param === 'response_format' && /'format'/.test(e.message),
                                    `${e.param}: ${e.message}`));
        await rejects(() => client.chat.completions.create({
            model: 'tiny', messages: [...ask, { role: 'tool', content: 'x' }] }), OpenAI.BadRequestError);
    });
    console.log(state.failed ? `${state.failed} failed` : 'all passed');
    process.exit(state.failed ? 1 : 0);
})();
