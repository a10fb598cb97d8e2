/*
 * The state file of nvgo's drop-in libnvidia-ml.so.1: what a fake fleet
 * answers, written by package fakegpu (Go) and read by the C library.
 *
 * The layout is ours, not NVML's: plain fixed-width integers and
 * NUL-terminated strings in fixed arrays, so the Go writer (through cgo)
 * and the C reader agree without nvml.h. The C library turns these records
 * into NVML's structs and applies NVML's protocols (buffer sizes, struct
 * versions, sample windows) to them.
 *
 * A file is a header, then two slots of nvgo_fake_state_t, each at a
 * multiple of NVGO_FAKE_PAGE. The writer fills the slot readers are not
 * using and then publishes it, so a reader never waits for a writer and a
 * writer that dies half-way leaves the last published slot intact:
 *
 *   seq even, 2k:   slot k%2 published, no write in progress
 *   seq odd, 2k+1:  slot k%2 published, slot (k+1)%2 being written
 *
 * A reader loads seq (acquire) into s, reads slot ((s>>1)&1), then loads
 * seq again into t; the slot it read was not rewritten while it read if
 * t < (s&~1)+3, else it reads again.
 *
 * Every count in a slot may be torn while a reader races a writer; readers
 * clamp each count to its array's capacity before using it.
 */
#ifndef NVGO_FAKE_STATE_H
#define NVGO_FAKE_STATE_H

#include <stdint.h>

#define NVGO_FAKE_MAGIC "NVGOFAKE" /* the first 8 bytes of a state file */
#define NVGO_FAKE_LAYOUT 1         /* bumped with every change below */
#define NVGO_FAKE_PAGE 4096

#define NVGO_FAKE_MAX_DEVICES 256    /* GPU and MIG device records */
#define NVGO_FAKE_MAX_PROCS 16384    /* process-list entries, all devices */
#define NVGO_FAKE_MAX_NAMES 4096     /* SystemGetProcessName answers */
#define NVGO_FAKE_MAX_SAMPLES 32768  /* GetSamples samples */
#define NVGO_FAKE_MAX_PSAMPLES 16384 /* per-process utilization samples */
#define NVGO_FAKE_MAX_ACCT 16384     /* accounting records */
#define NVGO_FAKE_MAX_FIELDS 16384   /* field values */
#define NVGO_FAKE_MAX_VGPUS 1024     /* vGPU instances */
#define NVGO_FAKE_MAX_VTYPES 256     /* vGPU types */
#define NVGO_FAKE_MAX_VSAMPLES 8192  /* vGPU utilization samples */
#define NVGO_FAKE_MAX_VPSAMPLES 4096 /* vGPU guest-process samples */
#define NVGO_FAKE_MAX_MISSING 128    /* symbols the fleet declares missing */
#define NVGO_FAKE_MIG_SLOTS 7        /* MIG device indices 0..6 */

#define NVGO_FAKE_STR 96     /* names, UUIDs, versions */
#define NVGO_FAKE_SYM 64     /* symbol names */
#define NVGO_FAKE_OTHER_SCOPE 0xFFFFFFFDu /* a field's answer for a scopeId not listed */

/*
 * What a device answers: one return code per call (or per argument of a
 * call, for calls that take one), nvmlReturn_t values.
 */
