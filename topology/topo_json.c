/* topo_json: snapshot save/load. Unknown values are written as null and read back as
 * invalid; derived structure (bridge roles, adapters) is written for readers but
 * recomputed on load by topo_model_finalize, so a snapshot cannot contradict the rules. */
#include "topology/topo_json.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonutil.h"
#include "topology/topo_jsonrd.h"
#include "topology/topo_fabric.h"
#include "topology/topo_load.h"

/* ---- enum <-> text tables ---- */

static const char *const src_names[] = {"live", "xml", "sysfs", "json"};
static const char *const numa_kinds[] = {"cpu", "gpu-memory", "other"};
static const char *const pci_kinds[] = {"hostbridge", "bridge", "device"};
static const char *const roles[] = {"none", "root-port", "switch-upstream", "switch-downstream"};
static const char *const peer_kinds[] = {"gpu", "switch", "cpu"};
static const char *const ll_names[] = {"unknown", "InfiniBand", "Ethernet"};
static const char *const gid_types[] = {"IB", "RoCE v1", "RoCE v2"};

static void add_bdf(cJSON *o, const char *key, const struct topo_bdf *a)
{
    char buf[32];
    topo_bdf_str(a, buf, sizeof(buf));
    cJSON_AddStringToObject(o, key, buf);
}

static void add_hex(cJSON *o, const char *key, unsigned v, int digits)
{
    char buf[16];
    snprintf(buf, sizeof(buf), "%0*x", digits, v);
    cJSON_AddStringToObject(o, key, buf);
}

static void add_tristate(cJSON *o, const char *key, int v)
{
    if (v == TOPO_YES)
        cJSON_AddTrueToObject(o, key);
    else if (v == TOPO_NO)
        cJSON_AddFalseToObject(o, key);
    else
        cJSON_AddNullToObject(o, key);
}

/* ---- model -> JSON ---- */

static cJSON *host_json(const struct topo_host *h)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "hostname", h->hostname);
    cJSON_AddStringToObject(o, "kernel", h->kernel);
    cJSON_AddStringToObject(o, "arch", h->arch);
    cJSON_AddStringToObject(o, "product", h->product);
    add_tristate(o, "is_root", h->is_root);
    add_tristate(o, "cap_ipc_lock", h->cap_ipc_lock);
    if (h->memlock_known) {
        /* RLIM_INFINITY is written as -1 ("unlimited"), bytes otherwise. */
        cJSON_AddNumberToObject(o, "memlock_soft_bytes",
                                h->memlock_soft == UINT64_MAX ? -1 : (double)h->memlock_soft);
        cJSON_AddNumberToObject(o, "memlock_hard_bytes",
                                h->memlock_hard == UINT64_MAX ? -1 : (double)h->memlock_hard);
    } else {
        cJSON_AddNullToObject(o, "memlock_soft_bytes");
        cJSON_AddNullToObject(o, "memlock_hard_bytes");
    }
    add_tristate(o, "nvidia_peermem", h->nvidia_peermem);
    add_tristate(o, "dmabuf", h->dmabuf);
    return o;
}

static cJSON *pci_json(const struct topo_pci *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", pci_kinds[p->kind]);
    topo_json_add_idx(o, "parent", p->parent);
    add_bdf(o, "bdf", &p->addr);
    cJSON *br = cJSON_AddArrayToObject(o, "buses");
    cJSON_AddItemToArray(br, cJSON_CreateNumber(p->bus_first));
    cJSON_AddItemToArray(br, cJSON_CreateNumber(p->bus_last));
    if (p->valid & TOPO_PCI_V_IDS) {
        add_hex(o, "vendor_id", p->vendor_id, 4);
        add_hex(o, "device_id", p->device_id, 4);
        add_hex(o, "class_id", p->class_id, 4);
    } else {
        cJSON_AddNullToObject(o, "vendor_id");
        cJSON_AddNullToObject(o, "device_id");
        add_hex(o, "class_id", p->class_id, 4);
    }
    cJSON_AddStringToObject(o, "role", roles[p->role]);
    topo_json_add_idx(o, "numa", p->numa);
    topo_json_add_idx(o, "package", p->package);
    cJSON_AddStringToObject(o, "cpuset", p->cpuset);
    jsonutil_add_num_or_null(o, "cur_speed_gts", p->valid & TOPO_PCI_V_CUR_SPEED, p->cur_speed_gts);
    jsonutil_add_num_or_null(o, "cur_width", p->valid & TOPO_PCI_V_CUR_WIDTH, p->cur_width);
    jsonutil_add_num_or_null(o, "max_speed_gts", p->valid & TOPO_PCI_V_MAX_SPEED, p->max_speed_gts);
    jsonutil_add_num_or_null(o, "max_width", p->valid & TOPO_PCI_V_MAX_WIDTH, p->max_width);
    jsonutil_add_num_or_null(o, "link_gbs", p->valid & TOPO_PCI_V_LINK_GBS, p->link_gbs);
    jsonutil_add_num_or_null(o, "acs_ctrl", p->valid & TOPO_PCI_V_ACS, p->acs_ctrl);
    cJSON_AddStringToObject(o, "vendor_name", p->vendor_name);
    cJSON_AddStringToObject(o, "device_name", p->device_name);
    cJSON_AddStringToObject(o, "subtype", p->subtype);
    cJSON_AddStringToObject(o, "slot", p->slot);
    return o;
}

