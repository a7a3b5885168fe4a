/* One shard of `dlasim run --shard I/N` as JSON lines (run_shard.c) and its
 * reading back by `dlasim merge` (merge.c). */
#ifndef DLASIM_TOOLS_RUN_SHARD_H
#define DLASIM_TOOLS_RUN_SHARD_H

#include <stddef.h>

#include "dataset.h"
#include "run_results.h"
#include "shard.h"

struct run_shard {
    const char *path;                 /* --shard-out FILE */
    const struct shard *shard;
    const char *args;                 /* the command line (shard_args) */
    const char *model_path;           /* hashed into the job identity */
    const char *compile_report;       /* printed before the results by a single process */
    const struct dataset *in;         /* the whole input set (hashed) */
    const struct run_results *results; /* indexes [first, end) filled */
    size_t first, end;
    int report_wanted;                /* --report: shard 0 carries the layer report */
};

/* Creates the shard file and writes its header (job identity, what the
 * printer needs) before the inputs run; NULL after printing on failure. */
FILE *run_shard_open(const struct run_shard *j);
/* rc == 0: one {"i": K, "out": [...], ...} line per input of [first, end),
 * the report (shard 0) and the end line; the file is closed either way (a
 * shard that failed has no end line).  Returns rc, or -1 after printing
 * when the file could not be written. */
int run_shard_finish(FILE *f, const struct run_shard *j, int rc);

#endif
