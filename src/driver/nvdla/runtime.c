/*
 * Public runtime entry points (include/dlasim/runtime.h): the simulator
 * port, optionally wrapped by the trace-recording port, under the
 * firmware-equivalent executor and the loadable runner.
 */
#include <stdio.h>
#include <string.h>

#include "dlasim/runtime.h"
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
    rc = fn(nvrt_record_port_of(rp), arg, err, errlen);
    if (!rc) {
        rc = nvrt_record_port_close(rp, err, errlen);
    }
    nvrt_record_port_free(rp);
    return rc;
}

static int execute_fn(const struct nvrt_port *port, void *arg, char *err, size_t errlen)
{
    return nvrt_execute(port, arg, err, errlen);
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
    return with_port(dev, opt, execute_fn, (void *)net, err, errlen);
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
