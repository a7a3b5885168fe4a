/*
 * The port between the runtime core and a device (docs/runtime-port.md).
 *
 * struct nvrt_port itself is public (include/dlasim/port.h): a program
 * linking libdlasim implements it for its own device and runs networks,
 * tasks and loadables on it (dlasim_rt_execute_port, dlasim_rt_run_task_port,
 * dlasim_loadable_run_port in dlasim/runtime.h).
 *
 * The runtime core (firmware executor, loadable runner, engine programming)
 * reaches hardware only through these callbacks; it never includes the
 * simulator's headers.  Ports: port_sim.c (the simulated device, through the
 * public dlasim.h API) and port_record.c (wraps another port and records a
 * replayable NVDLA trace case).  A port onto real silicon (UIO/devmem)
 * implements the same six callbacks.
 *
 * ref: nvdla/sw kmd/include/nvdla_interface.h (which side implements what:
 * dla_reg_write/read, dla_data_read/write, dla_get_dma_address).
 */
#ifndef NVRT_PORT_H
#define NVRT_PORT_H

#include "dlasim/port.h"

/* The simulator port (port_sim.c): memory is allocated from the conformance
 * traces' range (0x80000000 upwards on the primary port). */
struct dlasim_dev;
struct nvrt_sim_port {
    struct nvrt_port port;
    struct dlasim_dev *dev;
    uint64_t next_addr;
    uint64_t limit;
};
void nvrt_sim_port_init(struct nvrt_sim_port *sp, struct dlasim_dev *dev);

/* The recording port (port_record.c): forwards to an inner port and writes
 * DIR/NAME.cfg plus its .dat files. */
struct nvrt_record_port;
int nvrt_record_port_open(const struct nvrt_port *inner, const char *dir, const char *name,
                          struct nvrt_record_port **out, char *err, size_t errlen);
struct nvrt_port *nvrt_record_port_of(struct nvrt_record_port *rp);
/* Finish the case: CRC checks of every marked output, write the files. */
int nvrt_record_port_close(struct nvrt_record_port *rp, char *err, size_t errlen);
void nvrt_record_port_free(struct nvrt_record_port *rp);

#endif
