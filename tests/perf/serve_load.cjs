// The load client of serve_load.sh: CLIENTS clients at once, each sending
// REQUESTS chat completions of MAX_TOKENS greedy tokens one after another;
// prints one line: clients, tokens, wall ms, aggregate tokens/s, and the
// requests' latency (mean, slowest) in ms.
const base = process.env.CONFAB_URL;
const clients = +process.env.CLIENTS, requests = +process.env.REQUESTS, max = +process.env.MAX_TOKENS;

async function one(c, k) {
    const t0 = Date.now();
    const r = await fetch(`${base}/chat/completions`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: `Client ${c} asks question ${k}.` }],
                               max_tokens: max, temperature: 0 }) });
    const j = await r.json();
    if (!r.ok)
        throw new Error(JSON.stringify(j));
    return { tokens: j.usage.completion_tokens, ms: Date.now() - t0 };
}

(async () => {
    const t0 = Date.now(), lat = [];
    let tokens = 0;
    await Promise.all(Array.from({ length: clients }, async (_, c) => {
        for (let k = 0; k < requests; k++) {
            const r = await one(c, k);
            tokens += r.tokens;
            lat.push(r.ms);
        }
    }));
    const ms = Date.now() - t0, mean = lat.reduce((a, b) => a + b, 0) / lat.length;
    console.log(`${clients} ${tokens} ${ms} ${(tokens / ms * 1000).toFixed(1)} ${mean.toFixed(0)} ${Math.max(...lat)}`);
})().catch((e) => { console.error(e); process.exit(1); });
