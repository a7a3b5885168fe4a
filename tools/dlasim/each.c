/*
 * `dlasim each LIST [--shard I/N --shard-out FILE] -- COMMAND ARG...`: the
 * bulk commands that are one program run per item — loadables over a list,
 * `dlasim estimate` over configurations, RTL grading over cases — run for
 * every line of LIST, each output captured and printed in list order, then a
 * summary.  In COMMAND's arguments an argument "{}" becomes the words of the
 * item's line and "{#}" its index.  Sharded, each item's output and exit
 * status go to the shard file and `dlasim merge` prints them through the
 * same printer (docs/cluster.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "merge.h"
#include "shard.h"

#define EACH_MAX_ARGS 4096

struct each_item {
    const char *line;      /* the list's line */
    int status;            /* exit status; 128 + N when killed by signal N, 127: not run */
    char *output;          /* stdout and stderr, interleaved as written */
};

struct each_print {
    size_t items, failed;
};

static void each_print_item(struct each_print *p, const struct each_item *it)
{
    const char *o = it->output ? it->output : "";
    printf("== %s\n%s", it->line, o);
    if (o[0] && o[strlen(o) - 1] != '\n') {
        printf("\n");
    }
    if (it->status) {
        printf("== exit %d\n", it->status);
        p->failed++;
    }
    p->items++;
}

static int each_print_end(const struct each_print *p)
{
    printf("each: %zu items, %zu passed, %zu failed\n", p->items, p->items - p->failed, p->failed);
    return p->failed ? 1 : 0;
}

/* The LIST's items: lines that are neither blank nor comments (#). */
static char **read_list(const char *path, char **text, size_t *n)
{
    uint8_t *buf;
    size_t len;
    *n = 0;
    if (cli_read_file(path, &buf, &len)) {
        return NULL;
    }
    char *t = realloc(buf, len + 1);
    char **items = t ? malloc((len / 2 + 2) * sizeof(*items)) : NULL;
    if (!items) {
        free(t ? t : (char *)buf);
        fprintf(stderr, "dlasim each: out of memory\n");
        return NULL;
    }
    t[len] = 0;
    for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
        line[strcspn(line, "\r")] = 0;
        char *s = line + strspn(line, " \t");
        if (*s && *s != '#') {
            items[(*n)++] = line;
        }
    }
    *text = t;
    return items;
}

/* COMMAND's argv for item `index` (words of `line` split on blanks, in w). */
static int build_argv(char **cmd, int ncmd, char *w, size_t index, char **argv, char *num)
{
    int n = 0;
    snprintf(num, 24, "%zu", index);
    for (int i = 0; i < ncmd; i++) {
        if (!strcmp(cmd[i], "{}")) {
            for (char *s = strtok(w, " \t"); s && n < EACH_MAX_ARGS - 1; s = strtok(NULL, " \t")) {
                argv[n++] = s;
            }
        } else if (n < EACH_MAX_ARGS - 1) {
            argv[n++] = !strcmp(cmd[i], "{#}") ? num : cmd[i];
        }
    }
    argv[n] = NULL;
    return n;
}

