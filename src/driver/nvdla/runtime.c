/*
 * Public runtime entry points (include/dlasim/runtime.h): the simulator
 * port, optionally wrapped by the trace-recording port, or a port of the
 * caller's, under the firmware-equivalent executor, the loadable runner and
 * the task reader (one DLA task from an address list of device addresses,
 * as NVIDIA's KMD hands it to its firmware).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "dlasim/runtime.h"
#include "driver/nvdla/desc.h"
#include "driver/nvdla/fw.h"
#include "driver/port.h"

typedef int (*run_fn)(const struct nvrt_port *port, void *arg, char *err, size_t errlen);

/* Run fn on the device's port, recording a trace case when asked. */
static int with_port(struct dlasim_dev *dev, const struct dlasim_rt_options *opt, run_fn fn,
                     void *arg, char *err, size_t errlen)
{
    struct nvrt_sim_port sp;
    nvrt_sim_port_init(&sp, dev);
    if (!opt || !opt->record_trace_dir) {
        return fn(&sp.port, arg, err, errlen);
    }
    struct nvrt_record_port *rp;
    int rc = nvrt_record_port_open(&sp.port, opt->record_trace_dir, opt->record_trace_name, &rp,
                                   err, errlen);
    if (rc) {
        return rc;
    }
    /* stepped while recording: the recorder snapshots the memory a layer
     * reads before the wait that runs it */
    const int overlap = dlasim_set_overlap(dev, 0);
    rc = fn(nvrt_record_port_of(rp), arg, err, errlen);
    dlasim_set_overlap(dev, overlap > 0);
    if (!rc) {
        rc = nvrt_record_port_close(rp, err, errlen);
    }
    nvrt_record_port_free(rp);
    return rc;
}

struct execute_args {
    const struct dlasim_rt_network *net;
    struct dlasim_rt_prepared *prep;
};

static int execute_fn(const struct nvrt_port *port, void *arg, char *err, size_t errlen)
{
    const struct execute_args *a = arg;
    return nvrt_execute_prepared(port, a->net, a->prep, err, errlen);
}

int dlasim_rt_execute(struct dlasim_dev *dev, const struct dlasim_rt_network *net,
                      const struct dlasim_rt_options *opt, char *err, size_t errlen)
{
    if (!dev || !net || (net->num_ops && !net->ops)) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_rt_execute: NULL device or network");
        }
        return DLASIM_ERR_INVAL;
    }
    struct execute_args a = { net, opt ? opt->prepared : NULL };
    return with_port(dev, opt, execute_fn, &a, err, errlen);
}

struct loadable_args {
    struct dlasim_loadable *ld;
    const struct dlasim_loadable_input *inputs;
    unsigned n_inputs;
};

static int loadable_fn(const struct nvrt_port *port, void *arg, char *err, size_t errlen)
{
    struct loadable_args *a = arg;
    return nvrt_loadable_run_on(port, a->ld, a->inputs, a->n_inputs, err, errlen);
}

int dlasim_loadable_run(struct dlasim_dev *dev, struct dlasim_loadable *ld,
                        const struct dlasim_loadable_input *inputs, unsigned n_inputs,
                        const struct dlasim_rt_options *opt, char *err, size_t errlen)
{
    struct loadable_args a = { ld, inputs, n_inputs };
    if (!dev || !ld || (n_inputs && !inputs)) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_loadable_run: NULL device, loadable or inputs");
        }
        return DLASIM_ERR_INVAL;
    }
    return with_port(dev, opt, loadable_fn, &a, err, errlen);
}

/* ---- one task from device memory ------------------------------------------------ */

struct task_reader {
    const struct nvrt_port *port;
    const struct dlasim_rt_task *task;
    const char *who;            /* start of messages: "task", "loadable" */
    struct dlasim_rt_op *ops;
    struct dlasim_rt_lut *luts;
    uint8_t raw[NVRT_LUT_SIZE]; /* the largest descriptor */
};

/* n bytes at address-list entry idx + off (ref: the firmware's dla_data_read
 * on the task's address list), bounded by the entry's size when known. */
