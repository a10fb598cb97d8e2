/*
 * Init, Shutdown, the state file, the fleet helper, call counting and
 * error strings.
 */
#include "fake.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char *const nvgo_fn_names[FN_COUNT] = {
#define CALL(n) #n,
#include "calls.def"
#undef CALL
};

/* The default fleet when NVGO_FAKE_FLEET is unset. */
#define DEFAULT_FLEET "dgx-h100"
/* How long nvmlInit waits for the fleet helper's first state. */
#define HELPER_START_MS 60000

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_refs;                  /* Init/Shutdown pairs held; under g_mu */
static int g_live;                  /* g_refs > 0; read without g_mu */
static unsigned long long g_calls[FN_COUNT];

/* The mapped state file. A mapping is never unmapped while the library is
 * loaded but replaced by the next first nvmlInit, so a call racing the
 * last nvmlShutdown reads stale memory, never unmapped memory. */
static const unsigned char *g_map;
static size_t g_map_size;
static const nvgo_fake_header_t *g_hdr;
static const nvgo_fake_state_t *g_slot[2];

/* The fleet helper, when the fleet is a preset or a scenario file. */
static pid_t g_helper;
static int g_alive_fd = -1; /* its read end is the helper's lifeline */

/* Functions the fleet declares missing, as of the published seq g_missing_seq. */
static pthread_mutex_t g_missing_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_missing_seq = ~0ULL;
static unsigned char g_missing[FN_COUNT];
static int g_any_missing;

struct nvmlDevice_st {
	uint32_t magic;
	uint32_t rec;
};
#define HANDLE_MAGIC 0x4e56474fu
static struct nvmlDevice_st g_handles[NVGO_FAKE_MAX_DEVICES];

static void say(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "nvgo fake libnvidia-ml: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/* ---- Counting ---- */

nvmlReturn_t nvgo_enter(int fn)
{
	__atomic_fetch_add(&g_calls[fn], 1, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&g_live, __ATOMIC_ACQUIRE))
		return NVML_ERROR_UNINITIALIZED;
	{
		uint64_t seq = __atomic_load_n(&g_hdr->seq, __ATOMIC_ACQUIRE) & ~1ULL;
		if (seq != __atomic_load_n(&g_missing_seq, __ATOMIC_ACQUIRE)) {
			pthread_mutex_lock(&g_missing_mu);
			uint64_t s;
			const nvgo_fake_state_t *st;
			unsigned char missing[FN_COUNT];
			int any;
			do {
				st = nvgo_begin(&s);
				memset(missing, 0, sizeof missing);
				any = 0;
				uint32_t n = nvgo_clamp(st->missing_count, NVGO_FAKE_MAX_MISSING);
				for (uint32_t i = 0; i < n; i++)
					for (int f = 0; f < FN_COUNT; f++)
						if (strncmp(st->missing[i], nvgo_fn_names[f], NVGO_FAKE_SYM) == 0)
							missing[f] = 1, any = 1;
			} while (nvgo_retry(s));
			for (int f = 0; f < FN_COUNT; f++)
				__atomic_store_n(&g_missing[f], missing[f], __ATOMIC_RELAXED);
			__atomic_store_n(&g_any_missing, any, __ATOMIC_RELAXED);
			__atomic_store_n(&g_missing_seq, s & ~1ULL, __ATOMIC_RELEASE);
			pthread_mutex_unlock(&g_missing_mu);
		}
		if (__atomic_load_n(&g_any_missing, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&g_missing[fn], __ATOMIC_RELAXED))
			return NVML_ERROR_FUNCTION_NOT_FOUND;
	}
	return NVML_SUCCESS;
}

/* nvgoFakeCallCount returns how often the named function was called since
 * the library was loaded (or nvgoFakeResetCalls), or the total over every
 * function when name is NULL. */
EXPORT unsigned long long nvgoFakeCallCount(const char *name)
{
	unsigned long long total = 0;
	for (int f = 0; f < FN_COUNT; f++) {
		unsigned long long n = __atomic_load_n(&g_calls[f], __ATOMIC_RELAXED);
		if (name == NULL)
			total += n;
		else if (strcmp(name, nvgo_fn_names[f]) == 0)
			return n;
	}
	return total;
}

/* nvgoFakeCallCounts writes {"total":N,"calls":{"name":n,…}} (functions
 * called at least once) into buf, NUL-terminated and cut to size, and
 * returns the length of the whole text. */