static cJSON *gpu_json(const struct topo_gpu *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pci", g->pci);
    cJSON_AddStringToObject(o, "vendor", g->vendor);
    cJSON_AddStringToObject(o, "model", g->model);
    cJSON_AddStringToObject(o, "osdevs", g->osdevs);
    cJSON_AddStringToObject(o, "uuid", g->uuid);
    cJSON_AddStringToObject(o, "found_by", g->found_by);
    jsonutil_add_num_or_null(o, "cuda_index", g->valid & TOPO_GPU_V_CUDA, g->cuda_index);
    jsonutil_add_num_or_null(o, "nvml_index", g->valid & TOPO_GPU_V_NVML, g->nvml_index);
    jsonutil_add_num_or_null(o, "rsmi_index", g->valid & TOPO_GPU_V_RSMI, g->rsmi_index);
    jsonutil_add_num_or_null(o, "mem_bytes", g->valid & TOPO_GPU_V_MEM, (double)g->mem_bytes);
    topo_json_add_idx(o, "mem_numa", g->mem_numa);
    return o;
}

static cJSON *port_json(const struct topo_port *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "nic", p->nic);
    cJSON_AddNumberToObject(o, "num", p->num);
    if (p->valid & TOPO_PORT_V_STATE)
        cJSON_AddStringToObject(o, "state", topo_port_state_str(p->state));
    else
        cJSON_AddNullToObject(o, "state");
    if (p->valid & TOPO_PORT_V_PHYS)
        cJSON_AddStringToObject(o, "phys_state", topo_phys_state_str(p->phys_state));
    else
        cJSON_AddNullToObject(o, "phys_state");
    if (p->valid & TOPO_PORT_V_LL)
        cJSON_AddStringToObject(o, "link_layer", ll_names[p->link_layer]);
    else
        cJSON_AddNullToObject(o, "link_layer");
    jsonutil_add_num_or_null(o, "rate_gbps", p->valid & TOPO_PORT_V_RATE, p->rate_gbps);
    jsonutil_add_num_or_null(o, "width", p->valid & TOPO_PORT_V_RATE, p->width);
    if (p->valid & TOPO_PORT_V_RATE)
        cJSON_AddStringToObject(o, "speed", p->speed);
    else
        cJSON_AddNullToObject(o, "speed");
    jsonutil_add_num_or_null(o, "active_mtu", p->valid & TOPO_PORT_V_MTU, p->active_mtu);
    jsonutil_add_num_or_null(o, "max_mtu", p->valid & TOPO_PORT_V_MAXMTU, p->max_mtu);
    jsonutil_add_num_or_null(o, "lid", p->valid & TOPO_PORT_V_LID, p->lid);
    jsonutil_add_num_or_null(o, "lmc", p->valid & TOPO_PORT_V_LID, p->lmc);
    jsonutil_add_num_or_null(o, "sm_lid", p->valid & TOPO_PORT_V_SMLID, p->sm_lid);
    jsonutil_add_num_or_null(o, "sm_sl", p->valid & TOPO_PORT_V_SMLID, p->sm_sl);
    topo_json_add_idx(o, "netdev", p->netdev);
    if (p->valid & TOPO_PORT_V_GIDS) {
        cJSON *ga = cJSON_AddArrayToObject(o, "gids");
        for (int i = 0; i < p->ngids; i++) {
            const struct topo_gid *g = &p->gids[i];
            cJSON *go = cJSON_CreateObject();
            cJSON_AddNumberToObject(go, "index", g->index);
            cJSON_AddStringToObject(go, "gid", g->gid);
            if (p->valid & TOPO_PORT_V_GIDTYPES)
                cJSON_AddStringToObject(go, "type", gid_types[g->type]);
            else
                cJSON_AddNullToObject(go, "type");
            cJSON_AddStringToObject(go, "ndev", g->ndev);
            cJSON_AddStringToObject(go, "ip", g->ip);
            cJSON_AddItemToArray(ga, go);
        }
    } else {
        cJSON_AddNullToObject(o, "gids");
    }
    return o;
}

static cJSON *nic_json(const struct topo_nic *n)
{
    cJSON *o = cJSON_CreateObject();
    topo_json_add_idx(o, "pci", n->pci);
    cJSON_AddNumberToObject(o, "adapter", n->adapter);
    cJSON_AddStringToObject(o, "rdma_dev", n->rdma_dev);
    cJSON_AddStringToObject(o, "driver", n->driver);
    cJSON_AddStringToObject(o, "node_guid", n->node_guid);
    cJSON_AddStringToObject(o, "sys_image_guid", n->sys_image_guid);
    cJSON_AddStringToObject(o, "fw_ver", n->fw_ver);
    cJSON_AddStringToObject(o, "board_id", n->board_id);
    cJSON_AddStringToObject(o, "hca_type", n->hca_type);
    cJSON_AddNumberToObject(o, "first_port", n->first_port);
    cJSON_AddNumberToObject(o, "nports", n->nports);
    return o;
}

