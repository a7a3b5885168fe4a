// `make bench`, the peer's side of the comparison (bench/peer_bench.sh):
// ONNX Runtime's CPU build (npm onnxruntime-node) on one model.
//
//   node bench/ort_bench.js ORT_MODULE_DIR MODEL.onnx INPUTS.f32 RUNS THREADS
//   node bench/ort_bench.js ORT_MODULE_DIR MODEL.onnx INPUTS.f32 COUNT THREADS --ranges OUT.json
//
// The second form runs the first COUNT inputs and writes the smallest and
// largest value of every graph output, {"tensor": [min, max]} (the range
// pass of tools/models/make_qdq.py: ALLOUT.onnx exposes every tensor).
//
// INPUTS.f32: raw float32 inputs of the model's input shape, one after
// another (the same file model_bench reads).  One untimed warm-up run, then
// RUNS timed runs over the inputs in turn; prints one JSON object:
// milliseconds per image (best and mean).
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [modDir, model, inputs, runsArg, threadsArg] = process.argv.slice(2);
  const ort = require(path.resolve(modDir, 'node_modules', 'onnxruntime-node'));
  const threads = Number(threadsArg);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  const raw = fs.readFileSync(inputs);
  const all = new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
  let shape = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' ? d : 1)) : null;
  if (!shape) {
    throw new Error(`${model}: input shape unknown`);
  }
  const n = shape.reduce((a, b) => a * b, 1);
  const count = Math.floor(all.length / n);
  const feed = (i) => ({ [session.inputNames[0]]: new ort.Tensor('float32', all.subarray(i * n, (i + 1) * n), shape) });
  const runs = Number(runsArg);
  const rangesAt = process.argv.indexOf('--ranges');
  if (rangesAt > 0) {
    const ranges = {};
    for (let r = 0; r < Math.min(runs, count); r++) {
      const out = await session.run(feed(r));
      for (const [name, t] of Object.entries(out)) {
        let lo = Infinity, hi = -Infinity;
        for (const v of t.data) {
          lo = v < lo ? v : lo;
          hi = v > hi ? v : hi;
        }
        const old = ranges[name] || [Infinity, -Infinity];
        ranges[name] = [Math.min(old[0], lo), Math.max(old[1], hi)];
      }
    }
    fs.writeFileSync(process.argv[rangesAt + 1], JSON.stringify(ranges));
    return;
  }
  await session.run(feed(0));
  let best = Infinity, total = 0;
  for (let r = 0; r < runs; r++) {
    const f = feed(r % count);
    const t0 = process.hrtime.bigint();
    await session.run(f);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    best = Math.min(best, ms);
    total += ms;
  }
  console.log(JSON.stringify({ model, ort_version: ort.env.versions ? ort.env.versions.common : '',
                               threads, ms_best: best, ms_mean: total / runs }));
}

main().catch((e) => { console.error(`ort_bench: ${e.message}`); process.exit(1); });
