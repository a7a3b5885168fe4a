/* `dlasim merge` (merge.c): a set of shard files checked to be the whole of
 * one job, handed to the merge of its command (merge_run.c). */
#ifndef DLASIM_TOOLS_MERGE_H
#define DLASIM_TOOLS_MERGE_H

#include <stddef.h>

#include "jsonl.h"
#include "shard.h"

struct merge_file {
    const char *path;
    char *text;              /* the whole file, cut into lines in place */
    char **lines;
    size_t nlines;
    int last_unterminated;   /* the last line has no newline: cut short */
    struct jval head;        /* line 0 */
    int head_ok;             /* head has every field a shard header has */
    struct shard sh;
    size_t total, first, end;
};

/* `dlasim run` shards, sorted by shard, complete; prints what one process
 * prints (and --json FILE); -1 after printing on failure. */
int merge_run(const struct merge_file *files, size_t n, const char *json);

/* `dlasim trace --suite` shards: the suite's output and exit status (1 when a
 * case failed, as one process) or -1 after printing on failure (trace_shard.c). */
int merge_trace(const struct merge_file *files, size_t n);

/* `dlasim each` shards: every item's output in list order and the summary
 * (exit 1 when an item failed), or -1 after printing (each.c). */
int merge_each(const struct merge_file *files, size_t n);

#endif
