// What the openai-package tests share: a case runner that prints one line
// per case and counts the failures, assert, and rejects (the call throws
// the SDK's typed exception, checked further by test).
const state = { failed: 0 };

async function check(name, fn) {
    const t0 = Date.now();
    try {
        await fn();
        console.log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
        state.failed++;
        console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    }
}

function assert(cond, what) {
    if (!cond)
        throw new Error(what);
}

async function rejects(fn, type, test) {
    try {
        await fn();
    } catch (e) {
        assert(e instanceof type, `threw ${e && e.constructor && e.constructor.name}, not ${type.name}: ${e}`);
        if (test)
            test(e);
        return;
    }
    throw new Error(`did not throw ${type.name}`);
}

module.exports = { state, check, assert, rejects };