static cJSON *netdev_json(const struct topo_netdev *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", d->name);
    topo_json_add_idx(o, "pci", d->pci);
    topo_json_add_idx(o, "nic", d->nic);
    cJSON_AddNumberToObject(o, "dev_port", d->dev_port);
    cJSON_AddStringToObject(o, "mac", d->mac);
    jsonutil_add_num_or_null(o, "mtu", d->valid & TOPO_NET_V_MTU, d->mtu);
    jsonutil_add_num_or_null(o, "speed_mbps", d->valid & TOPO_NET_V_SPEED, d->speed_mbps);
    if (d->valid & TOPO_NET_V_OPER)
        cJSON_AddStringToObject(o, "operstate", d->operstate);
    else
        cJSON_AddNullToObject(o, "operstate");
    cJSON_AddStringToObject(o, "addrs", d->addrs);
    if (d->master[0])
        cJSON_AddStringToObject(o, "master", d->master);
    if (d->valid & TOPO_NET_V_BOND) {
        cJSON *b = cJSON_AddObjectToObject(o, "bond");
        cJSON_AddStringToObject(b, "mode", d->bond_mode);
        cJSON_AddStringToObject(b, "xmit_hash_policy", d->bond_hash);
    }
    return o;
}

cJSON *topo_json_from_model(const struct topo_model *m)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", TOPO_JSON_FORMAT);
    cJSON_AddNumberToObject(doc, "version", TOPO_JSON_VERSION);
    cJSON *src = cJSON_AddObjectToObject(doc, "source");
    cJSON_AddStringToObject(src, "kind", src_names[m->source]);
    cJSON_AddStringToObject(src, "path", m->source_path);
    cJSON_AddStringToObject(src, "hwloc_version", m->hwloc_version);
    cJSON_AddItemToObject(doc, "host", host_json(&m->host));

    cJSON *a = cJSON_AddArrayToObject(doc, "packages");
    for (int i = 0; i < m->npackages; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "os_index", m->packages[i].os_index);
        cJSON_AddStringToObject(o, "cpu_model", m->packages[i].cpu_model);
        cJSON_AddStringToObject(o, "cpuset", m->packages[i].cpuset);
        cJSON_AddItemToArray(a, o);
    }
    a = cJSON_AddArrayToObject(doc, "numa");
    for (int i = 0; i < m->nnuma; i++) {
        const struct topo_numa *n = &m->numa[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "os_index", n->os_index);
        cJSON_AddStringToObject(o, "kind", numa_kinds[n->kind]);
        topo_json_add_idx(o, "package", n->package);
        cJSON_AddNumberToObject(o, "mem_bytes", (double)n->mem_bytes);
        cJSON_AddStringToObject(o, "cpuset", n->cpuset);
        topo_json_add_idx(o, "gpu", n->gpu);
        cJSON_AddStringToObject(o, "subtype", n->subtype);
        cJSON_AddItemToArray(a, o);
    }
    a = cJSON_AddArrayToObject(doc, "pci");
    for (int i = 0; i < m->npci; i++)
        cJSON_AddItemToArray(a, pci_json(&m->pci[i]));
    a = cJSON_AddArrayToObject(doc, "gpus");
    for (int i = 0; i < m->ngpus; i++)
        cJSON_AddItemToArray(a, gpu_json(&m->gpus[i]));
    cJSON_AddBoolToObject(doc, "gpu_links_known", m->gpu_links_known);
    a = cJSON_AddArrayToObject(doc, "gpulinks");
    for (int i = 0; i < m->ngpulinks; i++) {
        const struct topo_gpulink *l = &m->gpulinks[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "gpu", l->gpu);
        cJSON_AddStringToObject(o, "peer_kind", peer_kinds[l->peer_kind]);
        cJSON_AddNumberToObject(o, "peer", l->peer);
        cJSON_AddNumberToObject(o, "bw_mbs", l->bw_mbs);
        topo_json_add_idx(o, "links", l->links);
        cJSON_AddStringToObject(o, "kind", l->kind);
        cJSON_AddItemToArray(a, o);
    }
    a = cJSON_AddArrayToObject(doc, "nics");
    for (int i = 0; i < m->nnics; i++)
        cJSON_AddItemToArray(a, nic_json(&m->nics[i]));
    a = cJSON_AddArrayToObject(doc, "adapters");
    for (int i = 0; i < m->nadapters; i++) {
        const struct topo_adapter *ad = &m->adapters[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", ad->model);
        add_hex(o, "vendor_id", ad->vendor_id, 4);
        add_hex(o, "device_id", ad->device_id, 4);
        cJSON_AddStringToObject(o, "fw_ver", ad->fw_ver);
        cJSON_AddItemToObject(o, "nics", cJSON_CreateIntArray(ad->funcs, ad->nfuncs));
        cJSON_AddItemToArray(a, o);
    }
    a = cJSON_AddArrayToObject(doc, "ports");
    for (int i = 0; i < m->nports; i++)
        cJSON_AddItemToArray(a, port_json(&m->ports[i]));
    a = cJSON_AddArrayToObject(doc, "netdevs");
    for (int i = 0; i < m->nnetdevs; i++)
        cJSON_AddItemToArray(a, netdev_json(&m->netdevs[i]));
    a = cJSON_AddArrayToObject(doc, "notes");
    for (int i = 0; i < m->nnotes; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(m->notes[i]));
    cJSON *fab = topo_fabric_to_json(m); /* only when a fabric part ran */
    if (fab)
        cJSON_AddItemToObject(doc, "fabric", fab);
    return doc;
}

/* ---- JSON -> model ---- */

