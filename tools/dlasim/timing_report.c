/*
 * Reports of the timing model for people and tools: the per-layer table,
 * the JSON summary, the Chrome/Perfetto trace-event timeline and the plot.
 *
 * Trace-event format: "JSON Object Format" of the Trace Event Format
 * (Chrome's about:tracing; ui.perfetto.dev opens it): a "traceEvents" array
 * of complete events (ph "X", ts/dur in microseconds), counter events
 * (ph "C") and metadata events (ph "M") naming the process and threads.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static double us(uint64_t cycles, double mhz)
{
    return (double)cycles / mhz;
}

void timing_print_layers(struct dlasim_dev *dev, FILE *f, double clock_mhz)
{
    size_t n = dlasim_timing_layer_count(dev);
    uint64_t macs = 0, rd = 0, wr = 0, last = 0;
    fprintf(f, "\n| %5s | %-5s | %10s | %10s | %10s | %9s | %9s | %9s | %9s | %6s | %9s | %9s | %-7s |\n",
            "layer", "kind", "start", "end", "cycles", "CONV", "SDP", "PDP", "CDP", "MAC %",
            "read KiB", "write KiB", "bound");
    fprintf(f, "|------:|:------|-----------:|-----------:|-----------:|----------:|----------:|"
               "----------:|----------:|-------:|----------:|----------:|:--------|\n");
    for (size_t i = 0; i < n; i++) {
        struct dlasim_timing_layer l;
        dlasim_timing_layer_get(dev, i, &l);
        fprintf(f, "| %5u | %-5s | %10llu | %10llu | %10llu | %9llu | %9llu | %9llu | %9llu | %6.1f | "
                   "%9.1f | %9.1f | %-7s |\n",
                l.index, l.kind, (unsigned long long)l.start, (unsigned long long)l.end,
                (unsigned long long)(l.end - l.start),
                (unsigned long long)l.unit_cycles[DLASIM_TU_CONV],
                (unsigned long long)l.unit_cycles[DLASIM_TU_SDP],
                (unsigned long long)l.unit_cycles[DLASIM_TU_PDP],
                (unsigned long long)l.unit_cycles[DLASIM_TU_CDP], 100.0 * l.mac_util,
                (double)l.rd_bytes / 1024.0, (double)l.wr_bytes / 1024.0,
                dlasim_timing_bound_name(l.bound));
        macs += l.macs;
        rd += l.rd_bytes;
        wr += l.wr_bytes;
        last = l.end > last ? l.end : last;
    }
    fprintf(f, "\n%zu layers, last ends at cycle %llu (%.1f us at %.0f MHz), %llu MACs, "
               "%.1f KiB read, %.1f KiB written, %llu CSB writes\n",
            n, (unsigned long long)last, us(last, clock_mhz), clock_mhz, (unsigned long long)macs,
            (double)rd / 1024.0, (double)wr / 1024.0,
            (unsigned long long)dlasim_timing_csb_writes(dev));
}

/* Whole-network summary of a timed run (dlasim_timing_total): what a user
 * sizing a configuration reads -- cycles per inference, time and fps at the
 * clock, MAC utilisation, bytes moved per inference. */
void timing_print_network(struct dlasim_dev *dev, FILE *f, double clock_mhz, uint64_t inferences)
{
    struct dlasim_timing_total t;
    if (dlasim_timing_total(dev, &t) || !t.layers || !inferences) {
        fprintf(f, "cycle model: no hardware layer was timed\n");
        return;
    }
    double per = (double)t.cycles / (double)inferences;
    fprintf(f, "cycle model: %llu hardware layers, %.0f cycles per inference = %.3f ms at %.0f MHz "
               "(%.1f fps), MAC utilisation %.1f %%, %.1f KiB read and %.1f KiB written per "
               "inference\n",
            (unsigned long long)(t.layers / inferences), per, per / clock_mhz / 1000.0, clock_mhz,
            per > 0 ? clock_mhz * 1e6 / per : 0.0, 100.0 * t.mac_util,
            (double)t.rd_bytes / 1024.0 / (double)inferences,
            (double)t.wr_bytes / 1024.0 / (double)inferences);
}

/* JSON string body: names here are case names and fixed words, but quote
 * what JSON requires anyway. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            fprintf(f, "\\%c", ch);
        } else if (ch < 0x20) {
            fprintf(f, "\\u%04x", ch);
        } else {
            fputc(ch, f);
        }
    }
    fputc('"', f);
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dlasim: %s: cannot write: %s\n", path, strerror(errno));
    }
    return f;
}

static int close_out(FILE *f, const char *path)
{
    return cli_close_output(f, path);
}

int timing_write_json(struct dlasim_dev *dev, const char *path, const char *name,
                      uint64_t cycles_to_last_intr, double clock_mhz)
{
    FILE *f = open_out(path);
    if (!f) {
        return -1;
    }
    size_t n = dlasim_timing_layer_count(dev);
    fprintf(f, "{\n  \"case\": ");
    json_str(f, name);
    fprintf(f, ",\n  \"cycles_to_last_intr\": %llu,\n  \"clock_mhz\": %.3f,\n  \"layers\": [",
            (unsigned long long)cycles_to_last_intr, clock_mhz);
    for (size_t i = 0; i < n; i++) {
        struct dlasim_timing_layer l;
        dlasim_timing_layer_get(dev, i, &l);
        fprintf(f, "%s\n    {\"index\": %u, \"kind\": \"%s\", \"enabled\": %llu, \"start\": %llu, "
                   "\"end\": %llu, \"cycles\": %llu, \"unit_cycles\": {",
                i ? "," : "", l.index, l.kind, (unsigned long long)l.enabled,
                (unsigned long long)l.start, (unsigned long long)l.end,
                (unsigned long long)(l.end - l.start));
        for (unsigned u = 0; u < DLASIM_TU_COUNT; u++) {
            fprintf(f, "%s\"%s\": %llu", u ? ", " : "", dlasim_timing_unit_name(u),
                    (unsigned long long)l.unit_cycles[u]);
        }
        fprintf(f, "}, \"macs\": %llu, \"mac_util\": %.6f, \"rd_bytes\": %llu, \"wr_bytes\": %llu, "
                   "\"stall_cycles\": %llu, \"bound\": \"%s\"}",
                (unsigned long long)l.macs, l.mac_util, (unsigned long long)l.rd_bytes,
                (unsigned long long)l.wr_bytes, (unsigned long long)l.stall_cycles,
                dlasim_timing_bound_name(l.bound));
    }
    fprintf(f, "\n  ]\n}\n");
    return close_out(f, path);
}

/* Thread id of a unit's track (1 = the layer track). */
static int track(unsigned u)
{
    return 2 + (int)u;
}

