/* `dlasim run --shard I/N --shard-out FILE`: a shard's results as JSON lines
 * (format: shard.h, docs/cluster.md).  Output values are written with 9
 * significant digits, which gives every float back exactly, so the merge
 * prints the very bytes a single process prints. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_shard.h"

/* The job identity: command line, model file, the whole input set, labels and
 * the compiled model's report (calibration outcome). */
static int job_hash(const struct run_shard *j, uint64_t *h)
{
    uint8_t *model;
    size_t len;
    if (cli_read_file(j->model_path, &model, &len)) {
        return -1;
    }
    const struct run_results *r = j->results;
    uint64_t x = shard_hash_str(SHARD_HASH_INIT, "run");
    x = shard_hash_str(x, j->args);
    x = shard_hash(x, model, len);
    x = shard_hash(x, j->in->data, j->in->count * j->in->in_n * sizeof(float));
    x = shard_hash(x, r->labels ? r->labels : (const uint8_t *)"", r->labels ? r->count : 0);
    x = shard_hash_str(x, j->compile_report ? j->compile_report : "");
    free(model);
    *h = x;
    return 0;
}

static void write_header(FILE *f, const struct run_shard *j)
{
    const struct run_results *r = j->results;
    fprintf(f, ", \"config\": ");
    shard_json_str(f, r->config);
    fprintf(f, ", \"out_n\": %zu, \"top\": %d, \"draw\": %d, \"labels\": %d, \"compare_float\": %d, "
               "\"report\": %d, \"names\": [",
            r->out_n, r->top, r->draw, r->labels != NULL, r->fpred != NULL, j->report_wanted);
    for (int i = 0; i < r->n_names; i++) {
        fprintf(f, "%s", i ? ", " : "");
        shard_json_str(f, r->names[i]);
    }
    fprintf(f, "], \"compile_report\": ");
    shard_json_str(f, j->compile_report ? j->compile_report : "");
    fprintf(f, "}\n");
}

static void write_record(FILE *f, const struct run_results *r, size_t i, const char *drawing)
{
    fprintf(f, "{\"i\": %zu, \"out\": [", i);
    for (size_t k = 0; k < r->out_n; k++) {
        fprintf(f, "%s%.9g", k ? ", " : "", (double)r->out[i * r->out_n + k]);
    }
    fprintf(f, "]");
    if (r->labels) {
        fprintf(f, ", \"label\": %u", r->labels[i]);
    }
    if (r->fpred) {
        fprintf(f, ", \"fpred\": %d", r->fpred[i]);
    }
    if (r->fout) {
        fprintf(f, ", \"fout\": [");
        for (size_t k = 0; k < r->out_n; k++) {
            fprintf(f, "%s%.9g", k ? ", " : "", (double)r->fout[i * r->out_n + k]);
        }
        fprintf(f, "]");
    }
    if (drawing) {
        fprintf(f, ", \"draw\": ");
        shard_json_str(f, drawing);
    }
    fprintf(f, "}\n");
}

/* The drawing of input i when --draw picked it, else NULL. */
static const char *drawing_of(const struct run_results *r, size_t i)
{
    for (int d = 0; d < r->draw && (size_t)d < r->count; d++) {
        if (run_draw_index((size_t)d, r->count, r->draw) == i && r->drawings[d]) {
            return r->drawings[d];
        }
    }
    return NULL;
}

FILE *run_shard_open(const struct run_shard *j)
{
    uint64_t job;
    if (job_hash(j, &job)) {
        return NULL;
    }
    FILE *f = shard_begin(j->path, "run", job, j->args, j->shard, j->results->count, j->first,
                          j->end);
    if (f) {
        write_header(f, j);
        fflush(f);
    }
    return f;
}

int run_shard_finish(FILE *f, const struct run_shard *j, int rc)
{
    if (rc) {
        fclose(f);
        return rc;
    }
    for (size_t i = j->first; i < j->end; i++) {
        write_record(f, j->results, i, drawing_of(j->results, i));
    }
    if (j->results->report) {
        fprintf(f, "{\"report\": ");
        shard_json_str(f, j->results->report);
        fprintf(f, "}\n");
    }
    return shard_finish(f, j->path, j->shard, j->end - j->first);
}
