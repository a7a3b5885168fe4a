/*
 * Trace parser: text -> array of commands (src/trace/trace.h).  Every error
 * names file:line and what was expected.  Register names resolve only
 * through the register database; interrupt names through the GLB
 * S_INTR_STATUS field names of the same database.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "regs/regdb.h"
#include "trace/trace.h"

#define MAX_ARGS 8
#define MAX_MEM_COMMAND (256u << 20) /* bytes one mem_init/mem_load may touch */
#define MAX_FILE_BYTES (1024u << 20)  /* largest trace or surface file read */
/* Host memory a parsed trace may hold (its mem_load payloads plus the
 * surface file being read) unless the caller gives another budget. */
#define DEFAULT_TRACE_BUDGET ((uint64_t)4 << 30)

struct parser {
    struct dlasim_trace *t;
    const char *dir;          /* folder of surface files, or NULL */
    unsigned line;
    char *err;
    size_t errlen;
    uint64_t budget;          /* bytes the payloads may hold (max_host_mem) */
    uint64_t held;            /* payload bytes the parsed commands hold */
    int over_budget;          /* err already says which budget was passed */
};

static int perr(struct parser *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (p->err && p->errlen) {
        snprintf(p->err, p->errlen, "%s:%u: %s", p->t->file, p->line, msg);
    }
    return DLASIM_ERR_PARSE;
}

/* DLASIM_ERR_NOMEM naming the file:line when `more` bytes beyond those
 * held would pass the budget: a trace naming a large surface file on many
 * lines stops here instead of taking the host. */
static int budget_check(struct parser *p, const char *path, uint64_t more)
{
    if (p->held + more <= p->budget) {
        return 0;
    }
    p->over_budget = 1;
    perr(p, "surface file %s: its payload (%llu bytes so far) would pass the host memory budget "
            "for trace payloads (%llu bytes held by earlier commands, max_host_mem=%llu)", path, (unsigned long long)more,
         (unsigned long long)p->held, (unsigned long long)p->budget);
    return DLASIM_ERR_NOMEM;
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) {
        *--e = '\0';
    }
    return s;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) {
        return -1;
    }
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || *end) {
        return -1;
    }
    *v = x;
    return 0;
}

static int arg_u64(struct parser *p, const char *what, const char *s, uint64_t *v)
{
    if (parse_u64(s, v)) {
        return perr(p, "%s: '%s' is not a number", what, s);
    }
    return 0;
}

static int arg_u32(struct parser *p, const char *what, const char *s, uint32_t *v)
{
    uint64_t x;
    int rc = arg_u64(p, what, s, &x);
    if (rc) {
        return rc;
    }
    if (x > 0xffffffffull) {
        return perr(p, "%s: '%s' does not fit in 32 bits", what, s);
    }
    *v = (uint32_t)x;
    return 0;
}

/* Upper-case name of a database for messages ("RK3588", "NVDLA"). */
static const char *db_title(const struct regdb *db, char *buf, size_t len)
{
    size_t i = 0;
    for (; db->name[i] && i + 1 < len; i++) {
        buf[i] = (char)toupper((unsigned char)db->name[i]);
    }
    buf[i] = '\0';
    return buf;
}

/* The trace's database is that of its first register name; mixing is an error. */
static int set_db(struct parser *p, const struct regdb *db, const char *s)
{
    if (p->t->db && p->t->db != db) {
        char a[32], b[32];
        return perr(p, "register '%s' is an %s one, but earlier lines name %s registers: a trace "
                    "drives one device", s, db_title(db, a, sizeof(a)),
                    db_title(p->t->db, b, sizeof(b)));
    }
    p->t->db = db;
    return 0;
}

/* A register by its trace name: the database is the one whose trace prefix
 * the name carries (NVDLA_, RKNN_); names without one are the first
 * database's (NVDLA's, whose names may omit NVDLA_). */
static int arg_reg(struct parser *p, const char *s, uint32_t *addr)
{
    const struct regdb *named = regdb_by_trace_name(s);
    const struct regdb *db = named ? named : regdb_all[0];
    const struct nvdla_reg_desc *r = regdb_reg_by_name(db, s);
    if (!r) {
        char title[32];
        return perr(p, "unknown register '%s' (not in the %s register database, regdb/%s.xml; "
                    "names are NVDLA_<UNIT>.<REGISTER>_0 or RKNN_<block>_<register>)", s,
                    db_title(db, title, sizeof(title)), db->name);
    }
    *addr = r->addr; /* NVDLA: CSB address; RK3588: offset in core 0's window */
    return set_db(p, db, s);
}

