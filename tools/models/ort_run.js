// Run an ONNX model with ONNX Runtime (npm onnxruntime-node, CPU) on raw
// float32 inputs and write its outputs as raw float32: the independent
// reference dlasim's float executor is compared with (tests/traces/onnx_ort.sh,
// make zoo).
//   usage: node tools/models/ort_run.js MODEL.onnx INPUTS.f32 COUNT OUT.f32
// NODE_PATH must reach onnxruntime-node (build/ort/node_modules).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
    const [model, inPath, countArg, outPath] = process.argv.slice(2);
    if (!outPath) {
        console.error('usage: ort_run.js MODEL.onnx INPUTS.f32 COUNT OUT.f32');
        process.exit(2);
    }
    const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
    const inMeta = session.inputMetadata ? session.inputMetadata[0] : null;
    const buf = fs.readFileSync(inPath);
    const all = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
    const count = parseInt(countArg, 10);
    const per = all.length / count;
    let dims = inMeta && inMeta.shape ? inMeta.shape.map((d) => (typeof d === 'number' ? d : 1)) : null;
    if (!dims) {
        console.error('ort_run.js: cannot read the input shape of ' + model);
        process.exit(1);
    }
    const chunks = [];
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < count; i++) {
        const x = new ort.Tensor('float32', all.slice(i * per, (i + 1) * per), dims);
        const feeds = {};
        feeds[session.inputNames[0]] = x;
        const res = await session.run(feeds);
        chunks.push(Buffer.from(res[session.outputNames[0]].data.buffer.slice(0)));
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / count;
    fs.writeFileSync(outPath, Buffer.concat(chunks));
    console.log(`ort: ${count} inputs, ${ms.toFixed(3)} ms per input`);
}

main().catch((e) => {
    console.error('ort_run.js: ' + e.message);
    process.exit(1);
});