/* An integer member in [lo, hi]; dflt when absent, null or bad (a bad one is a problem). */
static int req_int(struct topo_jrd *c, const cJSON *o, const char *arr, int i, const char *key,
                   int lo, int hi, int dflt)
{
    int64_t v;
    return topo_jrd_int(c, o, arr, i, key, lo, hi, &v) ? (int)v : dflt;
}

static unsigned hex_field(struct topo_jrd *c, const cJSON *o, const char *arr, int i,
                          const char *key, bool *present)
{
    const char *s = jsonutil_str(o, key);
    *present = s != NULL;
    if (!s)
        return 0;
    char *end;
    unsigned long v = strtoul(s, &end, 16);
    if (*end || !*s) {
        topo_jrd_bad(c, arr, i, key, "must be a hex string");
        return 0;
    }
    return (unsigned)v;
}

static int tristate(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsTrue(it))
        return TOPO_YES;
    if (cJSON_IsFalse(it))
        return TOPO_NO;
    return TOPO_UNKNOWN;
}

/* memlock: bytes, -1 for unlimited (RLIM_INFINITY). */
static bool memlock(struct topo_jrd *c, const cJSON *h, const char *key, uint64_t *out)
{
    double v;
    if (!topo_jrd_num(c, h, "host", -1, key, &v))
        return false;
    if (v == -1) {
        *out = UINT64_MAX;
        return true;
    }
    return topo_jrd_u64(c, h, "host", -1, key, out);
}

static void load_host(struct topo_jrd *c, const cJSON *h, struct topo_host *o)
{
    topo_jrd_str(h, "hostname", o->hostname, sizeof(o->hostname));
    topo_jrd_str(h, "kernel", o->kernel, sizeof(o->kernel));
    topo_jrd_str(h, "arch", o->arch, sizeof(o->arch));
    topo_jrd_str(h, "product", o->product, sizeof(o->product));
    o->is_root = tristate(h, "is_root");
    o->cap_ipc_lock = tristate(h, "cap_ipc_lock");
    o->nvidia_peermem = tristate(h, "nvidia_peermem");
    o->dmabuf = tristate(h, "dmabuf");
    uint64_t s, hd;
    if (memlock(c, h, "memlock_soft_bytes", &s) && memlock(c, h, "memlock_hard_bytes", &hd)) {
        o->memlock_known = 1;
        o->memlock_soft = s;
        o->memlock_hard = hd;
    }
}

static void load_pci(struct topo_jrd *c, const cJSON *o, int i, struct topo_pci *p, int npci)
{
    int kind = topo_name_to_enum(jsonutil_str(o, "kind"), TOPO_NAMES(pci_kinds));
    if (kind < 0) {
        topo_jrd_bad(c, "pci", i, "kind", "must be hostbridge, bridge or device");
        return;
    }
    p->kind = (enum topo_pci_kind)kind;
    p->parent = req_int(c, o, "pci", i, "parent", -1, npci - 1, -1);
    if (p->parent >= i) {
        topo_jrd_bad(c, "pci", i, "parent", "must refer to an earlier entry");
        return;
    }
    const char *bdf = jsonutil_str(o, "bdf");
    if (!bdf || topo_bdf_parse(bdf, &p->addr) < 0) {
        topo_jrd_bad(c, "pci", i, "bdf", "is not a PCI address like 0000:4d:00.0");
        return;
    }
    const cJSON *br = cJSON_GetObjectItemCaseSensitive(o, "buses");
    if (cJSON_GetArraySize(br) == 2) {
        uint8_t *bus[2] = {&p->bus_first, &p->bus_last};
        for (int k = 0; k < 2; k++) {
            const cJSON *b = cJSON_GetArrayItem(br, k);
            char key[16];
            int64_t v;
            snprintf(key, sizeof(key), "buses[%d]", k);
            if (!cJSON_IsNumber(b))
                topo_jrd_bad(c, "pci", i, key, "must be a bus number (0-255)");
            else if (jsonutil_whole(b->valuedouble, 0, 255, &v))
                *bus[k] = (uint8_t)v;
            else
                topo_jrd_range(c, "pci", i, key, b->valuedouble, 0, 255);
        }
    }
    bool pv, pd, pc;
    p->vendor_id = (uint16_t)hex_field(c, o, "pci", i, "vendor_id", &pv);
    p->device_id = (uint16_t)hex_field(c, o, "pci", i, "device_id", &pd);
    p->class_id = (uint16_t)hex_field(c, o, "pci", i, "class_id", &pc);
    if (pv && pd)
        p->valid |= TOPO_PCI_V_IDS;
    else
        p->vendor_id = p->device_id = 0; /* written as null: unknown (TOPO_PCI_V_IDS) */
    p->numa = req_int(c, o, "pci", i, "numa", -1, TOPO_MAX_INDEX, -1);
    p->package = req_int(c, o, "pci", i, "package", -1, TOPO_MAX_INDEX, -1);
    topo_jrd_str(o, "cpuset", p->cpuset, sizeof(p->cpuset));
    double v;
    int64_t n;
    if (topo_jrd_num(c, o, "pci", i, "cur_speed_gts", &v)) {
        p->cur_speed_gts = v;
        p->valid |= TOPO_PCI_V_CUR_SPEED;
    }
    if (topo_jrd_int(c, o, "pci", i, "cur_width", 1, 32, &n)) {
        p->cur_width = (int)n;
        p->valid |= TOPO_PCI_V_CUR_WIDTH;
    }
    if (topo_jrd_num(c, o, "pci", i, "max_speed_gts", &v)) {
        p->max_speed_gts = v;
        p->valid |= TOPO_PCI_V_MAX_SPEED;
    }
    if (topo_jrd_int(c, o, "pci", i, "max_width", 1, 32, &n)) {
        p->max_width = (int)n;
        p->valid |= TOPO_PCI_V_MAX_WIDTH;
    }
    if (topo_jrd_num(c, o, "pci", i, "link_gbs", &v)) {
        p->link_gbs = v;
        p->valid |= TOPO_PCI_V_LINK_GBS;
    }
    if (topo_jrd_int(c, o, "pci", i, "acs_ctrl", 0, 0xffff, &n)) {
        p->acs_ctrl = (uint16_t)n;
        p->valid |= TOPO_PCI_V_ACS;
    }
    topo_jrd_str(o, "vendor_name", p->vendor_name, sizeof(p->vendor_name));
    topo_jrd_str(o, "device_name", p->device_name, sizeof(p->device_name));
    topo_jrd_str(o, "subtype", p->subtype, sizeof(p->subtype));
    topo_jrd_str(o, "slot", p->slot, sizeof(p->slot));
}

