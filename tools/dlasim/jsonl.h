/* A small JSON reader for the shard files `dlasim merge` reads (jsonl.c):
 * one value per line; numbers are kept as their text so floats come back
 * exactly (strtof of the 9 digits written). */
#ifndef DLASIM_TOOLS_JSONL_H
#define DLASIM_TOOLS_JSONL_H

#include <stddef.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
    enum jtype t;
    char *s;             /* J_STR: the decoded string; J_NUM: the number's text */
    int b;               /* J_BOOL */
    size_t n;            /* J_ARR, J_OBJ: items */
    struct jval *v;      /* items */
    char **k;            /* J_OBJ: keys */
};

/* Parses text[0..len) (one value, whitespace around); -1 with err set. */
int json_parse(const char *text, size_t len, struct jval *out, char *err, size_t errlen);
void json_free(struct jval *v);
/* Member `key` of an object, or NULL. */
const struct jval *json_get(const struct jval *obj, const char *key);
/* A member that is a number: *out; -1 when absent or not a number. */
int json_get_num(const struct jval *obj, const char *key, double *out);
/* A member that is a string, or NULL. */
const char *json_get_str(const struct jval *obj, const char *key);

#endif
