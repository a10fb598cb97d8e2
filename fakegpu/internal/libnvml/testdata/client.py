"""A Python NVML client on ctypes alone, as pynvml is: it loads
libnvidia-ml.so.1 by name (LD_LIBRARY_PATH decides which) and prints each
GPU's identity, memory, utilization and processes as JSON."""
import ctypes
import json
import sys

nvml = ctypes.CDLL("libnvidia-ml.so.1")
SUCCESS, INSUFFICIENT_SIZE = 0, 7


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t of the _v3 calls
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


def check(ret, what):
    if ret != SUCCESS:
        nvml.nvmlErrorString.restype = ctypes.c_char_p
        sys.exit("%s: %s (%d)" % (what, nvml.nvmlErrorString(ret).decode(), ret))


check(nvml.nvmlInit_v2(), "nvmlInit_v2")
count = ctypes.c_uint()
check(nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)), "nvmlDeviceGetCount_v2")
gpus = []
for i in range(count.value):
    handle = ctypes.c_void_p()
    check(nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)), "handle")
    name, uuid = ctypes.create_string_buffer(96), ctypes.create_string_buffer(96)
    check(nvml.nvmlDeviceGetName(handle, name, 96), "name")
    check(nvml.nvmlDeviceGetUUID(handle, uuid, 96), "uuid")
    mem, util = Memory(), Utilization()
    check(nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)), "memory")
    check(nvml.nvmlDeviceGetUtilizationRates(handle, ctypes.byref(util)), "utilization")
    n = ctypes.c_uint(0)
    ret = nvml.nvmlDeviceGetComputeRunningProcesses_v3(handle, ctypes.byref(n), None)
    procs = (ProcessInfo * max(n.value, 1))()
    if ret == INSUFFICIENT_SIZE:
        check(nvml.nvmlDeviceGetComputeRunningProcesses_v3(handle, ctypes.byref(n), procs), "processes")
    else:
        check(ret, "process count")
    gpus.append({
        "name": name.value.decode(), "uuid": uuid.value.decode(),
        "memory_total": mem.total, "memory_used": mem.used,
        "gpu_util": util.gpu, "mem_util": util.memory,
        "processes": [[procs[k].pid, procs[k].usedGpuMemory] for k in range(n.value)],
    })
check(nvml.nvmlShutdown(), "nvmlShutdown")
json.dump(gpus, sys.stdout)