static void load_gpu(struct topo_jrd *c, const cJSON *o, int i, struct topo_gpu *g, int npci)
{
    g->pci = req_int(c, o, "gpus", i, "pci", 0, npci - 1, -1);
    if (g->pci < 0)
        topo_jrd_bad(c, "gpus", i, "pci", "must name a PCI entry");
    topo_jrd_str(o, "vendor", g->vendor, sizeof(g->vendor));
    topo_jrd_str(o, "model", g->model, sizeof(g->model));
    topo_jrd_str(o, "osdevs", g->osdevs, sizeof(g->osdevs));
    topo_jrd_str(o, "uuid", g->uuid, sizeof(g->uuid));
    topo_jrd_str(o, "found_by", g->found_by, sizeof(g->found_by));
    int64_t v;
    if (topo_jrd_int(c, o, "gpus", i, "cuda_index", 0, TOPO_MAX_INDEX, &v)) {
        g->cuda_index = (int)v;
        g->valid |= TOPO_GPU_V_CUDA;
    }
    if (topo_jrd_int(c, o, "gpus", i, "nvml_index", 0, TOPO_MAX_INDEX, &v)) {
        g->nvml_index = (int)v;
        g->valid |= TOPO_GPU_V_NVML;
    }
    if (topo_jrd_int(c, o, "gpus", i, "rsmi_index", 0, TOPO_MAX_INDEX, &v)) {
        g->rsmi_index = (int)v;
        g->valid |= TOPO_GPU_V_RSMI;
    }
    if (topo_jrd_u64(c, o, "gpus", i, "mem_bytes", &g->mem_bytes))
        g->valid |= TOPO_GPU_V_MEM;
    g->mem_numa = req_int(c, o, "gpus", i, "mem_numa", -1, TOPO_MAX_INDEX, -1);
}

static void load_port(struct topo_jrd *c, const cJSON *o, int i, struct topo_port *p, int nnics,
                      int nnet)
{
    p->nic = req_int(c, o, "ports", i, "nic", 0, nnics - 1, -1);
    if (p->nic < 0)
        topo_jrd_bad(c, "ports", i, "nic", "must name a NIC entry");
    p->num = req_int(c, o, "ports", i, "num", 1, 255, 1);
    static const char *const states[] = {"UNKNOWN", "DOWN",   "INIT",
                                         "ARMED",   "ACTIVE", "ACTIVE_DEFER"};
    static const char *const phys[] = {
        "Unknown",           "Sleep",  "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
        "LinkErrorRecovery", "PhyTest"};
    int e;
    if ((e = topo_name_to_enum(jsonutil_str(o, "state"), TOPO_NAMES(states))) >= 0) {
        p->state = (enum topo_port_state)e;
        p->valid |= TOPO_PORT_V_STATE;
    }
    if ((e = topo_name_to_enum(jsonutil_str(o, "phys_state"), TOPO_NAMES(phys))) >= 0) {
        p->phys_state = (enum topo_phys_state)e;
        p->valid |= TOPO_PORT_V_PHYS;
    }
    if ((e = topo_name_to_enum(jsonutil_str(o, "link_layer"), TOPO_NAMES(ll_names))) >= 0) {
        p->link_layer = (enum topo_link_layer)e;
        p->valid |= TOPO_PORT_V_LL;
    }
    double v;
    int64_t n, w;
    if (topo_jrd_num(c, o, "ports", i, "rate_gbps", &v) &&
        topo_jrd_int(c, o, "ports", i, "width", 0, 32, &w)) {
        p->rate_gbps = v;
        p->width = (int)w;
        topo_jrd_str(o, "speed", p->speed, sizeof(p->speed));
        p->valid |= TOPO_PORT_V_RATE;
    }
    if (topo_jrd_int(c, o, "ports", i, "active_mtu", 0, 65536, &n)) {
        p->active_mtu = (int)n;
        p->valid |= TOPO_PORT_V_MTU;
    }
    if (topo_jrd_int(c, o, "ports", i, "max_mtu", 0, 65536, &n)) {
        p->max_mtu = (int)n;
        p->valid |= TOPO_PORT_V_MAXMTU;
    }
    /* LIDs are 16 bits, the LMC 3 and the SM's SL 4 (IBA 14.2.5.6 PortInfo). */
    if (topo_jrd_int(c, o, "ports", i, "lid", 0, 0xffff, &n)) {
        p->lid = (uint32_t)n;
        if (topo_jrd_int(c, o, "ports", i, "lmc", 0, 7, &w))
            p->lmc = (int)w;
        p->valid |= TOPO_PORT_V_LID;
    }
    if (topo_jrd_int(c, o, "ports", i, "sm_lid", 0, 0xffff, &n)) {
        p->sm_lid = (uint32_t)n;
        if (topo_jrd_int(c, o, "ports", i, "sm_sl", 0, 15, &w))
            p->sm_sl = (int)w;
        p->valid |= TOPO_PORT_V_SMLID;
    }
    p->netdev = req_int(c, o, "ports", i, "netdev", -1, nnet - 1, -1);
    const cJSON *ga = cJSON_GetObjectItemCaseSensitive(o, "gids");
    if (cJSON_IsArray(ga)) {
        p->valid |= TOPO_PORT_V_GIDS;
        const cJSON *go;
        cJSON_ArrayForEach(go, ga)
        {
            struct topo_gid g = {0};
            g.index = req_int(c, go, "ports.gids", i, "index", 0, TOPO_MAX_INDEX, 0);
            topo_jrd_str(go, "gid", g.gid, sizeof(g.gid));
            int t = topo_name_to_enum(jsonutil_str(go, "type"), TOPO_NAMES(gid_types));
            if (t >= 0) {
                g.type = (enum topo_gid_type)t;
                p->valid |= TOPO_PORT_V_GIDTYPES;
            }
            topo_jrd_str(go, "ndev", g.ndev, sizeof(g.ndev));
            topo_jrd_str(go, "ip", g.ip, sizeof(g.ip));
            topo_port_add_gid(p, &g);
        }
    }
}

