/*
 * Strict number parsing for every command-line option: the whole value must
 * be a number (no trailing junk, no empty string, no sign where the option
 * takes no sign, no silent wrap or truncation), inside the option's range.
 * Every parser prints "dlasim: OPTION: why, got 'VALUE'" and returns -1, so
 * no option is ever read as 0 or as a wrapped value (issue 22, item 5).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int bad(const char *opt, const char *why, const char *s)
{
    fprintf(stderr, "dlasim: %s %s, got '%s'\n", opt, why, s);
    return -1;
}

/* Decimal or 0x-hexadecimal digits only, the whole string; no sign, no spaces. */
static int digits_u64(const char *s, uint64_t *out)
{
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const char *d = hex ? s + 2 : s;
    if (!(hex ? isxdigit((unsigned char)d[0]) : isdigit((unsigned char)d[0]))) {
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(d, &end, hex ? 16 : 10);
    if (*end || errno) {
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    char why[128];
    snprintf(why, sizeof why, "takes a whole number from %" PRIu64 " to %" PRIu64
             " (decimal or 0x hex)", min, max);
    if (!s || digits_u64(s, &v) || v < min || v > max) {
        return bad(opt, why, s ? s : "");
    }
    *out = v;
    return 0;
}

int cli_parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    if (cli_parse_u64(opt, s, min, max, &v)) {
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int cli_parse_count(const char *opt, const char *s, size_t max, size_t *out)
{
    uint64_t v;
    if (cli_parse_u64(opt, s, 0, max, &v)) {
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

int cli_parse_double(const char *opt, const char *s, double min, double max, double *out)
{
    char why[128];
    snprintf(why, sizeof why, "takes a finite number from %g to %g", min, max);
    if (!s || !*s || isspace((unsigned char)s[0])) {
        return bad(opt, why, s ? s : "");
    }
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    /* ERANGE on underflow too: 1e-400 is not the 0 the user did not write */
    if (*end || errno || !isfinite(x) || x < min || x > max) {
        return bad(opt, why, s);
    }
    *out = x;
    return 0;
}

int cli_parse_float(const char *opt, const char *s, double min, double max, float *out)
{
    double x;
    if (cli_parse_double(opt, s, min, max, &x)) {
        return -1;
    }
    if (x != 0 && fabs(x) < 1e-30) { /* would be a float denormal or 0 */
        return bad(opt, "is too small for a 32-bit float", s);
    }
    *out = (float)x;
    return 0;
}

/* "123", "512K", "8G", "1T", "64MiB", "2kb" (binary multiples). */
int cli_parse_size(const char *opt, const char *s, uint64_t *out)
{
    const char *why = "takes a number with an optional K, M, G or T suffix (0 = no limit)";
    if (!s || !isdigit((unsigned char)s[0])) {
        return bad(opt, why, s ? s : "");
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    const char *units = "KMGT";
    const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    if (*end && !u) {
        return bad(opt, why, s);
    }
    if (u) {
        shift = 10u * (unsigned)(u - units + 1);
        end++;
        end += toupper((unsigned char)*end) == 'I';
        end += toupper((unsigned char)*end) == 'B';
    }
    if (*end || errno || v > (UINT64_MAX >> shift)) {
        return bad(opt, why, s);
    }
    *out = (uint64_t)v << shift;
    return 0;
}

/* "ADDR:REST": ADDR a 0x-hex (or decimal) address below 2^32; *rest after the colon. */
int cli_parse_addr_prefix(const char *opt, const char *s, uint32_t *addr, const char **rest)
{
    const char *colon = s ? strchr(s, ':') : NULL;
    char num[32];
    uint64_t v;
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof num) {
        return bad(opt, "takes ADDR:... with a 32-bit address", s ? s : "");
    }
    memcpy(num, s, (size_t)(colon - s));
    num[colon - s] = 0;
    /* a bare hex number without 0x is read as hex, as the usage always said */
    int plain_hex = num[0] != '0' || (num[1] != 'x' && num[1] != 'X');
    if (plain_hex) {
        char tmp[34];
        snprintf(tmp, sizeof tmp, "0x%s", num);
        memcpy(num, tmp, sizeof num - 1);
        num[sizeof num - 1] = 0;
    }
    if (digits_u64(num, &v) || v > UINT32_MAX) {
        return bad(opt, "takes a hexadecimal address below 2^32 before the ':'", s);
    }
    *addr = (uint32_t)v;
    *rest = colon + 1;
    return 0;
}

int cli_parse_log(const char *opt, const char *s, unsigned *mask)
{
    static const struct {
        const char *name;
        unsigned bit;
    } cats[] = {
        {"reg", DLASIM_LOG_REG},
        {"exec", DLASIM_LOG_EXEC},
        {"guest", DLASIM_LOG_GUEST_ERROR},
        {"unimp", DLASIM_LOG_UNIMP},
    };
    unsigned m = 0;
    const char *p = s ? s : "";
    do {
        size_t len = strcspn(p, ",");
        size_t k = 0;
        while (k < sizeof cats / sizeof cats[0] &&
               (strlen(cats[k].name) != len || strncmp(p, cats[k].name, len))) {
            k++;
        }
        if (k == sizeof cats / sizeof cats[0]) {
            return bad(opt, "takes a comma-separated list of reg, exec, guest, unimp", s ? s : "");
        }
        m |= cats[k].bit;
        p += len;
    } while (*p++ == ',');
    *mask = m;
    return 0;
}
