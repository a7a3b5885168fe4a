/*
 * A program built against an installed dlasim through pkg-config
 * (tests/unit/library.sh): only installed headers, only the exported API.
 * It defines dla_error and dla_errf itself, as NVIDIA's firmware and other
 * code may: linking it with libdlasim (shared or static) must not clash.
 * Checks, against facts independent of the library's own answers:
 *   - the version macros agree with the string pkg-config reports (argv[1]);
 *   - the installed register map's address of CFGROM HW_VERSION and
 *     GLB S_INTR_MASK are the ones dlasim_reg_lookup gives for their names;
 *   - GLB S_INTR_MASK reads back what was written, device memory round-trips;
 *   - a port of the program's own (dlasim/port.h) runs an empty network
 *     through dlasim_rt_execute_port without touching the device.
 * Prints "library client: ok" and exits 0 when all hold.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dlasim/dlasim.h>
#include <dlasim/port.h>
#include <dlasim/regs/nvdla_regs.h>
#include <dlasim/runtime.h>
#include <dlasim/version.h>

void dla_error(const char *fmt, ...);
int dla_errf(char *err, size_t errlen, int status, const char *fmt, ...);
static int own_calls;
void dla_error(const char *fmt, ...)
{
    (void)fmt;
    own_calls++;
}
int dla_errf(char *err, size_t errlen, int status, const char *fmt, ...)
{
    (void)err, (void)errlen, (void)fmt;
    own_calls++;
    return status;
}

static int port_calls;
static int count_reg_read(void *ctx, uint32_t addr, uint32_t *val)
{
    (void)ctx, (void)addr;
    port_calls++;
    *val = 0;
    return 0;
}

static int check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "library client: FAILED: %s\n", what);
    }
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    char want[32], err[256];
    snprintf(want, sizeof want, "%d.%d.%d", DLASIM_VERSION_MAJOR, DLASIM_VERSION_MINOR,
             DLASIM_VERSION_PATCH);
    int bad = check(argc == 2 && strcmp(argv[1], DLASIM_VERSION_STRING) == 0 &&
                        strcmp(want, DLASIM_VERSION_STRING) == 0,
                    "version macros == pkg-config --modversion");
    uint32_t addr = 1;
    bad |= check(dlasim_reg_lookup("NVDLA_CFGROM.CFGROM_HW_VERSION_0", &addr) == 0 &&
                     addr == NVDLA_CFGROM_CFGROM_HW_VERSION_0,
                 "CFGROM HW_VERSION address");
    bad |= check(dlasim_reg_lookup("NVDLA_GLB.S_INTR_MASK_0", &addr) == 0 &&
                     addr == NVDLA_GLB_S_INTR_MASK_0,
                 "GLB S_INTR_MASK address");
    struct dlasim_dev *dev;
    bad |= check(dlasim_create(NULL, &dev, err, sizeof err) == 0, "dlasim_create");
    if (bad) {
        return 1;
    }
    uint32_t v = 0;
    dlasim_csb_write(dev, NVDLA_GLB_S_INTR_MASK_0, 0x3u);
    dlasim_csb_read(dev, NVDLA_GLB_S_INTR_MASK_0, &v);
    bad |= check(v == 0x3u, "S_INTR_MASK reads back");
    const char msg[] = "dlasim";
    char back[sizeof msg] = "";
    dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x80001000u, msg, sizeof msg);
    dlasim_mem_read(dev, DLASIM_PORT_DBB, 0x80001000u, back, sizeof back);
    bad |= check(memcmp(msg, back, sizeof msg) == 0, "memory round trip");
    dlasim_destroy(dev);
    struct nvrt_port port;
    memset(&port, 0, sizeof port);
    port.reg_read = count_reg_read;
    struct dlasim_rt_network net;
    memset(&net, 0, sizeof net);
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        net.op_head[i] = -1;
    }
    int rc = dlasim_rt_execute_port(&port, &net, err, sizeof err);
    bad |= check(rc == 0, "empty network on the program's port");
    bad |= check(own_calls == 0, "the program's dla_error/dla_errf are its own");
    if (!bad) {
        printf("library client: ok (%s, %d port reads)\n", DLASIM_VERSION_STRING, port_calls);
    }
    return bad;
}