EXPORT unsigned int nvgoFakeCallCounts(char *buf, unsigned int size)
{
	char tmp[64];
	size_t len = 0;
#define PUT(s)                                                               \
	do {                                                                 \
		size_t l_ = strlen(s);                                       \
		if (buf && len < size)                                       \
			memcpy(buf + len, s, (len + l_ < size ? l_ : size - len)); \
		len += l_;                                                   \
	} while (0)
	snprintf(tmp, sizeof tmp, "{\"total\":%llu,\"calls\":{", nvgoFakeCallCount(NULL));
	PUT(tmp);
	int first = 1;
	for (int f = 0; f < FN_COUNT; f++) {
		unsigned long long n = __atomic_load_n(&g_calls[f], __ATOMIC_RELAXED);
		if (n == 0)
			continue;
		if (!first)
			PUT(",");
		first = 0;
		PUT("\"");
		PUT(nvgo_fn_names[f]);
		snprintf(tmp, sizeof tmp, "\":%llu", n);
		PUT(tmp);
	}
	PUT("}}\n");
#undef PUT
	if (buf && size > 0)
		buf[len < size ? len : size - 1] = 0;
	return (unsigned int)len;
}

/* nvgoFakeResetCalls sets every call count to zero. */
EXPORT void nvgoFakeResetCalls(void)
{
	for (int f = 0; f < FN_COUNT; f++)
		__atomic_store_n(&g_calls[f], 0, __ATOMIC_RELAXED);
}

/* dump_calls writes the counts to $NVGO_FAKE_CALLS, if set. */
static void dump_calls(void)
{
	const char *path = getenv("NVGO_FAKE_CALLS");
	if (path == NULL || *path == 0)
		return;
	unsigned int n = nvgoFakeCallCounts(NULL, 0);
	char *buf = malloc(n + 1);
	if (buf == NULL)
		return;
	nvgoFakeCallCounts(buf, n + 1);
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (f != NULL) {
		int ok = fwrite(buf, 1, n, f) == n;
		ok = (fclose(f) == 0) && ok;
		if (ok && rename(tmp, path) == 0) {
			free(buf);
			return;
		}
		unlink(tmp);
	}
	say("cannot write the call counts to %s%s", path, "");
	free(buf);
}

/* ---- The state ---- */

const nvgo_fake_state_t *nvgo_begin(uint64_t *seq)
{
	uint64_t s = __atomic_load_n(&g_hdr->seq, __ATOMIC_ACQUIRE);
	*seq = s;
	return g_slot[(s >> 1) & 1];
}

int nvgo_retry(uint64_t seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint64_t now = __atomic_load_n(&g_hdr->seq, __ATOMIC_RELAXED);
	return now >= (seq & ~1ULL) + 3;
}

/* map_state maps a state file read-only and checks its header; it says
 * what is wrong in one line and fails otherwise. */
static int map_state(const char *path, int fd)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		say("%s: not a regular file%s", path, "");
		return -1;
	}
	if ((size_t)sb.st_size < sizeof(nvgo_fake_header_t)) {
		say("%s: too short for a fleet state file%s", path, "");
		return -1;
	}
	void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		say("%s: cannot map: %s", path, strerror(errno));
		return -1;
	}
	const nvgo_fake_header_t *h = p;
	const char *bad = NULL;
	if (memcmp(h->magic, NVGO_FAKE_MAGIC, 8) != 0)
		bad = "not a fleet state file";
	else if (h->layout != NVGO_FAKE_LAYOUT || h->header_size != sizeof(nvgo_fake_header_t) ||
		 h->slot_size != sizeof(nvgo_fake_state_t))
		bad = "written by another version of nvgo's fakegpu (layout mismatch)";
	else if (h->file_size > (uint64_t)sb.st_size)
		bad = "truncated";
	else
		for (int i = 0; i < 2; i++)
			if (h->slot_offset[i] % 8 != 0 || h->slot_offset[i] < sizeof(nvgo_fake_header_t) ||
			    h->slot_offset[i] > h->file_size || h->file_size - h->slot_offset[i] < h->slot_size)
				bad = "slot outside the file";
	if (bad != NULL) {
		say("%s: %s", path, bad);
		munmap(p, (size_t)sb.st_size);
		return -1;
	}
	if (g_map != NULL)
		munmap((void *)g_map, g_map_size);
	g_map = p;
	g_map_size = (size_t)sb.st_size;
	g_hdr = h;
	for (int i = 0; i < 2; i++)
		g_slot[i] = (const nvgo_fake_state_t *)(g_map + h->slot_offset[i]);
	__atomic_store_n(&g_missing_seq, ~0ULL, __ATOMIC_RELEASE);
	return 0;
}

