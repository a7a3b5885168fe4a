/* `--shard I/N`: the one parser, the split, the job identity and the shard
 * file's framing (shard.h, docs/cluster.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"

/* A decimal number of at most 6 digits, nothing else; -1 when not one. */
static long parse_count(const char *s, size_t len)
{
    if (len == 0 || len > 6) {
        return -1;
    }
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int shard_parse(const char *opt, const char *s, struct shard *sh)
{
    const char *slash = s ? strchr(s, '/') : NULL;
    long i = slash ? parse_count(s, (size_t)(slash - s)) : -1;
    long n = slash ? parse_count(slash + 1, strlen(slash + 1)) : -1;
    if (i < 0 || n < 1 || n > SHARD_MAX) {
        fprintf(stderr, "dlasim: %s takes I/N (shard I of N, 0 <= I < N <= %d, e.g. 0/4), "
                        "got '%s'\n", opt, SHARD_MAX, s ? s : "");
        return -1;
    }
    if (i >= n) {
        fprintf(stderr, "dlasim: %s %s: shards are numbered 0 to %ld (as Slurm's "
                        "SLURM_ARRAY_TASK_ID of --array=0-%ld)\n", opt, s, n - 1, n - 1);
        return -1;
    }
    sh->index = (unsigned)i;
    sh->count = (unsigned)n;
    return 0;
}

void shard_range(const struct shard *sh, size_t total, size_t *first, size_t *end)
{
    if (!sh->count) {
        *first = 0, *end = total;
        return;
    }
    /* floor(total * I / N) .. floor(total * (I+1) / N), without overflow for
     * any realistic total (< 2^47 items) */
    *first = (size_t)((unsigned long long)total * sh->index / sh->count);
    *end = (size_t)((unsigned long long)total * (sh->index + 1) / sh->count);
}

uint64_t shard_hash(uint64_t h, const void *data, size_t len)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

uint64_t shard_hash_str(uint64_t h, const char *s)
{
    return shard_hash(h, s, strlen(s) + 1); /* with the NUL: "ab","c" != "a","bc" */
}

static const struct shard_drop *dropped(const char *a, const struct shard_drop *drop, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(a, drop[i].name)) {
            return &drop[i];
        }
    }
    return NULL;
}

char *shard_args(int argc, char **argv, const struct shard_drop *drop, size_t ndrop)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++) {
        len += strlen(argv[i]) + 1;
    }
    char *s = malloc(len);
    if (!s) {
        return NULL;
    }
    s[0] = 0;
    size_t at = 0;
    for (int i = 0; i < argc; i++) {
        const struct shard_drop *d = dropped(argv[i], drop, ndrop);
        if (d) {
            i += d->takes_value;
            continue;
        }
        at += (size_t)sprintf(s + at, "%s%s", at ? " " : "", argv[i]);
    }
    return s;
}

void shard_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p == '\n') {
            fputs("\\n", f);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

FILE *shard_begin(const char *path, const char *command, uint64_t job, const char *args,
                  const struct shard *sh, size_t total, size_t first, size_t end)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dlasim: shard output %s: %s\n", path, strerror(errno));
        return NULL;
    }
    fprintf(f, "{\"dlasim_shard\": 1, \"command\": \"%s\", \"job\": \"%016llx\", \"shard\": %u, "
               "\"of\": %u, \"total\": %zu, \"first\": %zu, \"end\": %zu, \"args\": ",
            command, (unsigned long long)job, sh->index, sh->count, total, first, end);
    shard_json_str(f, args);
    return f;
}

int shard_finish(FILE *f, const char *path, const struct shard *sh, size_t items)
{
    fprintf(f, "{\"shard_end\": %u, \"items\": %zu}\n", sh->index, items);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "dlasim: shard output %s: write failed\n", path);
        return -1;
    }
    return 0;
}