enum nvgo_fake_call {
	NF_HANDLE,          /* DeviceGetHandleBy…: SUCCESS or GPU_IS_LOST */
	NF_NAME, NF_UUID, NF_SERIAL, NF_INDEX, NF_MINOR, NF_BRAND, NF_ARCH, NF_CC, NF_PCI,
	NF_MEMORY, NF_MEMORY_V2, NF_BAR1,
	NF_UTILIZATION, NF_ENCODER, NF_DECODER,
	NF_CLOCK_GRAPHICS, NF_CLOCK_SM, NF_CLOCK_MEM, NF_CLOCK_VIDEO, NF_CLOCK_OTHER,
	NF_MAXCLOCK_GRAPHICS, NF_MAXCLOCK_SM, NF_MAXCLOCK_MEM, NF_MAXCLOCK_VIDEO, NF_MAXCLOCK_OTHER,
	NF_FAN, NF_FAN0, NF_FAN_OTHER, NF_NUM_FANS,
	NF_TEMPERATURE, NF_TEMPERATURE_OTHER,
	NF_POWER, NF_POWER_LIMIT, NF_ENFORCED_LIMIT, NF_DEFAULT_LIMIT, NF_ENERGY,
	NF_PCIE_TX, NF_PCIE_RX, NF_PCIE_OTHER,
	NF_NVLINK_STATE, NF_NVLINK_STATE_OTHER,
	NF_DISPLAY_ACTIVE, NF_DISPLAY_MODE, NF_PERSISTENCE, NF_PSTATE, NF_POWER_STATE, NF_COMPUTE_MODE,
	NF_ECC_UNCORRECTED_VOLATILE, NF_ECC_UNCORRECTED_AGGREGATE,
	NF_ECC_CORRECTED_VOLATILE, NF_ECC_CORRECTED_AGGREGATE, NF_ECC_OTHER, NF_ECC_MODE,
	NF_MIG_MODE, NF_MAX_MIG, NF_IS_MIG, NF_MIG_PARENT, NF_GPU_INSTANCE, NF_COMPUTE_INSTANCE,
	NF_ATTRIBUTES, NF_MIG_HANDLE_OTHER,
	NF_FIELD_VALUES,
	NF_COMPUTE_PROCS, NF_GRAPHICS_PROCS, NF_MPS_PROCS,
	NF_PROCESS_UTILIZATION, NF_SAMPLES_GPU, NF_SAMPLES_MEM, NF_SAMPLES_OTHER,
	NF_ACCOUNTING_MODE, NF_SET_ACCOUNTING, NF_ACCOUNTING_PIDS, NF_ACCOUNTING_STATS_OTHER,
	NF_ACCOUNTING_BUFFER, NF_CLEAR_ACCOUNTING,
	NF_VIRTUALIZATION, NF_ACTIVE_VGPUS, NF_VGPU_UTILIZATION, NF_VGPU_PROCESS_UTILIZATION,
	NF_DRIVER_MODEL, NF_SET_PERSISTENCE,
	NF_COUNT
};

/* What a vGPU instance answers. */
enum nvgo_fake_vgpu_call {
	NV_UUID, NV_VM_ID, NV_VM_DRIVER, NV_TYPE, NV_FB_USAGE, NV_FRAME_RATE_LIMIT,
	NV_ENCODER_CAPACITY, NV_ECC, NV_GPU_INSTANCE, NV_PLACEMENT, NV_LICENSE, NV_LICENSE_STATUS,
	NV_MDEV_UUID, NV_ACCOUNTING_MODE, NV_ACCOUNTING_PIDS, NV_ACCOUNTING_STATS_OTHER,
	NV_CLEAR_ACCOUNTING,
	NV_COUNT
};

/* A [first, first+count) range of one of the slot's arrays. */
typedef struct {
	uint32_t first, count;
} nvgo_fake_range_t;

/* Which process list an entry is on. */
enum { NVGO_FAKE_COMPUTE, NVGO_FAKE_GRAPHICS, NVGO_FAKE_MPS, NVGO_FAKE_LISTS };

typedef struct {
	uint32_t pid;
	uint32_t gpu_instance, compute_instance;
	uint32_t pad;
	uint64_t used_memory; /* bytes; all ones: not available */
} nvgo_fake_proc_t;

typedef struct {
	uint32_t pid;
	int32_t ret; /* SystemGetProcessName's answer */
	char name[NVGO_FAKE_STR];
} nvgo_fake_name_t;

typedef struct {
	uint64_t timestamp; /* µs */
	uint64_t value;     /* bits of the value, as nvmlValue_t holds them */
} nvgo_fake_sample_t;

typedef struct {
	uint32_t pid;
	uint32_t sm, memory, encoder, decoder;
	uint32_t pad;
	uint64_t timestamp;
} nvgo_fake_psample_t;