static int read_all(int fd, char **out)
{
    size_t len = 0, cap = 4096;
    char *b = malloc(cap);
    for (;;) {
        if (!b) {
            return -1;
        }
        if (len + 1 == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
        }
        ssize_t r = read(fd, b + len, cap - 1 - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        len += (size_t)r;
    }
    b[len] = 0;
    *out = b;
    return 0;
}

/* Runs argv with its stdout and stderr into it->output. */
static void run_item(char **argv, struct each_item *it)
{
    int fd[2];
    it->status = 127;
    it->output = NULL;
    if (pipe(fd)) {
        it->output = strdup("dlasim each: pipe failed\n");
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "dlasim each: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    if (pid < 0 || read_all(fd[0], &it->output)) {
        it->output = NULL;
    }
    close(fd[0]);
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    it->status = pid < 0 ? 127 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (!it->output) {
        it->output = strdup("dlasim each: could not run or read the command\n");
    }
}

static void write_item(FILE *f, size_t i, const struct each_item *it)
{
    fprintf(f, "{\"i\": %zu, \"status\": %d, \"line\": ", i, it->status);
    shard_json_str(f, it->line);
    fprintf(f, ", \"output\": ");
    shard_json_str(f, it->output ? it->output : "");
    fprintf(f, "}\n");
}

static FILE *open_shard(int argc, char **argv, char **items, size_t n, const struct shard *sh,
                        const char *path)
{
    static const struct shard_drop drop[] = { { "--shard", 1 }, { "--shard-out", 1 } };
    char *args = shard_args(argc, argv, drop, sizeof drop / sizeof drop[0]);
    if (!args) {
        return NULL;
    }
    uint64_t job = shard_hash_str(shard_hash_str(SHARD_HASH_INIT, "each"), args);
    for (size_t i = 0; i < n; i++) {
        job = shard_hash_str(job, items[i]);
    }
    size_t first, end;
    shard_range(sh, n, &first, &end);
    FILE *f = shard_begin(path, "each", job, args, sh, n, first, end);
    free(args);
    if (f) {
        fprintf(f, "}\n");
        fflush(f);
    }
    return f;
}

struct each_args {
    const char *list, *shard_out;
    struct shard shard;
    char **cmd;
    int ncmd;
};

static int parse_each(int argc, char **argv, struct each_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            a->cmd = argv + i + 1;
            a->ncmd = argc - i - 1;
            break;
        }
        if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
            if (shard_parse("--shard", argv[++i], &a->shard)) {
                return -1;
            }
        } else if (!strcmp(argv[i], "--shard-out") && i + 1 < argc) {
            a->shard_out = argv[++i];
        } else if (argv[i][0] != '-' && !a->list) {
            a->list = argv[i];
        } else {
            fprintf(stderr, "dlasim each: unexpected argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (!a->list || a->ncmd < 1 || !a->shard.count != !a->shard_out) {
        fprintf(stderr, "usage: dlasim each LIST [--shard I/N --shard-out FILE] -- COMMAND ARG...\n"
                        "       (\"{}\" in the arguments: the words of a line of LIST; \"{#}\": "
                        "its index)\n");
        return -1;
    }
    return 0;
}

int cmd_each(int argc, char **argv)
{
    struct each_args a;
    if (parse_each(argc, argv, &a)) {
        return 2;
    }
    char *text = NULL;
    size_t n, first, end;
    char **items = read_list(a.list, &text, &n);
    char **cargv = malloc(EACH_MAX_ARGS * sizeof(*cargv));
    if (!items || !cargv) {
        free(items);
        free(text);
        free(cargv);
        return 2;
    }
    shard_range(&a.shard, n, &first, &end);
    FILE *sf = a.shard.count ? open_shard(argc, argv, items, n, &a.shard, a.shard_out) : NULL;
    int rc = a.shard.count && !sf ? 2 : 0;
    struct each_print p = { 0, 0 };
    for (size_t i = first; i < end && !rc; i++) {
        char *words = strdup(items[i]), num[24];
        struct each_item it = { items[i], 127, NULL };
        if (words) {
            build_argv(a.cmd, a.ncmd, words, i, cargv, num);
            run_item(cargv, &it);
        }
        if (sf) {
            write_item(sf, i, &it);
            printf("%s %s (exit %d)\n", it.status ? "FAIL" : "done", it.line, it.status);
        } else {
            each_print_item(&p, &it);
        }
        free(it.output);
        free(words);
    }
    if (sf) { /* the items' verdicts are the merge's: a shard succeeds when written */
        rc = shard_finish(sf, a.shard_out, &a.shard, end - first) ? 2 : 0;
    } else if (!rc) {
        rc = each_print_end(&p);
    }
    free(cargv);
    free(items);
    free(text);
    return rc;
}

int merge_each(const struct merge_file *files, size_t n)
{
    struct each_print p = { 0, 0 };
    /* pass 0 checks every record, pass 1 prints */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t f = 0; f < n; f++) {
            size_t rows = 0;
            for (size_t l = 1; l + 1 < files[f].nlines; l++) {
                struct jval v;
                char err[128];
                double st = 0;
                struct each_item it = { NULL, 0, NULL };
                int bad = json_parse(files[f].lines[l], strlen(files[f].lines[l]), &v, err, sizeof err);
                if (!bad) {
                    it.line = json_get_str(&v, "line");
                    it.output = (char *)json_get_str(&v, "output");
                    bad = json_get_num(&v, "status", &st) || !it.line || !it.output;
                    it.status = (int)st;
                }
                if (bad) {
                    fprintf(stderr, "dlasim merge: %s:%zu: malformed item record\n", files[f].path, l + 1);
                    json_free(&v);
                    return -1;
                }
                if (pass) {
                    each_print_item(&p, &it);
                }
                rows++;
                json_free(&v);
            }
            if (rows != files[f].end - files[f].first) {
                fprintf(stderr, "dlasim merge: %s has %zu items, its header says %zu\n",
                        files[f].path, rows, files[f].end - files[f].first);
                return -1;
            }
        }
    }
    return each_print_end(&p);
}
