/*
 * dlasim teflon MODEL.tflite [--input FILE] [--json OUT]
 *
 * Runs a TensorFlow Lite model twice, on TFLite's CPU kernels and through
 * Mesa's Teflon delegate -> Mesa's rocket driver -> the rocket UAPI in user
 * space (libdlasim-rocket.so) -> dlasim's RK3588, and prints per output the
 * largest difference and the share of bytes that differ, the ops Teflon
 * delegated and the times (docs/teflon.md).  The client stack is Debian's
 * own arm64 build (mesa-teflon-delegate, libtensorflow-lite), run under
 * qemu-aarch64-static; on first use this fetches it into a cache folder
 * (tools/teflon/fetch.sh) and cross-builds the runner and the shim for arm64
 * (make arm64), saying what it does.  Installs qemu-user-static and the
 * arm64 cross compilers when missing and run as root.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define TOOLS_PKGS "qemu-user-static gcc-aarch64-linux-gnu g++-aarch64-linux-gnu"

/* Run argv (searched in PATH) and wait: its exit status, or -1. */
static int run(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "dlasim teflon: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "dlasim teflon: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            return -1;
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int have(const char *prog)
{
    char *argv[] = {"sh", "-c", "command -v \"$0\" >/dev/null", (char *)prog, NULL};
    return run(argv) == 0;
}

/* qemu-user-static and the cross compilers, installed when missing (root). */
static int ensure_host_tools(void)
{
    if (have("qemu-aarch64-static") && have("aarch64-linux-gnu-gcc") && have("aarch64-linux-gnu-g++")) {
        return 0;
    }
    if (geteuid() != 0) {
        fprintf(stderr, "dlasim teflon: needs qemu-aarch64-static and the arm64 cross compilers: "
                "sudo apt-get install " TOOLS_PKGS "\n");
        return -1;
    }
    fprintf(stderr, "dlasim teflon: installing " TOOLS_PKGS " (Debian packages)\n");
    char *argv[] = {"sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq " TOOLS_PKGS
                    " >/dev/null", NULL};
    if (run(argv) != 0) {
        fprintf(stderr, "dlasim teflon: apt-get install " TOOLS_PKGS " failed\n");
        return -1;
    }
    return 0;
}

/* The source tree this binary was built in (BUILD/dlasim -> ..), or
 * DLASIM_SRC: the fetch script, the runner and the Makefile live there. */
static int source_root(char *root, size_t len)
{
    const char *env = getenv("DLASIM_SRC");
    char exe[PATH_MAX];
    if (env && *env) {
        snprintf(root, len, "%s", env);
    } else {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0) {
            fprintf(stderr, "dlasim teflon: cannot find the source tree (set DLASIM_SRC)\n");
            return -1;
        }
        exe[n] = '\0';
        for (int up = 0; up < 2; up++) {
            char *slash = strrchr(exe, '/');
            if (slash) {
                *slash = '\0';
            }
        }
        snprintf(root, len, "%s", exe);
    }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof(probe), "%s/tools/teflon/fetch.sh", root);
    if (access(probe, R_OK) != 0) {
        fprintf(stderr, "dlasim teflon: %s not found: run the dlasim of a source tree, or set "
                "DLASIM_SRC to one\n", probe);
        return -1;
    }
    return 0;
}

static void cache_dir(char *out, size_t len)
{
    const char *c = getenv("DLASIM_TEFLON_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (c && *c) {
        snprintf(out, len, "%s", c);
    } else if (xdg && *xdg) {
        snprintf(out, len, "%s/dlasim/teflon", xdg);
    } else {
        snprintf(out, len, "%s/.cache/dlasim/teflon", home ? home : "/tmp");
    }
}

static void usage_teflon(void)
{
    fprintf(stderr, "usage: dlasim teflon MODEL.tflite [--input FILE] [--json OUT]\n");
}

int cmd_teflon(int argc, char **argv)
{
    const char *model = NULL, *input = "-", *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input") && i + 1 < argc) {
            input = argv[++i];
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json = argv[++i];
        } else if (argv[i][0] != '-' && !model) {
            model = argv[i];
        } else {
            usage_teflon();
            return 2;
        }
    }
    if (!model) {
        usage_teflon();
        return 2;
    }
    if (access(model, R_OK) != 0) {
        fprintf(stderr, "dlasim teflon: %s: %s\n", model, strerror(errno));
        return 1;
    }
    char root[PATH_MAX], cache[PATH_MAX], sysroot[PATH_MAX + 16], fetch[PATH_MAX + 32];
    if (source_root(root, sizeof(root)) || ensure_host_tools()) {
        return 1;
    }
    cache_dir(cache, sizeof(cache));
    snprintf(sysroot, sizeof(sysroot), "%s/sysroot", cache);
    snprintf(fetch, sizeof(fetch), "%s/tools/teflon/fetch.sh", root);
    char *fetch_argv[] = {"sh", fetch, cache, NULL};
    if (run(fetch_argv) != 0) {
        fprintf(stderr, "dlasim teflon: could not fetch Debian's arm64 TFLite and Teflon\n");
        return 1;
    }
    char sysroot_var[PATH_MAX + 32];
    snprintf(sysroot_var, sizeof(sysroot_var), "TEFLON_SYSROOT=%s", sysroot);
    fprintf(stderr, "dlasim teflon: building the arm64 runner and libdlasim-rocket.so where "
            "out of date (make arm64)\n");
    char *make_argv[] = {"make", "-s", "-C", root, "arm64", sysroot_var, NULL};
    if (run(make_argv) != 0) {
        fprintf(stderr, "dlasim teflon: the arm64 build (make arm64) failed\n");
        return 1;
    }
    char tmp[] = "/tmp/dlasim-teflon-XXXXXX";
    if (!json) {
        int fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "dlasim teflon: mkstemp: %s\n", strerror(errno));
            return 1;
        }
        close(fd);
        json = tmp;
    }
    char preload[PATH_MAX + 64], runner[PATH_MAX + 64], delegate[PATH_MAX + 64];
    snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/build-arm64/libdlasim-rocket.so", root);
    snprintf(runner, sizeof(runner), "%s/build-arm64/teflon-runner", root);
    snprintf(delegate, sizeof(delegate), "%s/usr/lib/teflon/libteflon.so", sysroot);
    printf("dlasim teflon: %s on TFLite's CPU and through Teflon -> rocket -> dlasim rk3588 "
           "(arm64, qemu-aarch64-static)\n", model);
    fflush(stdout);
    char *qemu_argv[] = {"qemu-aarch64-static", "-L", sysroot, "-E", preload, runner,
                         (char *)model, delegate, (char *)input, (char *)json, NULL};
    int rc = run(qemu_argv);
    if (json == tmp) {
        unlink(tmp);
    }
    return rc == 0 ? 0 : 1;
}