typedef struct {
	uint32_t pid;
	uint32_t gpu_utilization, memory_utilization;
	uint32_t is_running;
	uint64_t max_memory, time_ms, start_us;
} nvgo_fake_acct_t;

typedef struct {
	uint32_t id, scope; /* scope may be NVGO_FAKE_OTHER_SCOPE */
	int32_t ret;
	uint32_t value_type; /* nvmlValueType_t */
	uint64_t value;      /* bits of the value, as the union holds them */
} nvgo_fake_field_t;

typedef struct {
	uint32_t id;                 /* nvmlVgpuInstance_t */
	uint32_t device;             /* record of the host GPU */
	int32_t ret[NV_COUNT];
	char uuid[NVGO_FAKE_STR];
	char mdev_uuid[NVGO_FAKE_STR];
	char vm_id[NVGO_FAKE_STR];
	char vm_driver[NVGO_FAKE_STR];
	uint32_t vm_id_type, type_id;
	uint64_t fb_usage;
	uint32_t frame_rate_limit, encoder_capacity, ecc, gpu_instance, placement, license_status;
	/* nvmlVgpuLicenseInfo_t */
	uint32_t licensed, license_state;
	uint32_t expiry_year;
	uint16_t expiry_month, expiry_day, expiry_hour, expiry_min, expiry_sec, expiry_status;
	uint32_t accounting_mode;
	nvgo_fake_range_t acct;      /* records, in acct[] */
} nvgo_fake_vgpu_t;

typedef struct {
	uint32_t id;
	int32_t ret_name, ret_class, ret_fb;
	char name[NVGO_FAKE_STR];
	char class_name[NVGO_FAKE_STR];
	uint64_t framebuffer;
} nvgo_fake_vtype_t;

typedef struct {
	uint32_t instance;
	uint32_t pad;
	uint64_t timestamp;
	uint64_t sm, memory, encoder, decoder; /* bits, as nvmlValue_t holds them */
} nvgo_fake_vsample_t;

typedef struct {
	uint32_t instance, pid;
	uint32_t sm, memory, encoder, decoder;
	uint64_t timestamp;
	char name[NVGO_FAKE_STR];
} nvgo_fake_vpsample_t;

typedef struct {
	int32_t ret[NF_COUNT];
	uint32_t is_mig;  /* a MIG device's record */
	uint32_t parent;  /* a MIG device's GPU record */
	uint32_t removed; /* a MIG device that no longer exists */
	uint32_t index;   /* NVML index, or MIG device index */

	char name[NVGO_FAKE_STR], uuid[NVGO_FAKE_STR], serial[NVGO_FAKE_STR];
	char bus_id[32], bus_id_legacy[32];
	uint32_t pci_domain, pci_bus, pci_device, pci_device_id, pci_subsystem_id;
	uint32_t minor, brand, architecture;
	int32_t cc_major, cc_minor;

	uint64_t memory_total, memory_reserved, memory_free, memory_used;       /* _v2 */
	uint64_t memory_v1_total, memory_v1_free, memory_v1_used;             /* v1 */
	uint64_t bar1_total, bar1_free, bar1_used;
	uint32_t util_gpu, util_memory, encoder, encoder_period, decoder, decoder_period;
	uint32_t clock[4], max_clock[4]; /* graphics, SM, memory, video */
	uint32_t fan, fan0, num_fans, temperature;
	uint32_t power, power_limit, enforced_limit, default_limit;
	uint64_t energy;
	uint32_t pcie_tx, pcie_rx;
	uint32_t nvlinks;
	uint32_t display_active, display_mode, persistence, pstate, power_state, compute_mode;
	uint64_t ecc[4]; /* uncorrected volatile, uncorrected aggregate, corrected volatile, corrected aggregate */
	uint32_t ecc_current, ecc_pending;
	uint32_t mig_current, mig_pending, max_mig;
	uint32_t gpu_instance, compute_instance;
	int32_t mig_slot[NVGO_FAKE_MIG_SLOTS];     /* record of the MIG device at each index, or -1 */
	int32_t mig_slot_ret[NVGO_FAKE_MIG_SLOTS]; /* GetMigDeviceHandleByIndex's answer */
	/* nvmlDeviceAttributes_t */
	uint32_t attr_sm, attr_ce, attr_dec, attr_enc, attr_jpeg, attr_ofa, attr_gi_slices, attr_ci_slices;
	uint64_t attr_memory_mib;
	uint32_t accounting_mode, accounting_buffer;
	uint32_t virtualization, driver_model;

	nvgo_fake_range_t procs[NVGO_FAKE_LISTS]; /* in procs[] */
	nvgo_fake_range_t samples[2]; /* GetSamples of GPU and memory utilization, oldest first, in samples[] */
	nvgo_fake_range_t psamples;  /* GetProcessUtilization, in psamples[] */
	nvgo_fake_range_t acct;      /* accounting records, in acct[] */
	nvgo_fake_range_t fields;    /* in fields[] */
	nvgo_fake_range_t vgpus;     /* active instances, in vgpus[] */
	nvgo_fake_range_t vsamples;  /* in vsamples[] */
	nvgo_fake_range_t vpsamples; /* in vpsamples[] */
	uint32_t sample_value_type[2]; /* nvmlValueType_t of samples[] */
	uint32_t vsample_value_type;
} nvgo_fake_device_t;

