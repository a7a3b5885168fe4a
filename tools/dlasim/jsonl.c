/* The JSON reader of jsonl.h: recursive descent over RFC 8259 values, with a
 * depth limit (a shard file nests three deep). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"

#define JSON_MAX_DEPTH 32

struct jp {
    const char *p, *end;
    char *err;
    size_t errlen;
};

static int jfail(struct jp *j, const char *why)
{
    if (j->err[0] == 0) {
        snprintf(j->err, j->errlen, "%s", why);
    }
    return -1;
}

static void skip_ws(struct jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
        j->p++;
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One \uXXXX code point (BMP only; what shard_json_str writes) as UTF-8. */
static int put_u(struct jp *j, char *o, size_t *n)
{
    unsigned u = 0;
    for (int i = 1; i <= 4; i++) {
        int h = j->p + i < j->end ? hexval(j->p[i]) : -1;
        if (h < 0) {
            return jfail(j, "bad \\u escape");
        }
        u = u << 4 | (unsigned)h;
    }
    j->p += 4;
    if (u < 0x80) {
        o[(*n)++] = (char)u;
    } else if (u < 0x800) {
        o[(*n)++] = (char)(0xc0 | u >> 6);
        o[(*n)++] = (char)(0x80 | (u & 0x3f));
    } else {
        o[(*n)++] = (char)(0xe0 | u >> 12);
        o[(*n)++] = (char)(0x80 | ((u >> 6) & 0x3f));
        o[(*n)++] = (char)(0x80 | (u & 0x3f));
    }
    return 0;
}

static int parse_string(struct jp *j, char **out)
{
    j->p++; /* the opening quote */
    const char *q = j->p;
    while (q < j->end && *q != '"') {
        q += *q == '\\' ? 2 : 1;
    }
    if (q >= j->end) {
        return jfail(j, "unterminated string");
    }
    char *o = malloc((size_t)(q - j->p) * 3 + 1); /* \uXXXX (6) -> at most 3 bytes */
    size_t n = 0;
    if (!o) {
        return jfail(j, "out of memory");
    }
    for (; *j->p != '"'; j->p++) {
        char c = *j->p;
        if (c != '\\') {
            o[n++] = c;
            continue;
        }
        c = *++j->p;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *at = strchr(from, c);
        if (c == 'u') {
            if (put_u(j, o, &n)) {
                free(o);
                return -1;
            }
        } else if (c && at) {
            o[n++] = to[at - from];
        } else {
            free(o);
            return jfail(j, "bad escape in string");
        }
    }
    j->p++;
    o[n] = 0;
    *out = o;
    return 0;
}

static int parse_value(struct jp *j, struct jval *v, int depth);

static int push(struct jp *j, struct jval *v, size_t *cap)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        struct jval *nv = realloc(v->v, *cap * sizeof *nv);
        char **nk = v->t == J_OBJ ? realloc(v->k, *cap * sizeof *nk) : v->k;
        if (nv) {
            v->v = nv;
        }
        if (nk) {
            v->k = nk;
        }
        if (!nv || (v->t == J_OBJ && !nk)) {
            return jfail(j, "out of memory");
        }
    }
    memset(&v->v[v->n], 0, sizeof v->v[0]);
    if (v->t == J_OBJ) {
        v->k[v->n] = NULL;
    }
    v->n++;
    return 0;
}

/* Array or object items up to the closing bracket `close`. */
static int parse_items(struct jp *j, struct jval *v, char close, int depth)
{
    size_t cap = 0;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        skip_ws(j);
        if (push(j, v, &cap)) {
            return -1;
        }
        if (v->t == J_OBJ) {
            if (j->p >= j->end || *j->p != '"' || parse_string(j, &v->k[v->n - 1])) {
                return jfail(j, "object key expected");
            }
            skip_ws(j);
            if (j->p >= j->end || *j->p++ != ':') {
                return jfail(j, "':' expected");
            }
        }
        if (parse_value(j, &v->v[v->n - 1], depth + 1)) {
            return -1;
        }
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        return jfail(j, "',' or closing bracket expected");
    }
}

static int parse_number(struct jp *j, struct jval *v)
{
    const char *q = j->p;
    while (q < j->end && strchr("+-0123456789.eE", *q)) {
        q++;
    }
    char *end;
    v->s = q > j->p ? strndup(j->p, (size_t)(q - j->p)) : NULL;
    if (!v->s) {
        return jfail(j, "value expected");
    }
    strtod(v->s, &end);
    if (*end) {
        return jfail(j, "malformed number");
    }
    v->t = J_NUM;
    j->p = q;
    return 0;
}

static int parse_word(struct jp *j, struct jval *v)
{
    static const char *const words[] = { "true", "false", "null" };
    for (int i = 0; i < 3; i++) {
        size_t l = strlen(words[i]);
        if ((size_t)(j->end - j->p) >= l && !memcmp(j->p, words[i], l)) {
            v->t = i < 2 ? J_BOOL : J_NULL;
            v->b = i == 0;
            j->p += l;
            return 0;
        }
    }
    return parse_number(j, v);
}

static int parse_value(struct jp *j, struct jval *v, int depth)
{
    memset(v, 0, sizeof *v);
    skip_ws(j);
    if (depth > JSON_MAX_DEPTH) {
        return jfail(j, "nested too deep");
    }
    if (j->p >= j->end) {
        return jfail(j, "value expected");
    }
    if (*j->p == '"') {
        v->t = J_STR;
        return parse_string(j, &v->s);
    }
    if (*j->p == '[' || *j->p == '{') {
        v->t = *j->p == '[' ? J_ARR : J_OBJ;
        return parse_items(j, v, *j->p == '[' ? ']' : '}', depth);
    }
    return parse_word(j, v);
}

int json_parse(const char *text, size_t len, struct jval *out, char *err, size_t errlen)
{
    struct jp j = { text, text + len, err, errlen };
    err[0] = 0;
    int rc = parse_value(&j, out, 0);
    skip_ws(&j);
    if (!rc && j.p != j.end) {
        rc = jfail(&j, "text after the value");
    }
    if (rc) {
        json_free(out);
    }
    return rc;
}

void json_free(struct jval *v)
{
    for (size_t i = 0; i < v->n; i++) {
        json_free(&v->v[i]);
        if (v->k) {
            free(v->k[i]);
        }
    }
    free(v->v);
    free(v->k);
    free(v->s);
    memset(v, 0, sizeof *v);
}

const struct jval *json_get(const struct jval *obj, const char *key)
{
    for (size_t i = 0; obj->t == J_OBJ && i < obj->n; i++) {
        if (obj->k[i] && !strcmp(obj->k[i], key)) {
            return &obj->v[i];
        }
    }
    return NULL;
}

int json_get_num(const struct jval *obj, const char *key, double *out)
{
    const struct jval *v = json_get(obj, key);
    if (!v || v->t != J_NUM) {
        return -1;
    }
    *out = strtod(v->s, NULL);
    return 0;
}

const char *json_get_str(const struct jval *obj, const char *key)
{
    const struct jval *v = json_get(obj, key);
    return v && v->t == J_STR ? v->s : NULL;
}
