/* Model inputs of `dlasim compile` / `dlasim run` (dataset.c). */
#ifndef DLASIM_TOOLS_DATASET_H
#define DLASIM_TOOLS_DATASET_H

#include <stddef.h>
#include <stdint.h>

struct dataset {
    float *data;          /* count inputs of in_n floats */
    size_t count, cap;
    size_t in_n;
    uint32_t c, h, w;     /* the model input's geometry */
    float scale, mean;    /* pixel byte -> byte * scale - mean */
    uint64_t max_bytes;   /* host bytes one file and the float inputs may take
                             (--max-mem; 0 = no limit beyond 4 GiB per file) */
};

void dataset_init(struct dataset *d, const int64_t *dims, int rank, size_t in_n);
/* Add every input of a file or folder (at most limit more; 0 = all).
 * Prints what is wrong and returns -1 on bad input. */
int dataset_add(struct dataset *d, const char *path, size_t limit);
void dataset_free(struct dataset *d);
/* IDX1 labels (*-idx1-ubyte[.gz]). */
int labels_load(const char *path, uint8_t **labels, size_t *n);
/* Image geometry of a file into dims[2], dims[3] (when 0). */
int dataset_probe(struct dataset *d, const char *path, int64_t dims[4]);

#endif