static int arg_mem(struct parser *p, const char *s, int *port)
{
    if (!strcmp(s, "pri_mem") || !strcmp(s, "1")) {
        *port = DLASIM_PORT_DBB;
    } else if (!strcmp(s, "sec_mem") || !strcmp(s, "2")) {
        *port = DLASIM_PORT_CVIF;
    } else {
        return perr(p, "unknown memory '%s' (expected pri_mem, 1, sec_mem or 2)", s);
    }
    return 0;
}

static int arg_sync(struct parser *p, const char *s, char **out)
{
    for (const char *c = s; *c; c++) {
        if (!isalnum((unsigned char)*c) && *c != '_') {
            return perr(p, "sync id '%s' must be a C identifier", s);
        }
    }
    if (!*s) {
        return perr(p, "empty sync id");
    }
    *out = dup_range(s, strlen(s));
    return *out ? 0 : DLASIM_ERR_NOMEM;
}

/* "SDP_0", "CDMA_DAT_1", "DPU_0": checked for form here; which status bit it
 * is depends on the trace's database, known once the whole trace is read
 * (resolve_interrupts). */
static int arg_intr(struct parser *p, const char *s)
{
    size_t n = strlen(s);
    if (n < 3 || n > 40 || s[n - 2] != '_' || (s[n - 1] != '0' && s[n - 1] != '1')) {
        return perr(p, "interrupt '%s' must be <ENGINE>_<GROUP>, e.g. SDP_0 or CDMA_DAT_1", s);
    }
    return 0;
}

/* ---- surface files (*.dat) -------------------------------------------------- */

struct dat_reader {
    const char *s, *end;
    unsigned line;
};

static void dat_skip(struct dat_reader *r)
{
    while (r->s < r->end && (isspace((unsigned char)*r->s) || *r->s == ',' || *r->s == '{' ||
                             *r->s == '}')) {
        if (*r->s == '\n') {
            r->line++;
        }
        r->s++;
    }
}

