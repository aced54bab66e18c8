// A reply does not depend on the load: 16 clients, each holding a
// conversation of 4 streamed requests (with logprobs, so that the
// probabilities' bits are compared too), run first one request at a time,
// then all 16 clients at once against confab serve --parallel 4 (and
// beside them a request for two choices).  Every request is answered, each
// with what it got alone; the server's memory is the same after a second
// and third round as after the first.  Run by sdk_openai.sh (with
// -np 4 -c 2048).
const fs = require('fs');
const OpenAI = require('openai');

const base = process.env.CONFAB_URL, key = process.env.CONFAB_KEY, pid = process.env.CONFAB_PID;
const client = new OpenAI({ baseURL: base, apiKey: key, timeout: 60000, maxRetries: 0 });
const CLIENTS = 16, TURNS = 4;
const animals = ['cat', 'dog', 'bird', 'fish', 'frog', 'bear', 'fox', 'owl'];

function rssKb() {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
}

// Request k of client c: its conversation so far (the replies it got alone)
// and its own seed, length and sampling.
function request(c, k, replies) {
    const messages = [];
    for (let i = 0; i <= k; i++) {
        messages.push({ role: 'user', content: `Tell me about the ${animals[c % 8]} ${c}, part ${i}` });
        if (i < k)
            messages.push({ role: 'assistant', content: replies[i] });
    }
    return { model: 'tiny', messages, stream: true, stream_options: { include_usage: true },
             seed: 1000 * c + k, max_tokens: 8 + (7 * c + 5 * k) % 23,
             temperature: c % 4 === 3 ? 0 : 0.9, logprobs: true, top_logprobs: 2 };
}

async function run(body) {
    const stream = await client.chat.completions.create(body);
    let text = '', finish = null, usage = null, lp = [];
    for await (const chunk of stream) {
        if (chunk.usage)
            usage = chunk.usage.completion_tokens;
        if (!chunk.choices.length)
            continue;
        const ch = chunk.choices[0];
        text += ch.delta.content || '';
        finish = ch.finish_reason || finish;
        if (ch.logprobs && ch.logprobs.content)
            lp = lp.concat(ch.logprobs.content);
    }
    return JSON.stringify({ text, finish, usage, lp });
}

async function watchSlots(state) {
    const url = base.replace(/\/v1$/, '') + '/slots';
    while (!state.done) {
        const slots = await (await fetch(url, { headers: { Authorization: `Bearer ${key}` } })).json();
        const n = slots.filter((s) => s.state === 'generating').length;
        state.most = Math.max(state.most, n);
        await new Promise((r) => setTimeout(r, 10));
    }
}

const two = { model: 'tiny', messages: [{ role: 'user', content: 'Two stories' }], n: 2, seed: 5,
              max_tokens: 20 };

async function choices() {
    const r = await client.chat.completions.create(two);
    return JSON.stringify(r.choices.map((c) => c.message.content));
}

(async () => {
    const twoAlone = await choices();
    const alone = [], bodies = [];
    for (let c = 0; c < CLIENTS; c++) {
        alone.push([]);
        bodies.push([]);
        const replies = [];
        for (let k = 0; k < TURNS; k++) {
            const body = request(c, k, replies);
            const got = await run(body);
            alone[c].push(got);
            bodies[c].push(body);
            replies.push(JSON.parse(got).text);
        }
    }
    let failed = 0, answered = 0, rss = [];
    const t0 = Date.now();
    for (let round = 1; round <= 3; round++) {
        const state = { done: false, most: 0 };
        const watch = watchSlots(state);
        const twoLoaded = choices();
        await Promise.all(bodies.map(async (turns, c) => {
            for (let k = 0; k < TURNS; k++) {
                let got;
                try {
                    got = await run(turns[k]);
                } catch (e) {
                    failed++;
                    console.log(`FAIL round ${round}, client ${c}, request ${k}: ${e}`);
                    continue;
                }
                answered++;
                if (got !== alone[c][k]) {
                    failed++;
                    console.log(`FAIL round ${round}, client ${c}, request ${k}: beside the others\n` +
                                `  ${got}\nalone\n  ${alone[c][k]}`);
                }
            }
        }));
        state.done = true;
        await watch;
        const got = await twoLoaded;
        if (got !== twoAlone) {
            failed++;
            console.log(`FAIL round ${round}: n: 2 beside the others\n  ${got}\nalone\n  ${twoAlone}`);
        }
        rss.push(rssKb());
        console.log(`round ${round}: ${CLIENTS} clients x ${TURNS} requests, at most ${state.most} ` +
                    `slots generating at once, RSS ${rss[round - 1]} kB`);
        if (state.most < 2) {
            failed++;
            console.log('FAIL the slots never generated side by side');
        }
    }
    console.log(`${answered} of ${3 * CLIENTS * TURNS} answered in ${Date.now() - t0} ms`);
    // AddressSanitizer keeps freed memory in quarantine, so RSS grows by
    // design there: reported, not judged (as the soak does; LeakSanitizer judges)
    let asan = false;
    try {
        asan = /libasan/.test(require('child_process').execSync(`ldd '${process.env.CONFAB_BIN}'`).toString());
    } catch (e) { /* no ldd: judge */ }
    if (asan)
        console.log('an AddressSanitizer build: the RSS growth is not checked');
    else if (rss[2] > rss[0] + 4096) {
        failed++;
        console.log(`FAIL the server's memory grew: ${rss.join(' → ')} kB`);
    }
    console.log(failed ? `${failed} failed` : 'ok: the same tokens and probabilities alone and under load');
    process.exit(failed ? 1 : 0);
})().catch((e) => { console.log(`FAIL ${e && e.stack ? e.stack : e}`); process.exit(1); });
