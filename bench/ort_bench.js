// `make bench`, the peer's side of the comparison (bench/peer_bench.sh):
// ONNX Runtime's CPU build (npm onnxruntime-node) on one model.
//
//   node bench/ort_bench.js ORT_MODULE_DIR MODEL.onnx INPUTS.f32 RUNS THREADS
//   node bench/ort_bench.js ORT_MODULE_DIR MODEL.onnx INPUTS.f32 COUNT THREADS --ranges OUT.json
//
// The second form runs the first COUNT inputs and writes the smallest and
// largest value of the graph input and of every graph output,
// {"tensor": [min, max]} (the range pass of tools/models/make_qdq.py:
// ALLOUT.onnx exposes every tensor).
//
// INPUTS.f32: raw float32 inputs of the model's input shape, one after
// another (the same file model_bench reads); or an IDX image file
// (NAME-idx3-ubyte.gz, as `dlasim run --input` takes it), whose pixel bytes
// become byte * (1/255) in float32, as dlasim's dataset reader makes them
// (tools/dlasim/dataset.c).  One untimed warm-up run, then RUNS timed runs
// over the inputs in turn; prints one JSON object: milliseconds per image
// (best and mean) and the seconds of the whole timed loop (s_total).
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

// Float32 inputs of an IDX3 unsigned-byte image file (gzip'd or not).
function idxImages(file) {
  let b = fs.readFileSync(file);
  if (file.endsWith('.gz')) {
    b = zlib.gunzipSync(b);
  }
  if (b.length < 16 || b.readUInt32BE(0) !== 0x803) {
    throw new Error(`${file}: not an IDX3 unsigned-byte image file`);
  }
  const count = b.readUInt32BE(4), pixels = b.readUInt32BE(8) * b.readUInt32BE(12);
  if (b.length < 16 + count * pixels) {
    throw new Error(`${file}: ${count} images of ${pixels} bytes announced, file shorter`);
  }
  const scale = Math.fround(1 / 255);
  const x = new Float32Array(count * pixels);
  for (let i = 0; i < x.length; i++) {
    x[i] = b[16 + i] * scale;
  }
  return x;
}

function readInputs(file) {
  if (/idx3-ubyte(\.gz)?$/.test(file)) {
    return idxImages(file);
  }
  const raw = fs.readFileSync(file);
  return new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
}

async function main() {
  const [modDir, model, inputs, runsArg, threadsArg] = process.argv.slice(2);
  const ort = require(path.resolve(modDir, 'node_modules', 'onnxruntime-node'));
  const threads = Number(threadsArg);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  const all = readInputs(inputs);
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
      const f = feed(r);
      const out = await session.run(f);
      // the graph input's range too: a QDQ model quantizes it as it does
      // every activation (else its first layer runs in float)
      for (const [name, t] of Object.entries({ ...f, ...out })) {
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
  const start = process.hrtime.bigint();
  for (let r = 0; r < runs; r++) {
    const f = feed(r % count);
    const t0 = process.hrtime.bigint();
    await session.run(f);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    best = Math.min(best, ms);
    total += ms;
  }
  const sTotal = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ model, ort_version: ort.env.versions ? ort.env.versions.common : '',
                               threads, runs, ms_best: best, ms_mean: total / runs,
                               s_total: sTotal }));
}

main().catch((e) => { console.error(`ort_bench: ${e.message}`); process.exit(1); });