/* open_state_file maps path if it is a state file; 1 if it is not one (a
 * preset name or a scenario file), -1 on error. */
static int open_state_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 1;
	struct stat sb;
	char magic[8];
	int is_state = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		       pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
		       memcmp(magic, NVGO_FAKE_MAGIC, 8) == 0;
	if (!is_state) {
		close(fd);
		return 1;
	}
	int r = map_state(path, fd);
	close(fd);
	return r;
}

/* ---- The fleet helper ---- */

/* helper_path finds nvgo-fake-fleet: $NVGO_FAKE_FLEET_HELPER, else beside
 * this library. */
static int helper_path(char *out, size_t size)
{
	const char *env = getenv("NVGO_FAKE_FLEET_HELPER");
	if (env != NULL && *env != 0) {
		snprintf(out, size, "%s", env);
		return 0;
	}
	Dl_info info;
	if (dladdr((void *)&nvgo_enter, &info) == 0 || info.dli_fname == NULL)
		return -1;
	snprintf(out, size, "%s", info.dli_fname);
	char *slash = strrchr(out, '/');
	size_t dir = slash ? (size_t)(slash - out + 1) : 0;
	snprintf(out + dir, size - dir, "nvgo-fake-fleet");
	return 0;
}

/* high_cloexec moves fd to a number of 10 or more, close-on-exec, so that
 * the child's dup2 onto 3 and 4 never meets the same number. */
static int high_cloexec(int fd)
{
	int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	return h;
}

static void stop_helper(int wait_for_it)
{
	if (g_alive_fd >= 0) {
		close(g_alive_fd);
		g_alive_fd = -1;
	}
	if (g_helper <= 0)
		return;
	if (wait_for_it) {
		struct timespec ms = {0, 1000000};
		for (int i = 0; i < 2000; i++) {
			if (waitpid(g_helper, NULL, WNOHANG) != 0)
				goto done;
			nanosleep(&ms, NULL);
		}
		kill(g_helper, SIGKILL);
		waitpid(g_helper, NULL, 0);
	}
done:
	g_helper = 0;
}

/* start_helper runs the fleet helper on fleet (a preset or a scenario
 * file) and maps the state file it keeps up to date. */