static void load_netdev(struct topo_jrd *c, const cJSON *o, int i, struct topo_netdev *d, int npci,
                        int nnics)
{
    topo_jrd_str(o, "name", d->name, sizeof(d->name));
    if (!d->name[0])
        topo_jrd_bad(c, "netdevs", i, "name", "must be a non-empty string");
    d->pci = req_int(c, o, "netdevs", i, "pci", -1, npci - 1, -1);
    d->nic = req_int(c, o, "netdevs", i, "nic", -1, nnics - 1, -1);
    d->dev_port = req_int(c, o, "netdevs", i, "dev_port", -1, 255, 0);
    topo_jrd_str(o, "mac", d->mac, sizeof(d->mac));
    int64_t v;
    if (topo_jrd_int(c, o, "netdevs", i, "mtu", 0, INT_MAX, &v)) {
        d->mtu = (int)v;
        d->valid |= TOPO_NET_V_MTU;
    }
    if (topo_jrd_int(c, o, "netdevs", i, "speed_mbps", 0, INT_MAX, &v)) {
        d->speed_mbps = (int)v;
        d->valid |= TOPO_NET_V_SPEED;
    }
    if (jsonutil_strcpy(o, "operstate", d->operstate, sizeof(d->operstate)))
        d->valid |= TOPO_NET_V_OPER;
    topo_jrd_str(o, "addrs", d->addrs, sizeof(d->addrs));
    topo_jrd_str(o, "master", d->master, sizeof(d->master));
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "bond");
    if (cJSON_IsObject(b)) {
        topo_jrd_str(b, "mode", d->bond_mode, sizeof(d->bond_mode));
        topo_jrd_str(b, "xmit_hash_policy", d->bond_hash, sizeof(d->bond_hash));
        d->valid |= TOPO_NET_V_BOND;
    }
}