typedef struct {
	uint64_t now_us;       /* the fleet's clock, µs since the Unix epoch */
	int32_t init_error;    /* nvmlReturn_t that every nvmlInit answers; 0: success */
	int32_t ret_driver_version, ret_nvml_version, ret_cuda_version, ret_count;
	int32_t cuda_version;
	char driver_version[NVGO_FAKE_STR];
	char nvml_version[NVGO_FAKE_STR];
	uint32_t gpu_count;    /* DeviceGetCount; GPUs are devices[0, gpu_count) */
	uint32_t device_count; /* records in use: GPUs, then MIG devices */
	uint32_t missing_count;
	uint32_t proc_count, name_count, sample_count, psample_count, acct_count, field_count;
	uint32_t vgpu_count, vtype_count, vsample_count, vpsample_count;
	uint32_t pad;
	char missing[NVGO_FAKE_MAX_MISSING][NVGO_FAKE_SYM];

	nvgo_fake_device_t devices[NVGO_FAKE_MAX_DEVICES];
	nvgo_fake_proc_t procs[NVGO_FAKE_MAX_PROCS];
	nvgo_fake_name_t names[NVGO_FAKE_MAX_NAMES];
	nvgo_fake_sample_t samples[NVGO_FAKE_MAX_SAMPLES];
	nvgo_fake_psample_t psamples[NVGO_FAKE_MAX_PSAMPLES];
	nvgo_fake_acct_t acct[NVGO_FAKE_MAX_ACCT];
	nvgo_fake_field_t fields[NVGO_FAKE_MAX_FIELDS];
	nvgo_fake_vgpu_t vgpus[NVGO_FAKE_MAX_VGPUS];
	nvgo_fake_vtype_t vtypes[NVGO_FAKE_MAX_VTYPES];
	nvgo_fake_vsample_t vsamples[NVGO_FAKE_MAX_VSAMPLES];
	nvgo_fake_vpsample_t vpsamples[NVGO_FAKE_MAX_VPSAMPLES];
} nvgo_fake_state_t;

typedef struct {
	char magic[8];        /* NVGO_FAKE_MAGIC, not NUL-terminated */
	uint32_t layout;      /* NVGO_FAKE_LAYOUT */
	uint32_t header_size; /* sizeof(nvgo_fake_header_t) */
	uint64_t slot_size;   /* sizeof(nvgo_fake_state_t) */
	uint64_t slot_offset[2];
	uint64_t file_size;
	uint64_t seq;         /* see the protocol above */
	uint32_t writer_pid;
	uint32_t pad;
} nvgo_fake_header_t;

#endif