int timing_write_timeline(struct dlasim_dev *dev, const char *path, const char *name,
                          double clock_mhz)
{
    FILE *f = open_out(path);
    if (!f) {
        return -1;
    }
    size_t n = dlasim_timing_layer_count(dev);
    fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": ");
    json_str(f, name);
    fprintf(f, "}},\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
               "\"args\": {\"name\": \"layers\"}}");
    for (unsigned u = 0; u < DLASIM_TU_COUNT; u++) {
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
                   "\"args\": {\"name\": \"%s\"}}",
                track(u), dlasim_timing_unit_name(u));
    }
    for (size_t i = 0; i < n; i++) {
        struct dlasim_timing_layer l;
        dlasim_timing_layer_get(dev, i, &l);
        double ts = us(l.start, clock_mhz), dur = us(l.end - l.start, clock_mhz);
        fprintf(f, ",\n{\"name\": \"%s %u\", \"cat\": \"layer\", \"ph\": \"X\", \"pid\": 1, "
                   "\"tid\": 1, \"ts\": %.6f, \"dur\": %.6f, \"args\": {\"cycles\": %llu, "
                   "\"bound\": \"%s\", \"mac_util\": %.4f, \"rd_bytes\": %llu, \"wr_bytes\": %llu}}",
                l.kind, l.index, ts, dur, (unsigned long long)(l.end - l.start),
                dlasim_timing_bound_name(l.bound), l.mac_util, (unsigned long long)l.rd_bytes,
                (unsigned long long)l.wr_bytes);
        for (unsigned u = 0; u < DLASIM_TU_COUNT; u++) {
            if (!l.unit_cycles[u]) {
                continue;
            }
            fprintf(f, ",\n{\"name\": \"%s %u\", \"cat\": \"unit\", \"ph\": \"X\", \"pid\": 1, "
                       "\"tid\": %d, \"ts\": %.6f, \"dur\": %.6f, \"args\": {\"busy_cycles\": %llu}}",
                    l.kind, l.index, track(u), ts, us(l.unit_cycles[u], clock_mhz),
                    (unsigned long long)l.unit_cycles[u]);
        }
        /* bandwidth counter: the layer's average over its duration, then 0 */
        double sec = dur > 0 ? dur * 1e-6 : 1e-12;
        fprintf(f, ",\n{\"name\": \"DBB bandwidth (GB/s)\", \"ph\": \"C\", \"pid\": 1, \"ts\": %.6f, "
                   "\"args\": {\"read\": %.4f, \"write\": %.4f}}",
                ts, (double)l.rd_bytes / sec / 1e9, (double)l.wr_bytes / sec / 1e9);
        fprintf(f, ",\n{\"name\": \"DBB bandwidth (GB/s)\", \"ph\": \"C\", \"pid\": 1, \"ts\": %.6f, "
                   "\"args\": {\"read\": 0, \"write\": 0}}",
                ts + dur);
    }
    fprintf(f, "\n]}\n");
    return close_out(f, path);
}

/* tools/plot/timing_plot.py beside the build folder of this executable, or
 * $DLASIM_PLOT_SCRIPT. */
static int plot_script(char *buf, size_t len)
{
    const char *env = getenv("DLASIM_PLOT_SCRIPT");
    if (env) {
        snprintf(buf, len, "%s", env);
        return access(buf, R_OK);
    }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (k <= 0) {
        return -1;
    }
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
        *slash = '\0';
    }
    snprintf(buf, len, "%s/../tools/plot/timing_plot.py", exe);
    return access(buf, R_OK);
}

/* Single-quote a path for /bin/sh. */
static void sh_quote(char *out, size_t len, const char *s)
{
    size_t o = 0;
    if (len < 3) {
        return;
    }
    out[o++] = '\'';
    for (; *s && o + 5 < len; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    out[o++] = '\'';
    out[o] = '\0';
}

int timing_plot(const char *json_path, const char *png_path)
{
    char script[PATH_MAX + 64], q1[2 * PATH_MAX], q2[2 * PATH_MAX], q3[2 * PATH_MAX];
    char cmd[6 * PATH_MAX + 64];
    if (plot_script(script, sizeof(script))) {
        fprintf(stderr, "dlasim: --plot needs tools/plot/timing_plot.py (set DLASIM_PLOT_SCRIPT)\n");
        return -1;
    }
    sh_quote(q1, sizeof(q1), script);
    sh_quote(q2, sizeof(q2), json_path);
    sh_quote(q3, sizeof(q3), png_path);
    snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s %s %s", q1, q2, q3);
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "dlasim: the plot failed (needs Debian's python3-matplotlib: "
                        "make plot installs it)\n");
        return -1;
    }
    printf("plot written to %s\n", png_path);
    return 0;
}