static int task_read(struct task_reader *r, int16_t idx, uint64_t off, uint32_t n,
                     const char *what, char *err, size_t errlen)
{
    const struct dlasim_rt_task *t = r->task;
    if (idx < 0 || idx >= (int)t->num_addresses) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "%s: network descriptor: %s is at address index %d, outside the "
                        "task's address list (%u entries)",
                        r->who, what, idx, t->num_addresses);
    }
    uint64_t avail = t->sizes ? t->sizes[idx] : UINT64_MAX;
    if (off > avail || n > avail - off) {
        return dla_errf(err, errlen, DLASIM_ERR_PARSE,
                        "%s: %s (address index %d): bytes %llu..%llu are outside the "
                        "entry's %llu bytes",
                        r->who, what, idx, (unsigned long long)off,
                        (unsigned long long)(off + n), (unsigned long long)avail);
    }
    int rc = r->port->mem_read(r->port->ctx, t->addresses[idx] + off, r->raw, n);
    return rc ? dla_errf(err, errlen, rc, "%s: %s (address index %d, device address 0x%llx): "
                                          "device read failed: %s",
                         r->who, what, idx, (unsigned long long)(t->addresses[idx] + off),
                         dlasim_status_name(rc))
              : 0;
}

/* Operation i: dependency graph entry, operation and surface descriptors. */
static int task_read_op(struct task_reader *r, const struct nvrt_network_desc *nd, size_t i,
                        int v12, char *err, size_t errlen)
{
    struct dlasim_rt_op *op = &r->ops[i];
    int rc = task_read(r, nd->dependency_graph_index, i * NVRT_DEP_SIZE, NVRT_DEP_SIZE,
                       "dependency graph", err, errlen);
    if (rc) {
        return rc;
    }
    nvrt_decode_dep(r->raw, op);
    rc = task_read(r, nd->operation_desc_index, i * NVRT_OP_DESC_SIZE, NVRT_OP_DESC_SIZE,
                   "operation descriptors", err, errlen);
    if (rc) {
        return rc;
    }
    nvrt_decode_op(r->raw, op);
    rc = task_read(r, nd->surface_desc_index, i * NVRT_SURFACE_DESC_SIZE, NVRT_SURFACE_DESC_SIZE,
                   "surface descriptors", err, errlen);
    if (!rc) {
        nvrt_decode_surface(r->raw, v12, op);
    }
    return rc;
}

static int task_read_network(struct task_reader *r, unsigned minor,
                             struct dlasim_rt_network *net, char *err, size_t errlen)
{
    const struct dlasim_rt_task *t = r->task;
    struct nvrt_network_desc nd;
    int rc = task_read(r, 0, 0, NVRT_NETWORK_DESC_SIZE, "network descriptor", err, errlen);
    if (rc) {
        return rc;
    }
    nvrt_decode_network(r->raw, &nd);
    if (nd.num_rois > 1 || nd.dynamic_roi) {
        return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                        "%s: network descriptor asks for %u ROIs%s; dlasim runs one",
                        r->who, nd.num_rois, nd.dynamic_roi ? " (dynamic)" : "");
    }
    free(r->ops);
    free(r->luts);
    r->ops = calloc(nd.num_operations ? nd.num_operations : 1, sizeof *r->ops);
    r->luts = calloc(nd.num_luts ? nd.num_luts : 1, sizeof *r->luts);
    if (!r->ops || !r->luts) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "%s: out of host memory", r->who);
    }
    for (size_t i = 0; i < nd.num_operations && !rc; i++) {
        rc = task_read_op(r, &nd, i, minor >= 12, err, errlen);
    }
    for (uint16_t i = 0; i < nd.num_luts && !rc; i++) {
        rc = task_read(r, nd.lut_data_index, (uint64_t)i * NVRT_LUT_SIZE, NVRT_LUT_SIZE,
                       "LUT list", err, errlen);
        if (!rc) {
            nvrt_decode_lut(r->raw, &r->luts[i]);
        }
    }
    net->ops = r->ops;
    net->num_ops = nd.num_operations;
    memcpy(net->op_head, nd.op_head, sizeof net->op_head);
    net->luts = r->luts;
    net->num_luts = nd.num_luts;
    net->addresses = t->addresses;
    net->num_addresses = t->num_addresses;
    return rc;
}

int nvrt_read_task_network(const struct nvrt_port *port, const struct dlasim_rt_task *task,
                           unsigned minor, const char *who, struct nvrt_task_network *out,
                           char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct task_reader *r = calloc(1, sizeof *r);
    if (!r) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "%s: out of host memory", who);
    }
    r->port = port;
    r->task = task;
    r->who = who;
    int rc = task_read_network(r, minor, &out->net, err, errlen);
    out->ops = r->ops;
    out->luts = r->luts;
    free(r);
    return rc;
}