static int dat_key(struct dat_reader *r, const char *key, uint64_t *v)
{
    size_t kl = strlen(key);
    dat_skip(r);
    if ((size_t)(r->end - r->s) < kl || memcmp(r->s, key, kl)) {
        return -1;
    }
    r->s += kl;
    char *e;
    errno = 0;
    unsigned long long x = strtoull(r->s, &e, 0);
    if (e == r->s || errno || e > r->end) {
        return -1;
    }
    r->s = e;
    *v = x;
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = tolower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

static int dat_byte(struct dat_reader *r, uint8_t *b)
{
    while (r->s < r->end && (*r->s == ' ' || *r->s == '\t')) {
        r->s++;
    }
    if (r->end - r->s < 3 || r->s[0] != '0' || (r->s[1] != 'x' && r->s[1] != 'X')) {
        return -1;
    }
    int h = hexval((unsigned char)r->s[2]);
    int l = r->end - r->s >= 4 ? hexval((unsigned char)r->s[3]) : -1;
    if (h < 0) {
        return -1;
    }
    if (l < 0) {
        *b = (uint8_t)h;
        r->s += 3;
    } else {
        *b = (uint8_t)(h * 16 + l);
        r->s += 4;
    }
    return 0;
}

static int push_segment(struct trace_cmd *c, size_t *cap, uint64_t off, size_t data, size_t len)
{
    if (c->nsegs && c->segs[c->nsegs - 1].offset + c->segs[c->nsegs - 1].len == off &&
        c->segs[c->nsegs - 1].data + c->segs[c->nsegs - 1].len == data) {
        c->segs[c->nsegs - 1].len += len;
        return 0;
    }
    if (c->nsegs == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct trace_segment *s = realloc(c->segs, ncap * sizeof(*s));
        if (!s) {
            return DLASIM_ERR_NOMEM;
        }
        c->segs = s;
        *cap = ncap;
    }
    c->segs[c->nsegs].offset = off;
    c->segs[c->nsegs].len = len;
    c->segs[c->nsegs].data = data;
    c->nsegs++;
    return 0;
}

static int dat_parse(struct parser *p, const char *path, const char *text, size_t len,
                     struct trace_cmd *c)
{
    struct dat_reader r = {text, text + len, 1};
    size_t segcap = 0, used = 0, bytecap = len / 4 + 16;
    /* the payload held is what the budget counts (the file's text is read
     * and freed): never reserve beyond what is left of it */
    if (p->held + bytecap > p->budget) {
        bytecap = (size_t)(p->budget - p->held) + 16;
    }
    c->bytes = malloc(bytecap);
    if (!c->bytes) {
        return DLASIM_ERR_NOMEM;
    }
    for (;;) {
        uint64_t off, size;
        dat_skip(&r);
        if (r.s >= r.end) {
            /* keep only the payload: the budget counts what stays held */
            uint8_t *nb = used ? realloc(c->bytes, used) : NULL;
            if (nb) {
                c->bytes = nb;
            }
            p->held += used;
            return 0;
        }
        if (dat_key(&r, "offset:", &off) || dat_key(&r, "size:", &size)) {
            return perr(p, "surface file %s:%u: expected '{offset:0x.., size:N, payload:...}'",
                        path, r.line);
        }
        dat_skip(&r);
        if (r.end - r.s < 8 || memcmp(r.s, "payload:", 8)) {
            return perr(p, "surface file %s:%u: expected 'payload:'", path, r.line);
        }
        r.s += 8;
        if (size > MAX_MEM_COMMAND || off > MAX_MEM_COMMAND || size > (uint64_t)(r.end - r.s) / 3) {
            return perr(p, "surface file %s:%u: record size %llu is larger than the file allows",
                        path, r.line, (unsigned long long)size);
        }
        if (budget_check(p, path, (uint64_t)used + size)) {
            return DLASIM_ERR_NOMEM;
        }
        if (used + size > bytecap) {
            bytecap = (used + size) * 2;
            if (p->held + bytecap > p->budget) {
                bytecap = used + (size_t)size; /* exactly what the budget allows */
            }
            uint8_t *nb = realloc(c->bytes, bytecap);
            if (!nb) {
                return DLASIM_ERR_NOMEM;
            }
            c->bytes = nb;
        }
        for (uint64_t i = 0; i < size; i++) {
            if (dat_byte(&r, &c->bytes[used + i])) {
                return perr(p, "surface file %s:%u: payload has fewer than %llu bytes 0xNN",
                            path, r.line, (unsigned long long)size);
            }
        }
        int rc = push_segment(c, &segcap, off, used, (size_t)size);
        if (rc) {
            return rc;
        }
        used += (size_t)size;
    }
}

/* Whole regular file (never a device or FIFO, which might not end). */
static int read_file(const char *path, uint64_t max, char **text, size_t *len)
{
    struct stat st;
    if (stat(path, &st)) {
        return DLASIM_ERR_IO;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > (off_t)MAX_FILE_BYTES || (uint64_t)st.st_size > max) {
        errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
        return DLASIM_ERR_IO;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        return DLASIM_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) {
            break;
        }
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
        }
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return buf ? DLASIM_ERR_IO : DLASIM_ERR_NOMEM;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

static int load_surface(struct parser *p, const char *name, struct trace_cmd *c)
{
    char path[4096];
    if (!p->dir || name[0] == '/') {
        snprintf(path, sizeof(path), "%s", name);
    } else {
        snprintf(path, sizeof(path), "%s/%s", p->dir, name);
    }
    char *text;
    size_t len;
    int rc = read_file(path, MAX_FILE_BYTES, &text, &len);
    if (rc) {
        perr(p, "cannot read surface file '%s': %s", path,
             rc == DLASIM_ERR_NOMEM ? "out of memory" : strerror(errno));
        return rc;
    }
    rc = dat_parse(p, path, text, len, c);
    free(text);
    return rc;
}

/* ---- commands ------------------------------------------------------------------- */

static int split_args(struct parser *p, char *s, char **argv, int *argc)
{
    *argc = 0;
    if (!*trim(s)) {
        return 0;
    }
    for (;;) {
        if (*argc == MAX_ARGS) {
            return perr(p, "too many arguments");
        }
        char *start = s;
        int quoted = 0;
        while (*s && (quoted || *s != ',')) {
            if (*s == '"') {
                quoted = !quoted;
            }
            s++;
        }
        if (quoted) {
            return perr(p, "unterminated string");
        }
        int last = *s == '\0';
        *s = '\0';
        argv[(*argc)++] = trim(start);
        if (last) {
            return 0;
        }
        s++;
    }
}

static int want_args(struct parser *p, const char *cmd, int argc, int want)
{
    if (argc != want) {
        return perr(p, "%s takes %d arguments, got %d", cmd, want, argc);
    }
    return 0;
}

static int unquote(struct parser *p, char *s, char **out)
{
    size_t n = strlen(s);
    if (n < 2 || s[0] != '"' || s[n - 1] != '"') {
        return perr(p, "expected a quoted file name, got '%s'", s);
    }
    *out = dup_range(s + 1, n - 2);
    return *out ? 0 : DLASIM_ERR_NOMEM;
}

static int parse_mem_range(struct parser *p, struct trace_cmd *c, char *mem, char *addr,
                           char *size)
{
    int rc = arg_mem(p, mem, &c->port);
    if (!rc) {
        rc = arg_u64(p, "address", addr, &c->mem_addr);
    }
    if (!rc && size) {
        rc = arg_u64(p, "size", size, &c->mem_size);
        if (!rc && c->mem_size > MAX_MEM_COMMAND) {
            rc = perr(p, "size 0x%llx exceeds the %u MiB a command may touch",
                      (unsigned long long)c->mem_size, MAX_MEM_COMMAND >> 20);
        }
    }
    return rc;
}

static int parse_command(struct parser *p, const char *name, int argc, char **argv,
                         struct trace_cmd *c)
{
    int rc;
    if (!strcmp(name, "reg_write") || !strcmp(name, "reg_read") ||
        !strcmp(name, "poll_reg_equal")) {
        c->op = name[4] == 'w' ? TRACE_REG_WRITE : name[4] == 'r' ? TRACE_REG_READ
                                                                 : TRACE_POLL_REG_EQUAL;
        rc = want_args(p, name, argc, 2);
        if (!rc) {
            rc = arg_reg(p, argv[0], &c->addr);
        }
        if (!rc) {
            rc = arg_u32(p, "value", argv[1], &c->value);
        }
        if (!rc) {
            c->text = dup_range(argv[0], strlen(argv[0]));
        }
        return rc;
    }
    if (!strcmp(name, "mem_init")) {
        c->op = TRACE_MEM_INIT;
        rc = want_args(p, name, argc, 4);
        if (!rc && strcmp(argv[3], "ALL_ZERO")) {
            rc = perr(p, "unknown mem_init pattern '%s' (supported: ALL_ZERO)", argv[3]);
        }
        return rc ? rc : parse_mem_range(p, c, argv[0], argv[1], argv[2]);
    }
    if (!strcmp(name, "mem_load")) {
        c->op = TRACE_MEM_LOAD;
        rc = want_args(p, name, argc, 3);
        if (!rc) {
            rc = parse_mem_range(p, c, argv[0], argv[1], NULL);
        }
        if (!rc) {
            rc = unquote(p, argv[2], &c->text);
        }
        return rc ? rc : load_surface(p, c->text, c);
    }
    if (!strcmp(name, "intr_notify")) {
        c->op = TRACE_INTR_NOTIFY;
        if (argc == 1) {
            return perr(p, "intr_notify needs the interrupt: intr_notify(<ENGINE>_<GROUP>, id)");
        }
        rc = want_args(p, name, argc, 2);
        if (!rc) {
            rc = arg_intr(p, argv[0]);
        }
        if (!rc) {
            c->text = dup_range(argv[0], strlen(argv[0]));
            rc = arg_sync(p, argv[1], &c->sync);
        }
        return rc;
    }
    if (!strcmp(name, "check_crc")) {
        c->op = TRACE_CHECK_CRC;
        rc = want_args(p, name, argc, 5);
        if (!rc) {
            rc = arg_sync(p, argv[0], &c->sync);
        }
        if (!rc) {
            rc = parse_mem_range(p, c, argv[1], argv[2], argv[3]);
        }
        return rc ? rc : arg_u32(p, "crc", argv[4], &c->value);
    }
    if (!strcmp(name, "check_nothing")) {
        c->op = TRACE_CHECK_NOTHING;
        rc = want_args(p, name, argc, 1);
        return rc ? rc : arg_sync(p, argv[0], &c->sync);
    }
    if (!strcmp(name, "sync_notify") || !strcmp(name, "sync_wait")) {
        c->op = TRACE_NOP; /* the player is sequential: ordering holds already */
        return want_args(p, name, argc, 2);
    }
    return perr(p, "unknown command '%s'", name);
}

static int push_cmd(struct dlasim_trace *t, struct trace_cmd **out)
{
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 256;
        struct trace_cmd *n = realloc(t->cmds, ncap * sizeof(*n));
        if (!n) {
            return DLASIM_ERR_NOMEM;
        }
        t->cmds = n;
        t->cap = ncap;
    }
    *out = &t->cmds[t->n++];
    memset(*out, 0, sizeof(**out));
    return 0;
}

