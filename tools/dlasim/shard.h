/*
 * Splitting bulk commands across machines (`--shard I/N`, docs/cluster.md)
 * and the JSON-lines files the shards write for `dlasim merge`.
 *
 * A shard file is: one header line {"dlasim_shard": 1, "command": ...,
 * "job": HASH, "shard": I, "of": N, "total": T, "first": A, "end": B, ...},
 * one record per item of [A, B) and a last line {"shard_end": I, "items":
 * B - A}.  A file without that last line is a shard that failed or was
 * killed.  HASH names the job: the command line without the options that only
 * say where output goes, and the contents of the model and inputs, so shards
 * of different jobs are never merged.
 */
#ifndef DLASIM_TOOLS_SHARD_H
#define DLASIM_TOOLS_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SHARD_MAX 100000

struct shard {
    unsigned index, count; /* I, N: 0 <= I < N; count 0 = not sharded */
};

/* Strictly "I/N" (decimal, no sign, no spaces, 0 <= I < N <= SHARD_MAX);
 * -1 after printing what is wrong, naming `opt`. */
int shard_parse(const char *opt, const char *s, struct shard *sh);

/* The items [*first, *end) of `total` shard sh takes: contiguous blocks,
 * sizes differing by at most one, in order (shard 0 first). */
void shard_range(const struct shard *sh, size_t total, size_t *first, size_t *end);

/* 64-bit FNV-1a: the job identity (not a security hash: it tells jobs apart). */
#define SHARD_HASH_INIT 0xcbf29ce484222325ull
uint64_t shard_hash(uint64_t h, const void *data, size_t len);
uint64_t shard_hash_str(uint64_t h, const char *s);

/* The command line argv[0..argc) without `drop`-listed options (each with its
 * value when `takes_value`) as one string (malloc'd) for the job identity
 * and mismatch messages: the options that only choose output places. */
struct shard_drop {
    const char *name;
    int takes_value;
};
char *shard_args(int argc, char **argv, const struct shard_drop *drop, size_t ndrop);

/* s as a JSON string literal (quotes, escapes). */
void shard_json_str(FILE *f, const char *s);

/* Opens the shard file and writes the header's common fields up to (not
 * including) the closing brace; the caller adds its own fields and "}\n". */
FILE *shard_begin(const char *path, const char *command, uint64_t job, const char *args,
                  const struct shard *sh, size_t total, size_t first, size_t end);
/* The last line, close; -1 after printing when the file could not be written. */
int shard_finish(FILE *f, const char *path, const struct shard *sh, size_t items);

#endif
