// The arm64 program `dlasim teflon` runs under qemu-aarch64: loads a TFLite
// model with TensorFlow Lite's C++ API twice, once on TFLite's CPU kernels and
// once with an external delegate (Mesa's Teflon, libteflon.so), feeds both the
// same input, and reports per output how far the delegate's bytes are from the
// CPU's, the ops the delegate took, and the times.
//
//   usage: teflon-runner MODEL.tflite DELEGATE.so INPUT|- JSON_OUT
//   INPUT: the raw bytes of the input tensors one after another, or "-" for a
//   fixed pseudo-random input (splitmix64 from seed 1).
// Prints a readable report on stdout and writes
//   {"delegated_ops": N, "cpu_ops": N, "cpu_ms": T, "delegate_ms": T,
//    "outputs": [{"bytes": N, "bytes_differ": N, "max_abs_diff": N}]}
// to JSON_OUT.  Exit 0 when both runs completed (differences are reported,
// not judged), 2 on usage, 1 on a failure naming what failed.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tensorflow/lite/delegates/external/external_delegate.h"
#include "tensorflow/lite/interpreter.h"
#include "tensorflow/lite/kernels/register.h"
#include "tensorflow/lite/model.h"

namespace {

struct Run {
    std::unique_ptr<tflite::Interpreter> interp;
    double ms = 0;
    int delegated = 0, cpu = 0;
};

uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

bool fail(const std::string &what)
{
    std::fprintf(stderr, "teflon-runner: %s\n", what.c_str());
    return false;
}

// Count the nodes of the execution plan a delegate kernel replaced and the
// nodes left to TFLite's CPU kernels.
void count_ops(Run *r)
{
    for (int idx : r->interp->execution_plan()) {
        const auto *nr = r->interp->node_and_registration(idx);
        if (nr && nr->first.delegate) {
            const auto *params = static_cast<const TfLiteDelegateParams *>(nr->first.builtin_data);
            r->delegated += params && params->nodes_to_replace ? params->nodes_to_replace->size : 1;
        } else {
            r->cpu++;
        }
    }
}

bool build(const tflite::FlatBufferModel &model, TfLiteDelegate *delegate, Run *r)
{
    tflite::ops::builtin::BuiltinOpResolver resolver;
    if (tflite::InterpreterBuilder(model, resolver)(&r->interp) != kTfLiteOk || !r->interp) {
        return fail("could not build an interpreter for the model");
    }
    r->interp->SetNumThreads(1);
    if (delegate && r->interp->ModifyGraphWithDelegate(delegate) != kTfLiteOk) {
        return fail("the delegate refused the graph (ModifyGraphWithDelegate)");
    }
    if (r->interp->AllocateTensors() != kTfLiteOk) {
        return fail("AllocateTensors failed");
    }
    count_ops(r);
    return true;
}

bool feed(Run *r, const std::vector<uint8_t> &input)
{
    size_t at = 0;
    for (int i : r->interp->inputs()) {
        TfLiteTensor *t = r->interp->tensor(i);
        if (at + t->bytes > input.size()) {
            return fail("the input has " + std::to_string(input.size()) + " bytes, the model's inputs need more");
        }
        std::memcpy(t->data.raw, input.data() + at, t->bytes);
        at += t->bytes;
    }
    return true;
}

bool invoke(Run *r)
{
    auto t0 = std::chrono::steady_clock::now();
    if (r->interp->Invoke() != kTfLiteOk) {
        return fail("Invoke failed");
    }
    r->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return true;
}

size_t input_bytes(const Run &r)
{
    size_t n = 0;
    for (int i : r.interp->inputs()) {
        n += r.interp->tensor(i)->bytes;
    }
    return n;
}

bool read_input(const char *path, size_t need, std::vector<uint8_t> *out)
{
    if (std::strcmp(path, "-") == 0) {
        uint64_t s = 1;
        out->resize(need);
        for (auto &b : *out) {
            b = (uint8_t)splitmix64(&s);
        }
        return true;
    }
    FILE *f = std::fopen(path, "rb");
    if (!f) {
        return fail(std::string("cannot open the input ") + path);
    }
    int c;
    while ((c = std::fgetc(f)) != EOF) {
        out->push_back((uint8_t)c);
    }
    std::fclose(f);
    if (out->size() != need) {
        return fail(std::string(path) + " has " + std::to_string(out->size()) +
                    " bytes; the model's inputs take " + std::to_string(need));
    }
    return true;
}

// Element-wise difference of one output, in the tensor's own type.
void compare(const TfLiteTensor *a, const TfLiteTensor *b, size_t *differ, long *max_abs)
{
    *differ = 0;
    *max_abs = 0;
    for (size_t i = 0; i < a->bytes; i++) {
        long x, y;
        if (a->type == kTfLiteInt8) {
            x = (int8_t)a->data.raw[i];
            y = (int8_t)b->data.raw[i];
        } else {
            x = (uint8_t)a->data.raw[i];
            y = (uint8_t)b->data.raw[i];
        }
        if (x != y) {
            (*differ)++;
            long d = x > y ? x - y : y - x;
            *max_abs = d > *max_abs ? d : *max_abs;
        }
    }
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 5) {
        std::fprintf(stderr, "usage: teflon-runner MODEL.tflite DELEGATE.so INPUT|- JSON_OUT\n");
        return 2;
    }
    auto model = tflite::FlatBufferModel::BuildFromFile(argv[1]);
    if (!model) {
        fail(std::string("cannot read the TFLite model ") + argv[1]);
        return 1;
    }
    Run cpu, npu;
    if (!build(*model, nullptr, &cpu)) {
        return 1;
    }
    std::vector<uint8_t> input;
    if (!read_input(argv[3], input_bytes(cpu), &input) || !feed(&cpu, input) || !invoke(&cpu)) {
        return 1;
    }
    TfLiteExternalDelegateOptions opts = TfLiteExternalDelegateOptionsDefault(argv[2]);
    TfLiteDelegate *delegate = TfLiteExternalDelegateCreate(&opts);
    if (!delegate) {
        fail(std::string("cannot load the delegate ") + argv[2]);
        return 1;
    }
    bool ok = build(*model, delegate, &npu) && feed(&npu, input) && invoke(&npu);
    FILE *json = ok ? std::fopen(argv[4], "w") : nullptr;
    if (ok && !json) {
        ok = fail(std::string("cannot write ") + argv[4]);
    }
    if (ok) {
        std::printf("ops: %d delegated, %d on the CPU; time: CPU %.1f ms, delegate %.1f ms\n",
                    npu.delegated, npu.cpu, cpu.ms, npu.ms);
        std::fprintf(json, "{\"delegated_ops\": %d, \"cpu_ops\": %d, \"cpu_ms\": %.3f, "
                     "\"delegate_ms\": %.3f, \"outputs\": [", npu.delegated, npu.cpu, cpu.ms, npu.ms);
        const auto &outs = cpu.interp->outputs();
        for (size_t o = 0; o < outs.size(); o++) {
            const TfLiteTensor *a = cpu.interp->tensor(outs[o]);
            const TfLiteTensor *b = npu.interp->tensor(npu.interp->outputs()[o]);
            size_t differ;
            long max_abs;
            compare(a, b, &differ, &max_abs);
            std::printf("output %zu (%s, %zu bytes): max |difference| %ld, %zu bytes differ (%.2f%%)\n",
                        o, a->name ? a->name : "?", (size_t)a->bytes, max_abs, differ,
                        a->bytes ? 100.0 * (double)differ / (double)a->bytes : 0.0);
            std::fprintf(json, "%s{\"bytes\": %zu, \"bytes_differ\": %zu, \"max_abs_diff\": %ld}",
                         o ? ", " : "", (size_t)a->bytes, differ, max_abs);
        }
        std::fprintf(json, "]}\n");
        std::fclose(json);
    }
    npu.interp.reset();
    TfLiteExternalDelegateDelete(delegate);
    return ok ? 0 : 1;
}