int topo_json_to_model(const cJSON *doc, struct topo_model *m, const char *what, struct ft_err *err)
{
    struct topo_jrd c = {.what = what, .scope = "", .err = err};
    const char *fmt = jsonutil_str(doc, "format");
    if (!cJSON_IsObject(doc) || !fmt || strcmp(fmt, TOPO_JSON_FORMAT))
        return ft_err_set(err, -EBADMSG,
                          "%s: JSON, but not a fabtop topology snapshot (no \"format\": \"%s\"); "
                          "save one with 'fabtop topo -o FILE'%s",
                          what, TOPO_JSON_FORMAT,
                          fmt && !strcmp(fmt, "fabtop-results") ? " (this is a results file: "
                                                                  "open it with --results)"
                                                                : "");
    int64_t ver = 0;
    if (!jsonutil_int(doc, "version", &ver) || ver < 1 || ver > TOPO_JSON_VERSION)
        return ft_err_set(err, -EPROTO,
                          "%s: snapshot version %lld is not supported (this fabtop reads "
                          "version %d)",
                          what, (long long)ver, TOPO_JSON_VERSION);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(doc, "source");
    /* Keep where the data originally came from, so save -> load -> save is exact. */
    int sk = topo_name_to_enum(jsonutil_str(src, "kind"), TOPO_NAMES(src_names));
    m->source = sk < 0 ? TOPO_SRC_JSON : (enum topo_source_kind)sk;
    topo_jrd_str(src, "path", m->source_path, sizeof(m->source_path));
    snprintf(m->snapshot, sizeof(m->snapshot), "%s", what);
    topo_jrd_str(src, "hwloc_version", m->hwloc_version, sizeof(m->hwloc_version));
    load_host(&c, cJSON_GetObjectItemCaseSensitive(doc, "host"), &m->host);

    const cJSON *a, *o;
    int i = 0;
    if ((a = topo_jrd_array(&c, doc, "packages", false)))
        cJSON_ArrayForEach(o, a)
        {
            int k_ = topo_model_add_package(m);
            struct topo_package *p = &m->packages[k_];
            /* -1: hwloc did not know it (HWLOC_UNKNOWN_INDEX) */
            p->os_index = req_int(&c, o, "packages", i++, "os_index", -1, TOPO_MAX_INDEX, 0);
            topo_jrd_str(o, "cpu_model", p->cpu_model, sizeof(p->cpu_model));
            topo_jrd_str(o, "cpuset", p->cpuset, sizeof(p->cpuset));
        }
    i = 0;
    if ((a = topo_jrd_array(&c, doc, "numa", false)))
        cJSON_ArrayForEach(o, a)
        {
            int k_ = topo_model_add_numa(m);
            struct topo_numa *n = &m->numa[k_];
            n->os_index = req_int(&c, o, "numa", i, "os_index", -1, TOPO_MAX_INDEX, 0);
            int k = topo_name_to_enum(jsonutil_str(o, "kind"), TOPO_NAMES(numa_kinds));
            n->kind = k < 0 ? TOPO_NUMA_CPU : (enum topo_numa_kind)k;
            n->package = req_int(&c, o, "numa", i, "package", -1, m->npackages - 1, -1);
            topo_jrd_u64(&c, o, "numa", i, "mem_bytes", &n->mem_bytes);
            topo_jrd_str(o, "cpuset", n->cpuset, sizeof(n->cpuset));
            n->gpu = req_int(&c, o, "numa", i, "gpu", -1, TOPO_MAX_INDEX, -1);
            topo_jrd_str(o, "subtype", n->subtype, sizeof(n->subtype));
            i++;
        }
    int npci = (a = topo_jrd_array(&c, doc, "pci", false)) ? cJSON_GetArraySize(a) : 0;
    i = 0;
    if (a)
        cJSON_ArrayForEach(o, a)
        {
            int k = topo_model_add_pci(m);
            load_pci(&c, o, i++, &m->pci[k], npci);
        }
    i = 0;
    if ((a = topo_jrd_array(&c, doc, "gpus", false)))
        cJSON_ArrayForEach(o, a)
        {
            int k = topo_model_add_gpu(m);
            load_gpu(&c, o, i++, &m->gpus[k], npci);
        }
    for (int k = 0; k < m->nnuma; k++)
        if (m->numa[k].gpu >= m->ngpus)
            topo_jrd_bad(&c, "numa", k, "gpu", "must name a GPU entry");
    /* Snapshots from before the flag: links known when any were recorded. */
    const cJSON *glk = cJSON_GetObjectItemCaseSensitive(doc, "gpu_links_known");
    m->gpu_links_known =
        cJSON_IsBool(glk)
            ? cJSON_IsTrue(glk)
            : cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "gpulinks")) > 0;
    i = 0;
    if ((a = topo_jrd_array(&c, doc, "gpulinks", false)))
        cJSON_ArrayForEach(o, a)
        {
            int k_ = topo_model_add_gpulink(m);
            struct topo_gpulink *l = &m->gpulinks[k_];
            l->gpu = req_int(&c, o, "gpulinks", i, "gpu", 0, m->ngpus - 1, -1);
            if (l->gpu < 0)
                topo_jrd_bad(&c, "gpulinks", i, "gpu", "must name a GPU entry");
            int pk = topo_name_to_enum(jsonutil_str(o, "peer_kind"), TOPO_NAMES(peer_kinds));
            l->peer_kind = pk < 0 ? TOPO_PEER_GPU : (enum topo_link_peer)pk;
            int hi = l->peer_kind == TOPO_PEER_GPU      ? m->ngpus - 1
                     : l->peer_kind == TOPO_PEER_SWITCH ? npci - 1
                                                        : m->npackages - 1;
            l->peer = req_int(&c, o, "gpulinks", i, "peer", -1, hi, -1);
            topo_jrd_num(&c, o, "gpulinks", i, "bw_mbs", &l->bw_mbs);
            l->links = req_int(&c, o, "gpulinks", i, "links", -1, 1024, -1);
            topo_jrd_str(o, "kind", l->kind, sizeof(l->kind));
            i++;
        }
    int nnics = (a = topo_jrd_array(&c, doc, "nics", false)) ? cJSON_GetArraySize(a) : 0;
    const cJSON *pa = topo_jrd_array(&c, doc, "ports", false);
    int nports = pa ? cJSON_GetArraySize(pa) : 0;
    const cJSON *na = topo_jrd_array(&c, doc, "netdevs", false);
    int nnet = na ? cJSON_GetArraySize(na) : 0;
    i = 0;
    if (a)
        cJSON_ArrayForEach(o, a)
        {
            int k_ = topo_model_add_nic(m);
            struct topo_nic *n = &m->nics[k_];
            n->pci = req_int(&c, o, "nics", i, "pci", -1, npci - 1, -1);
            topo_jrd_str(o, "rdma_dev", n->rdma_dev, sizeof(n->rdma_dev));
            topo_jrd_str(o, "driver", n->driver, sizeof(n->driver));
            topo_jrd_str(o, "node_guid", n->node_guid, sizeof(n->node_guid));
            topo_jrd_str(o, "sys_image_guid", n->sys_image_guid, sizeof(n->sys_image_guid));
            topo_jrd_str(o, "fw_ver", n->fw_ver, sizeof(n->fw_ver));
            topo_jrd_str(o, "board_id", n->board_id, sizeof(n->board_id));
            topo_jrd_str(o, "hca_type", n->hca_type, sizeof(n->hca_type));
            n->first_port = req_int(&c, o, "nics", i, "first_port", -1, nports, -1);
            n->nports = req_int(&c, o, "nics", i, "nports", 0, nports, 0);
            if (n->nports > 0 && (n->first_port < 0 || n->first_port + n->nports > nports))
                topo_jrd_bad(&c, "nics", i, "first_port", "range runs past the ports array");
            i++;
        }
    i = 0;
    if (pa)
        cJSON_ArrayForEach(o, pa)
        {
            int k = topo_model_add_port(m);
            load_port(&c, o, i++, &m->ports[k], nnics, nnet);
        }
    i = 0;
    if (na)
        cJSON_ArrayForEach(o, na)
        {
            int k = topo_model_add_netdev(m);
            load_netdev(&c, o, i++, &m->netdevs[k], npci, nnics);
        }
    if ((a = topo_jrd_array(&c, doc, "notes", false)))
        cJSON_ArrayForEach(o, a) if (cJSON_IsString(o)) topo_model_note(m, "%s", o->valuestring);
    if (c.rc == 0)
        c.rc = topo_fabric_from_json(cJSON_GetObjectItemCaseSensitive(doc, "fabric"), m, what, err);
    return c.rc;
}