void nvrt_task_network_free(struct nvrt_task_network *n)
{
    free(n->ops);
    free(n->luts);
    memset(n, 0, sizeof *n);
}

static int read_and_validate(struct task_reader *r, unsigned minor,
                             struct dlasim_rt_network *net, char *err, size_t errlen)
{
    memset(net, 0, sizeof *net);
    int rc = task_read_network(r, minor, net, err, errlen);
    return rc ? rc : nvrt_validate(r->port, net, err, errlen);
}

/* The network in the task's interface layout.  Auto (0): the 0.12 layout
 * (nvdla/sw HEAD's firmware), else the 0.10/0.11 one (28-byte data cubes:
 * NVIDIA's older compilers, the regression loadables) when the 0.12 reading
 * does not validate and the older one does; the 0.12 error otherwise. */
static int read_validated(struct task_reader *r, struct dlasim_rt_network *net, char *err,
                          size_t errlen)
{
    unsigned minor = r->task->interface_minor;
    if (minor && (minor < 10 || minor > 12)) {
        return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                        "task: firmware interface 0.%u asked; dlasim reads 0.10, 0.11 and 0.12",
                        minor);
    }
    int rc = read_and_validate(r, minor ? minor : 12, net, err, errlen);
    if (rc && !minor) {
        char older[512];
        if (read_and_validate(r, 11, net, older, sizeof older) == 0) {
            return 0;
        }
        rc = read_and_validate(r, 12, net, err, errlen); /* restore the 0.12 reading's error */
    }
    return rc;
}

struct task_args {
    const struct dlasim_rt_task *task;
    struct dlasim_rt_prepared *prep;
};

static int run_task_fn(const struct nvrt_port *port, void *arg, char *err, size_t errlen)
{
    const struct task_args *a = arg;
    const struct dlasim_rt_task *task = a->task;
    if (!task->num_addresses || !task->addresses) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "task: empty address list (the network descriptor is entry 0)");
    }
    struct task_reader *r = calloc(1, sizeof *r);
    if (!r) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "task: out of host memory");
    }
    r->port = port;
    r->task = task;
    r->who = "task";
    struct dlasim_rt_network net;
    int rc = read_validated(r, &net, err, errlen);
    rc = rc ? rc : nvrt_execute_prepared(port, &net, a->prep, err, errlen);
    free(r->ops);
    free(r->luts);
    free(r);
    return rc;
}

int dlasim_rt_run_task(struct dlasim_dev *dev, const struct dlasim_rt_task *task,
                       const struct dlasim_rt_options *opt, char *err, size_t errlen)
{
    if (!dev || !task) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "dlasim_rt_run_task: NULL device or task");
    }
    struct task_args a = { task, opt ? opt->prepared : NULL };
    return with_port(dev, opt, run_task_fn, &a, err, errlen);
}

int dlasim_rt_run_task_port(const struct nvrt_port *port, const struct dlasim_rt_task *task,
                            char *err, size_t errlen)
{
    if (!port || !task) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "dlasim_rt_run_task_port: NULL port or task");
    }
    struct task_args a = { task, NULL };
    return run_task_fn(port, &a, err, errlen);
}

int dlasim_rt_execute_port(const struct nvrt_port *port, const struct dlasim_rt_network *net,
                           char *err, size_t errlen)
{
    if (!port || !net || (net->num_ops && !net->ops)) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "dlasim_rt_execute_port: NULL port or network");
    }
    return nvrt_execute(port, net, err, errlen);
}

int dlasim_rt_execute_prepared_port(const struct nvrt_port *port,
                                    const struct dlasim_rt_network *net,
                                    struct dlasim_rt_prepared *prepared, char *err,
                                    size_t errlen)
{
    if (!port || !net || (net->num_ops && !net->ops)) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "dlasim_rt_execute_prepared_port: NULL port or network");
    }
    return nvrt_execute_prepared(port, net, prepared, err, errlen);
}

int dlasim_loadable_run_port(const struct nvrt_port *port, struct dlasim_loadable *ld,
                             const struct dlasim_loadable_input *inputs, unsigned n_inputs,
                             char *err, size_t errlen)
{
    if (!port || !ld || (n_inputs && !inputs)) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL,
                        "dlasim_loadable_run_port: NULL port, loadable or inputs");
    }
    return nvrt_loadable_run_on(port, ld, inputs, n_inputs, err, errlen);
}
