/* topoplace tests — a stand-in for NVIDIA's NVML (libnvidia-ml.so.1) that
 * answers the calls core/src/node/node_vendor.c makes from a node
 * description (standin.h) named by TOPOPLACE_STANDIN_NVML.  Layouts and
 * values as nvml.h has them (NVIDIA/go-nvml gen/nvml/nvml.h). */
#include "standin.h"

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_NVLINK_MAX_LINKS 36

typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

typedef struct si_gpu *nvmlDevice_t;

static struct si_node node;
static int up;

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int l,
				      unsigned int *active);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int l,
						 nvmlPciInfo_t *p);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int l,
						 int *type);
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int l,
					unsigned int *version);

nvmlReturn_t nvmlInit_v2(void)
{
	si_log("init");
	if (si_load(&node, "TOPOPLACE_STANDIN_NVML"))
		return NVML_ERROR_LIBRARY_NOT_FOUND;   /* no driver */
	up++;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	si_log("shutdown");
	if (!up)
		return NVML_ERROR_UNINITIALIZED;
	up--;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (!up)
		return NVML_ERROR_UNINITIALIZED;
	*count = (unsigned)node.ngpus;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (!up || i >= (unsigned)node.ngpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &node.gpu[i];
	return NVML_SUCCESS;
}

/* As NVML writes them: "00000000:07:00.0", upper-case hex. */
static void fill(nvmlPciInfo_t *p, unsigned long dom, unsigned b, unsigned d,
		 unsigned f)
{
	memset(p, 0, sizeof *p);
	p->domain = (unsigned)dom;
	p->bus = b;
	p->device = d;
	p->pciDeviceId = 0x20b010de;
	snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04lX:%02X:%02X.%X", dom, b,
		 d, f);
	snprintf(p->busId, sizeof p->busId, "%08lX:%02X:%02X.%X", dom, b, d, f);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	if (!up)
		return NVML_ERROR_UNINITIALIZED;
	fill(p, d->dom, d->b, d->d, d->f);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int l,
				      unsigned int *active)
{
	if (!up || l >= NVML_NVLINK_MAX_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (l >= 18 && (int)l >= d->nlinks)
		return NVML_ERROR_NOT_SUPPORTED;      /* a GPU with 18 links */
	*active = (int)l < d->nlinks;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int l,
						 nvmlPciInfo_t *p)
{
	if (!up || (int)l >= d->nlinks)
		return NVML_ERROR_INVALID_ARGUMENT;
	int r = d->remote[l];
	if (r < 0)
		fill(p, 0, 0xc5 + l % 6, 0, 0);      /* one of six NVSwitches */
	else
		fill(p, node.gpu[r].dom, node.gpu[r].b, node.gpu[r].d, node.gpu[r].f);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int l,
						 int *type)
{
	if (!up || (int)l >= d->nlinks)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (node.notype)
		return NVML_ERROR_NOT_SUPPORTED;
	*type = d->remote[l] < 0 ? 2 : 0;            /* SWITCH : GPU */
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int l,
					unsigned int *version)
{
	if (!up || (int)l >= d->nlinks)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!node.nvlink_version)
		return NVML_ERROR_NOT_SUPPORTED;
	*version = (unsigned)node.nvlink_version;
	return NVML_SUCCESS;
}