/* "// expect: never completes" (a comment to NVIDIA's parser). */
static void parse_directive(struct parser *p, const char *comment)
{
    static const char directive[] = "expect: never completes";
    comment += 2;
    while (*comment == ' ' || *comment == '\t') {
        comment++;
    }
    if (!strncmp(comment, directive, sizeof(directive) - 1) && !p->t->expect_never_line) {
        p->t->expect_never_line = p->line;
    }
}

static int parse_line(struct parser *p, char *s)
{
    char *comment = strstr(s, "//");
    if (comment) {
        parse_directive(p, comment);
        *comment = '\0';
    }
    s = trim(s);
    if (!*s) {
        return 0;
    }
    char *open = strchr(s, '(');
    size_t n = strlen(s);
    if (!open || n < 3 || s[n - 1] != ';' || s[n - 2] != ')') {
        return perr(p, "expected 'command(arguments);', got '%s'", s);
    }
    s[n - 2] = '\0';
    *open = '\0';
    char *name = trim(s);
    char *argv[MAX_ARGS];
    int argc;
    int rc = split_args(p, open + 1, argv, &argc);
    struct trace_cmd *c;
    if (!rc) {
        rc = push_cmd(p->t, &c);
    }
    if (!rc) {
        c->line = p->line;
        rc = parse_command(p, name, argc, argv, c);
    }
    if (!rc && (c->op == TRACE_CHECK_CRC || c->op == TRACE_CHECK_NOTHING)) {
        p->t->nchecks++;
    }
    return rc;
}

