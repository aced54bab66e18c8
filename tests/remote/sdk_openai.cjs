// The official openai package as a client of confab serve: what its users
// call, checked against what the SDK's types promise.  Run by sdk_openai.sh
// (which installs the package and starts the server); prints one line per
// case and exits non-zero when any fails.
const OpenAI = require('openai');

const base = process.env.CONFAB_URL, key = process.env.CONFAB_KEY;
const client = new OpenAI({ baseURL: base, apiKey: key, timeout: 30000, maxRetries: 0 });
const hi = [{ role: 'user', content: 'Hello there' }];
const { state, check, assert, rejects } = require('./sdk_util.cjs');

(async () => {
    await check('models.list', async () => {
        const page = await client.models.list();
        assert(page.data.length === 1 && page.data[0].id === 'tiny', JSON.stringify(page.data));
    });
    await check('models.retrieve', async () => {
        const m = await client.models.retrieve('tiny');
        assert(m.id === 'tiny' && m.object === 'model', JSON.stringify(m));
        await rejects(() => client.models.retrieve('gpt-9'), OpenAI.NotFoundError,
                      (e) => assert(e.code === 'model_not_found', `code ${e.code}`));
    });
    await check('chat.completions.create', async () => {
        const r = await client.chat.completions.create({ model: 'tiny', messages: hi, max_tokens: 6 });
        const c = r.choices[0];
        assert(typeof c.message.content === 'string' && c.message.role === 'assistant' &&
               c.message.refusal === null && c.logprobs === null && c.finish_reason === 'length',
               JSON.stringify(r));
        assert(r.usage.completion_tokens === 6 && r.system_fingerprint, JSON.stringify(r));
    });
    await check('chat.completions.create stream', async () => {
        const stream = await client.chat.completions.create({
            model: 'tiny', messages: hi, max_tokens: 6, stream: true,
            stream_options: { include_usage: true } });
        let text = '', usage = null, finish = null, chunks = 0;
        for await (const chunk of stream) {
            chunks++;
            if (chunk.usage)
                usage = chunk.usage;
            if (chunk.choices.length) {
                text += chunk.choices[0].delta.content || '';
                finish = chunk.choices[0].finish_reason || finish;
            }
        }
        assert(chunks > 2 && text.length > 0 && finish === 'length' && usage &&
               usage.completion_tokens === 6, `${chunks} chunks, '${text}', ${finish}`);
    });
    await check('chat.completions.stream finalChatCompletion', async () => {
        const runner = client.chat.completions.stream({ model: 'tiny', messages: hi, max_tokens: 6 });
        let deltas = '';
        runner.on('content', (d) => { deltas += d; });
        const final = await runner.finalChatCompletion();
        const m = final.choices[0].message;
        assert(m.role === 'assistant' && m.content === deltas && deltas.length > 0,
               JSON.stringify(final));
    });
    await check('abort mid-stream', async () => {
        const ac = new AbortController();
        const stream = await client.chat.completions.create(
            { model: 'tiny', messages: hi, max_tokens: 2000, stream: true }, { signal: ac.signal });
        let n = 0;
        try { /* the iteration ends, or throws the abort */
            for await (const chunk of stream)
                if (++n === 3)
                    ac.abort();
        } catch (e) {
            assert(e instanceof OpenAI.APIUserAbortError, `threw ${e}`);
        }
        assert(n < 2000, 'the whole reply came'); /* sdk_openai.sh checks the server cut it */
        const t0 = Date.now();
        const r = await client.chat.completions.create({ model: 'tiny', messages: hi, max_tokens: 2 });
        assert(r.choices.length === 1 && Date.now() - t0 < 5000, 'the next request waited');
    });
    await check('logprobs', async () => {
        const r = await client.chat.completions.create({
            model: 'tiny', messages: hi, max_tokens: 4, logprobs: true, top_logprobs: 2 });
        const lp = r.choices[0].logprobs.content;
        /* as many alternatives as asked, or as the sampler's filters left */
        assert(lp.length === 4 && lp.every((t) => typeof t.token === 'string' && t.logprob <= 0 &&
                                                   t.top_logprobs.length >= 1 &&
                                                   t.top_logprobs.length <= 2 && Array.isArray(t.bytes)),
               JSON.stringify(r.choices[0].logprobs));
    });
    await check('n: 2', async () => {
        const r = await client.chat.completions.create({
            model: 'tiny', messages: hi, max_tokens: 6, n: 2, seed: 3 });
        assert(r.choices.length === 2 && r.choices[1].index === 1 &&
               r.choices.every((c) => c.message.content.length > 0) &&
               r.usage.completion_tokens === 12, JSON.stringify(r));
        const runner = client.chat.completions.stream({
            model: 'tiny', messages: hi, max_tokens: 6, n: 2, seed: 3 });
        const final = await runner.finalChatCompletion();
        assert(final.choices.length === 2 &&
               final.choices.every((c, i) => c.message.content === r.choices[i].message.content),
               `streamed ${JSON.stringify(final.choices)}, whole ${JSON.stringify(r.choices)}`);
    });
    await check('completions.create', async () => {
        const r = await client.completions.create({
            model: 'tiny', prompt: 'Once upon a time', max_tokens: 8, temperature: 0 });
        assert(r.object === 'text_completion' && r.choices[0].text.length > 0 &&
               r.choices[0].finish_reason === 'length' && r.usage.completion_tokens === 8,
               JSON.stringify(r));
        const stream = await client.completions.create({
            model: 'tiny', prompt: 'Once upon a time', max_tokens: 8, temperature: 0, stream: true });
        let text = '';
        for await (const chunk of stream)
            text += chunk.choices.length ? chunk.choices[0].text : '';
        assert(text === r.choices[0].text, `streamed '${text}', whole '${r.choices[0].text}'`);
    });
    await check('responses.create and stream', async () => {
        const r = await client.responses.create({
            model: 'tiny', input: 'Hello there', instructions: 'Tell stories.',
            max_output_tokens: 6, temperature: 0 });
        assert(r.object === 'response' && r.output_text.length > 0 && r.status === 'incomplete' &&
               r.usage.output_tokens === 6, JSON.stringify(r));
        const stream = client.responses.stream({
            model: 'tiny', input: [{ role: 'system', content: 'Tell stories.' },
                                   { role: 'user', content: [{ type: 'input_text', text: 'Hello there' }] }],
            max_output_tokens: 6, temperature: 0 });
        let deltas = '';
        stream.on('response.output_text.delta', (e) => { deltas += e.delta; });
        const final = await stream.finalResponse();
        assert(final.output_text === r.output_text && deltas === r.output_text,
               `streamed '${deltas}' / '${final.output_text}', whole '${r.output_text}'`);
        await rejects(() => client.responses.create({
            model: 'tiny', input: 'x', previous_response_id: r.id }),
                      OpenAI.BadRequestError, (e) => assert(e.param === 'previous_response_id'));
    });
    await check('errors as typed exceptions', async () => {
        const bad = new OpenAI({ baseURL: base, apiKey: 'wrong', maxRetries: 0 });
        await rejects(() => bad.models.list(), OpenAI.AuthenticationError,
                      (e) => assert(e.status === 401 && e.code === 'invalid_api_key', `code ${e.code}`));
        await rejects(() => client.chat.completions.create({ model: 'tiny', messages: hi, n: 20 }),
                      OpenAI.BadRequestError, (e) => assert(e.param === 'n', `param ${e.param}`));
        await rejects(() => client.chat.completions.create({
            model: 'tiny', messages: hi,
            tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }),
                      OpenAI.BadRequestError, (e) => assert(e.param === 'tools', `param ${e.param}`));
        await rejects(() => client.chat.completions.create({ model: 'gpt-9', messages: hi }),
                      OpenAI.NotFoundError, (e) => assert(e.code === 'model_not_found' &&
                                                          e.type === 'invalid_request_error', e.code));
        await rejects(() => client.embeddings.create({ model: 'tiny', input: 'x' }),
                      OpenAI.NotFoundError, (e) => assert(/not supported by confab serve/.test(e.message)));
    });
    process.exit(state.failed ? 1 : 0);
})();
