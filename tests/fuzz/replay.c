/*
 * Plain replay of a fuzz target: runs LLVMFuzzerTestOneInput of the
 * tests/fuzz/fuzz_NAME.c it is linked with on every file named on the
 * command line (or in a folder named there), once each, without libFuzzer.
 * Built with the normal test builds (gcc, and clang with ASan+UBSan), so the
 * committed seeds and fixed reproducers (tests/fuzz/seeds/NAME/) are
 * regression tests of every `make test` build.  Prints one line per file
 * that crashes nothing and ends with "N passed, 0 failed"; a failure aborts
 * (the sanitizers or the crash say where).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of a folder, in name order. */
static int replay_dir(const char *dir, unsigned *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open folder %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char **nn = realloc(names, (n + 1) * sizeof(*names));
        if (!nn) {
            break;
        }
        names = nn;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (names[n]) {
            snprintf(names[n++], len, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    if (n) {
        qsort(names, n, sizeof(*names), cmp_names);
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rc && replay_file(names[i]) == 0) {
            (*count)++;
        } else {
            rc = -1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int rc;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = replay_dir(argv[i], &count);
        } else {
            rc = replay_file(argv[i]);
            count += rc == 0;
        }
        if (rc) {
            printf("%u passed, 1 failed\n", count);
            return 1;
        }
    }
    printf("%u passed, 0 failed\n", count);
    return 0;
}