/* Every check must name an event some intr_notify produces. */
static int check_sync_ids(struct parser *p)
{
    struct dlasim_trace *t = p->t;
    for (size_t i = 0; i < t->n; i++) {
        if (t->cmds[i].op != TRACE_CHECK_CRC && t->cmds[i].op != TRACE_CHECK_NOTHING) {
            continue;
        }
        int found = 0;
        for (size_t j = 0; j < t->n && !found; j++) {
            found = t->cmds[j].op == TRACE_INTR_NOTIFY && !strcmp(t->cmds[j].sync, t->cmds[i].sync);
        }
        if (!found) {
            p->line = t->cmds[i].line;
            return perr(p, "check refers to event '%s' that no intr_notify produces",
                        t->cmds[i].sync);
        }
    }
    return 0;
}

void dlasim_trace_free(struct dlasim_trace *t)
{
    if (!t) {
        return;
    }
    for (size_t i = 0; i < t->n; i++) {
        free(t->cmds[i].sync);
        free(t->cmds[i].text);
        free(t->cmds[i].segs);
        free(t->cmds[i].bytes);
    }
    free(t->cmds);
    free(t->file);
    free(t);
}

/* A required pointer argument of a public function is NULL. */
static int null_arg(char *err, size_t errlen, const char *fn, const char *arg)
{
    if (err && errlen) {
        snprintf(err, errlen, "%s: %s is NULL", fn, arg);
    }
    return DLASIM_ERR_INVAL;
}

/* Each intr_notify names a field of the trace's database's interrupt status
 * register (regdb: intr_status, intr_infix): NVDLA GLB S_INTR_STATUS
 * SDP_DONE_STATUS0 for SDP_0, RK3588 PC INTERRUPT_STATUS DPU_0 for DPU_0. */