static int load_json(struct topo_model *m, const struct topo_load_opts *o, struct ft_err *err)
{
    cJSON *doc;
    int rc = jsonutil_load(o->input, &doc, err);
    if (rc < 0)
        return rc;
    rc = topo_json_to_model(doc, m, o->input, err);
    cJSON_Delete(doc);
    return rc;
}

const struct topo_source topo_source_json = {"json", TOPO_SRC_JSON, load_json};

/* ---- derived sections for --json ---- */

static cJSON *cell_json(const struct topo_cell *c)
{
    char buf[16];
    topo_cell_str(c, buf, sizeof(buf));
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "rel", buf);
    cJSON_AddStringToObject(o, "pcie", topo_rel_str(c->pcie));
    if (c->rel == TOPO_REL_NV) {
        cJSON_AddNumberToObject(o, "nvlink_mbs", c->nv_bw_mbs);
        topo_json_add_idx(o, "nvlinks", c->nv_links);
        cJSON_AddBoolToObject(o, "via_switch", c->via_switch);
    }
    cJSON_AddBoolToObject(o, "same_package", c->same_package);
    return o;
}

cJSON *topo_json_affinity(const struct topo_model *m, const struct topo_affinity *a)
{
    cJSON *o = cJSON_CreateObject();
    char name[64];
    cJSON *cols = cJSON_AddArrayToObject(o, "nics");
    for (int j = 0; j < a->ncols; j++) {
        topo_nic_name(m, a->cols[j], name, sizeof(name));
        cJSON_AddItemToArray(cols, cJSON_CreateString(name));
    }
    cJSON_AddBoolToObject(o, "rdma_nics", a->rdma_only);
    cJSON *rows = cJSON_AddArrayToObject(o, "gpus");
    for (int i = 0; i < a->ngpus; i++) {
        const struct topo_pci *p = &m->pci[m->gpus[i].pci];
        cJSON *r = cJSON_CreateObject();
        topo_gpu_name(m, i, name, sizeof(name));
        cJSON_AddStringToObject(r, "name", name);
        add_bdf(r, "bdf", &p->addr);
        topo_json_add_idx(r, "numa", p->numa);
        cJSON_AddStringToObject(r, "cpuset", p->cpuset);
        cJSON *gg = cJSON_AddArrayToObject(r, "gpu");
        for (int j = 0; j < a->ngpus; j++)
            cJSON_AddItemToArray(gg, cell_json(&a->gg[i * a->ngpus + j]));
        cJSON *gn = cJSON_AddArrayToObject(r, "nic");
        for (int j = 0; j < a->ncols; j++)
            cJSON_AddItemToArray(gn, cell_json(&a->gn[i * a->ncols + j]));
        cJSON *ne = cJSON_AddObjectToObject(r, "nearest");
        cJSON_AddStringToObject(ne, "rel",
                                a->nearest[i].n ? topo_rel_str(a->nearest[i].rel) : "none");
        cJSON *nl = cJSON_AddArrayToObject(ne, "nics");
        for (int k = 0; k < a->nearest[i].n; k++) {
            topo_nic_name(m, a->nearest[i].nics[k], name, sizeof(name));
            cJSON_AddItemToArray(nl, cJSON_CreateString(name));
        }
        cJSON_AddItemToArray(rows, r);
    }
    return o;
}

cJSON *topo_json_findings(const struct topo_findings *f)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < f->n; i++) {
        const struct topo_finding *x = &f->v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "rule", x->rule);
        cJSON_AddStringToObject(o, "severity", topo_sev_str(x->sev));
        cJSON_AddStringToObject(o, "object", x->object);
        cJSON_AddStringToObject(o, "message", x->msg);
        cJSON_AddStringToObject(o, "remedy", x->remedy);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}
