// llama-bench's pp/tg over llama.cpp as node-llama-cpp ships it prebuilt
// (a CPU build with per-microarchitecture variants; side_by_side.sh picks
// which): ppN is N tokens in one batch, tgN N tokens one at a time with no
// sampling, each from an empty cache, after one warm-up run, as llama-bench.
// Prints one JSON object: the means and sds, and which llama.cpp it was.
import {getLlama} from "node-llama-cpp";

const [modelPath, pp = "256", tg = "64", reps = "3", threads = "2"] = process.argv.slice(2);
const P = +pp, T = +tg, R = +reps;
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const ctx = await model.createContext({contextSize: P + T + 16, batchSize: Math.max(P, 1), threads: +threads,
                                       flashAttention: false});
const seq = ctx.getSequence();
const tokens = Array.from({length: Math.max(P, T)}, (_, i) => 1000 + (i * 7919) % 20000);

async function rate(n, run) {
    await seq.clearHistory();
    const t0 = process.hrtime.bigint();
    await run();
    return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}
const prefill = () => rate(P, () => seq.evaluateWithoutGeneratingNewTokens(tokens.slice(0, P)));
const decode = () => rate(T, async () => {
    for (let i = 0; i < T; i++) await seq.evaluateWithoutGeneratingNewTokens([tokens[i]]);
});
const ppr = [], tgr = [];
for (let r = -1; r < R; r++) {
    const p = P > 0 ? await prefill() : 0, t = T > 0 ? await decode() : 0;
    if (r >= 0) { ppr.push(p); tgr.push(t); }
}
const mean = a => a.reduce((x, y) => x + y, 0) / a.length;
const sd = a => Math.sqrt(a.reduce((x, y) => x + (y - mean(a)) ** 2, 0) / Math.max(1, a.length - 1));
console.log(JSON.stringify({engine: "llama.cpp", release: llama.llamaCppRelease, cpu: llama.systemInfo,
                            pp_tps: mean(ppr), pp_tps_sd: sd(ppr), tg_tps: mean(tgr), tg_tps_sd: sd(tgr)}));