static int resolve_interrupts(struct parser *p)
{
    const struct regdb *db = p->t->db ? p->t->db : regdb_all[0];
    for (size_t i = 0; i < p->t->n; i++) {
        struct trace_cmd *c = &p->t->cmds[i];
        if (c->op != TRACE_INTR_NOTIFY) {
            continue;
        }
        c->intr_bits = regdb_intr_bit(db, c->text);
        if (!c->intr_bits) {
            const struct nvdla_reg_desc *r = regdb_reg_by_addr(db, db->intr_status);
            char title[32];
            p->line = c->line;
            return perr(p, "unknown interrupt '%s': no field %.*s%s%c in the %s interrupt "
                        "status register %s", c->text, (int)strlen(c->text) - 2, c->text,
                        db->intr_infix, c->text[strlen(c->text) - 1],
                        db_title(db, title, sizeof(title)), r ? r->name : "?");
        }
    }
    return 0;
}

static int parse_text_budget(const char *text, size_t len, const char *name, const char *dir,
                             uint64_t budget, struct dlasim_trace **out, char *err, size_t errlen)
{
    if (!out) {
        return null_arg(err, errlen, "dlasim_trace_parse_text", "out");
    }
    *out = NULL;
    if (!text && len) {
        return null_arg(err, errlen, "dlasim_trace_parse_text", "text");
    }
    if (!name) {
        name = "<trace text>";
    }
    struct dlasim_trace *t = calloc(1, sizeof(*t));
    char *copy = dup_range(text ? text : "", len);
    if (!t || !copy || !(t->file = dup_range(name, strlen(name)))) {
        free(copy);
        dlasim_trace_free(t);
        return DLASIM_ERR_NOMEM;
    }
    struct parser p = {t, dir, 0, err, errlen, budget, 0, 0};
    int rc = 0;
    char *s = copy;
    while (!rc && s < copy + len) {
        char *nl = memchr(s, '\n', (size_t)(copy + len - s));
        if (nl) {
            *nl = '\0';
        }
        p.line++;
        if (strlen(s) != (size_t)((nl ? nl : copy + len) - s)) {
            rc = perr(&p, "NUL byte in trace text");
            break;
        }
        rc = parse_line(&p, s);
        s = nl ? nl + 1 : copy + len;
    }
    if (!rc) {
        rc = check_sync_ids(&p);
    }
    if (!rc) {
        rc = resolve_interrupts(&p);
    }
    free(copy);
    if (rc) {
        if (rc == DLASIM_ERR_NOMEM && !p.over_budget && err && errlen) {
            snprintf(err, errlen, "%s:%u: out of memory", name, p.line);
        }
        dlasim_trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int dlasim_trace_parse_text(const char *text, size_t len, const char *name, const char *dir,
                            struct dlasim_trace **out, char *err, size_t errlen)
{
    return parse_text_budget(text, len, name, dir, DEFAULT_TRACE_BUDGET, out, err, errlen);
}

int dlasim_trace_parse_file(const char *path, struct dlasim_trace **out, char *err,
                            size_t errlen)
{
    return dlasim_trace_parse_file_max(path, 0, out, err, errlen);
}

int dlasim_trace_parse_file_max(const char *path, uint64_t max_host_mem,
                                struct dlasim_trace **out, char *err, size_t errlen)
{
    uint64_t budget = max_host_mem ? max_host_mem : DEFAULT_TRACE_BUDGET;
    char *text, dir[4096];
    size_t len;
    if (!out) {
        return null_arg(err, errlen, "dlasim_trace_parse_file", "out");
    }
    *out = NULL;
    if (!path) {
        return null_arg(err, errlen, "dlasim_trace_parse_file", "path");
    }
    int rc = read_file(path, MAX_FILE_BYTES, &text, &len);
    if (rc) {
        if (err && errlen) {
            snprintf(err, errlen, "%s: cannot read: %s", path,
                     rc == DLASIM_ERR_NOMEM ? "out of memory" : strerror(errno));
        }
        return rc;
    }
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
    } else {
        snprintf(dir, sizeof(dir), ".");
    }
    rc = parse_text_budget(text, len, path, dir, budget, out, err, errlen);
    free(text);
    return rc;
}

size_t dlasim_trace_commands(const struct dlasim_trace *t)
{
    return t ? t->n : 0;
}

size_t dlasim_trace_checks(const struct dlasim_trace *t)
{
    return t ? t->nchecks : 0;
}