static int start_helper(const char *fleet)
{
	char helper[PATH_MAX];
	if (helper_path(helper, sizeof helper) != 0) {
		say("cannot locate nvgo-fake-fleet (set NVGO_FAKE_FLEET_HELPER)%s%s", "", "");
		return -1;
	}
	if (access(helper, X_OK) != 0) {
		say("cannot run the fleet helper %s: %s", helper, strerror(errno));
		return -1;
	}
	const char *tmpdir = getenv("TMPDIR");
	if (tmpdir == NULL || *tmpdir == 0)
		tmpdir = "/tmp";
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/nvgo-fake-fleet-XXXXXX", tmpdir);
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		say("cannot create a state file in %s: %s", tmpdir, strerror(errno));
		return -1;
	}
	close(fd);

	int ready[2], alive[2];
	if (pipe2(ready, O_CLOEXEC) != 0) {
		unlink(path);
		return -1;
	}
	if (pipe2(alive, O_CLOEXEC) != 0) {
		close(ready[0]), close(ready[1]), unlink(path);
		return -1;
	}
	for (int i = 0; i < 2; i++)
		ready[i] = high_cloexec(ready[i]), alive[i] = high_cloexec(alive[i]);

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, ready[1], 3);
	posix_spawn_file_actions_adddup2(&fa, alive[0], 4);
	char *argv[] = {helper, "serve", "--fleet", (char *)fleet, "--state", path,
			"--ready-fd", "3", "--parent-fd", "4", NULL};
	pid_t pid;
	int err = posix_spawn(&pid, helper, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(ready[1]);
	close(alive[0]);
	if (err != 0) {
		say("cannot start the fleet helper %s: %s", helper, strerror(err));
		close(ready[0]), close(alive[1]), unlink(path);
		return -1;
	}

	char buf[8] = {0};
	size_t got = 0;
	int timed_out = 0;
	struct pollfd pfd = {ready[0], POLLIN, 0};
	while (got < 3) {
		int n = poll(&pfd, 1, HELPER_START_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			timed_out = 1;
		if (n <= 0)
			break;
		ssize_t r = read(ready[0], buf + got, 3 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* the helper exited: it said why on stderr */
		got += (size_t)r;
	}
	close(ready[0]);
	g_helper = pid;
	g_alive_fd = alive[1];
	if (got != 3 || memcmp(buf, "ok\n", 3) != 0) {
		if (timed_out)
			say("the fleet helper did not start within %s%s", "60s", "");
		stop_helper(1);
		unlink(path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = fd < 0 ? -1 : map_state(path, fd);
	if (fd < 0)
		say("%s: %s", path, strerror(errno));
	else
		close(fd);
	unlink(path); /* the mappings keep it alive; nothing is left behind */
	if (r != 0)
		stop_helper(1);
	return r;
}

/* ---- Init and Shutdown ---- */

static nvmlReturn_t parse_return(const char *s, int *ok)
{
	static const struct {
		const char *name;
		nvmlReturn_t code;
	} names[] = {
		{"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
		{"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
		{"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
		{"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
		{"ALREADY_INITIALIZED", NVML_ERROR_ALREADY_INITIALIZED},
		{"NOT_FOUND", NVML_ERROR_NOT_FOUND},
		{"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE},
		{"INSUFFICIENT_POWER", NVML_ERROR_INSUFFICIENT_POWER},
		{"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
		{"TIMEOUT", NVML_ERROR_TIMEOUT},
		{"IRQ_ISSUE", NVML_ERROR_IRQ_ISSUE},
		{"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND},
		{"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND},
		{"CORRUPTED_INFOROM", NVML_ERROR_CORRUPTED_INFOROM},
		{"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
		{"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED},
		{"OPERATING_SYSTEM", NVML_ERROR_OPERATING_SYSTEM},
		{"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
		{"IN_USE", NVML_ERROR_IN_USE},
		{"MEMORY", NVML_ERROR_MEMORY},
		{"NO_DATA", NVML_ERROR_NO_DATA},
		{"UNKNOWN", NVML_ERROR_UNKNOWN},
	};
	*ok = 1;
	if (strncmp(s, "NVML_ERROR_", 11) == 0)
		s += 11;
	else if (strncmp(s, "ERROR_", 6) == 0)
		s += 6;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].code;
	char *end;
	long v = strtol(s, &end, 10);
	if (*s != 0 && *end == 0 && v > 0 && v <= 999)
		return (nvmlReturn_t)v;
	*ok = 0;
	return NVML_ERROR_UNKNOWN;
}

static nvmlReturn_t init(void)
{
	pthread_mutex_lock(&g_mu);
	if (g_refs > 0) {
		g_refs++;
		pthread_mutex_unlock(&g_mu);
		return NVML_SUCCESS;
	}
	const char *forced = getenv("NVGO_FAKE_INIT_ERROR");
	if (forced != NULL && *forced != 0) {
		int ok;
		nvmlReturn_t r = parse_return(forced, &ok);
		if (!ok)
			say("NVGO_FAKE_INIT_ERROR=%s: not an NVML return code; failing with UNKNOWN%s", forced, "");
		pthread_mutex_unlock(&g_mu);
		return r;
	}
	const char *fleet = getenv("NVGO_FAKE_FLEET");
	if (fleet == NULL || *fleet == 0)
		fleet = DEFAULT_FLEET;
	int r = open_state_file(fleet);
	if (r == 1)
		r = start_helper(fleet);
	if (r != 0) {
		pthread_mutex_unlock(&g_mu);
		return NVML_ERROR_DRIVER_NOT_LOADED;
	}
	uint64_t s;
	int32_t fail;
	do {
		fail = nvgo_begin(&s)->init_error;
	} while (nvgo_retry(s));
	if (fail != 0) {
		stop_helper(1);
		pthread_mutex_unlock(&g_mu);
		return (nvmlReturn_t)fail;
	}
	g_refs = 1;
	__atomic_store_n(&g_live, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_mu);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit(void)
{
	nvgo_enter(FN_nvmlInit);
	return init();
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	nvgo_enter(FN_nvmlInit_v2);
	return init();
}

EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	(void)flags;
	nvgo_enter(FN_nvmlInitWithFlags);
	return init();
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	nvgo_enter(FN_nvmlShutdown);
	pthread_mutex_lock(&g_mu);
	if (g_refs == 0) {
		pthread_mutex_unlock(&g_mu);
		return NVML_ERROR_UNINITIALIZED;
	}
	if (--g_refs == 0) {
		__atomic_store_n(&g_live, 0, __ATOMIC_RELEASE);
		dump_calls();
		stop_helper(1);
	}
	pthread_mutex_unlock(&g_mu);
	return NVML_SUCCESS;
}

__attribute__((destructor)) static void at_exit(void)
{
	dump_calls();
	if (g_alive_fd >= 0) {
		close(g_alive_fd); /* the helper sees EOF and leaves */
		g_alive_fd = -1;
	}
}

EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
	__atomic_fetch_add(&g_calls[FN_nvmlErrorString], 1, __ATOMIC_RELAXED);
	switch (result) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "NVML was not initialized (call nvmlInit first)";
	case NVML_ERROR_INVALID_ARGUMENT: return "An argument is invalid";
	case NVML_ERROR_NOT_SUPPORTED: return "This device does not support the request";
	case NVML_ERROR_NO_PERMISSION: return "The caller lacks the permission for this request";
	case NVML_ERROR_ALREADY_INITIALIZED: return "Already initialized";
	case NVML_ERROR_NOT_FOUND: return "Nothing was found for the request";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "The buffer is too small";
	case NVML_ERROR_INSUFFICIENT_POWER: return "A power cable is not connected properly";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "The NVIDIA driver is not loaded";
	case NVML_ERROR_TIMEOUT: return "The request timed out";
	case NVML_ERROR_IRQ_ISSUE: return "The kernel detected an interrupt problem with a GPU";
	case NVML_ERROR_LIBRARY_NOT_FOUND: return "The NVML shared library was not found";
	case NVML_ERROR_FUNCTION_NOT_FOUND: return "This NVML library lacks the function";
	case NVML_ERROR_CORRUPTED_INFOROM: return "The infoROM is corrupted";
	case NVML_ERROR_GPU_IS_LOST: return "The GPU has fallen off the bus or is otherwise inaccessible";
	case NVML_ERROR_RESET_REQUIRED: return "The GPU needs a reset";
	case NVML_ERROR_OPERATING_SYSTEM: return "The operating system refused the request";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "The NVML library does not match the kernel driver's version";
	case NVML_ERROR_IN_USE: return "The GPU is in use";
	case NVML_ERROR_MEMORY: return "Out of memory";
	case NVML_ERROR_NO_DATA: return "No data";
	case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "ECC is not supported with vGPU";
	case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Not enough resources";
	case NVML_ERROR_FREQ_NOT_SUPPORTED: return "The frequency is not supported";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "The struct's version is not the one this function takes";
	case NVML_ERROR_DEPRECATED: return "The request is deprecated";
	case NVML_ERROR_NOT_READY: return "The system is not ready";
	case NVML_ERROR_GPU_NOT_FOUND: return "No GPU was found";
	case NVML_ERROR_INVALID_STATE: return "The resource is in an invalid state";
	default: return "Unknown error";
	}
}

/* ---- Handles and strings ---- */

nvmlDevice_t nvgo_handle(uint32_t rec)
{
	struct nvmlDevice_st *h = &g_handles[rec];
	h->rec = rec;
	__atomic_store_n(&h->magic, HANDLE_MAGIC, __ATOMIC_RELEASE);
	return (nvmlDevice_t){h};
}

nvmlReturn_t nvgo_record(nvmlDevice_t dev, uint32_t *rec)
{
	struct nvmlDevice_st *h = dev.handle;
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)g_handles;
	if (p < base || p >= base + sizeof g_handles || (p - base) % sizeof g_handles[0] != 0 ||
	    __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != HANDLE_MAGIC)
		return NVML_ERROR_INVALID_ARGUMENT;
	*rec = h->rec;
	return NVML_SUCCESS;
}

nvmlReturn_t nvgo_snap(uint32_t rec, nvgo_fake_device_t *out, uint64_t *now_us)
{
	int found;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		found = d != NULL;
		if (found)
			*out = *d;
		if (now_us != NULL)
			*now_us = st->now_us;
	} while (nvgo_retry(s));
	return found ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvgo_copy_string(char *dst, unsigned int length, const char *src, size_t max)
{
	size_t n = strnlen(src, max);
	if (n == max)
		n = max - 1; /* a torn string still ends */
	if (dst == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	if ((size_t)length < n + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(dst, src, n);
	dst[n] = 0;
	return NVML_SUCCESS;
}
