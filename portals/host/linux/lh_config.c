/* Configuration of the Linux host: environment variables (documented in
 * ptl_linux.h), interface index/MAC/MTU, and the nid <-> MAC rule or table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "lh_internal.h"

/* The largest MTU a virtio-net device can state (a 16-bit field); a tap
 * carries at most 65521.  Only the loopback device's 65536 is above it. */
#define LH_FRAME_DEFAULT_MAX 65535u

static bool env_u32(const char *name, uint32_t *out)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v > UINT32_MAX) {
        fprintf(stderr, "tern portals: ignoring bad %s=%s\n", name, s);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static int load_map(struct lh_conf *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "tern portals: TERN_NIDMAP %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    char line[256];
    size_t cap = 0;
    unsigned lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char nid_s[64], mac_s[64];
        int n = sscanf(line, "%63s %63s", nid_s, mac_s);
        if (n <= 0)
            continue;
        struct lh_map_ent e;
        char *end;
        unsigned long long nid = strtoull(nid_s, &end, 0);
        if (n != 2 || *end || nid > UINT32_MAX || ptl_linux_parse_mac(mac_s, e.mac)) {
            fprintf(stderr, "tern portals: %s:%u: expected \"nid mac\"\n",
                    path, lineno);
            fclose(f);
            return -1;
        }
        e.nid = (uint32_t)nid;
        if (c->n_map == cap) {
            cap = cap ? 2 * cap : 64;
            struct lh_map_ent *m = realloc(c->map, cap * sizeof(*m));
            if (!m) {
                fclose(f);
                return -1;
            }
            c->map = m;
        }
        c->map[c->n_map++] = e;
    }
    fclose(f);
    if (!c->n_map) {
        fprintf(stderr, "tern portals: TERN_NIDMAP %s has no entries\n", path);
        return -1;
    }
    return 0;
}

int lh_nid_to_mac(const struct lh_conf *c, uint32_t nid, uint8_t mac[6])
{
    if (c->map) {
        for (size_t i = 0; i < c->n_map; i++)
            if (c->map[i].nid == nid) {
                memcpy(mac, c->map[i].mac, 6);
                return 0;
            }
        return -1;
    }
    if (nid > 0xffffffu)
        return -1;
    mac[0] = 0x02;
    mac[1] = mac[2] = 0;
    mac[3] = (uint8_t)(nid >> 16);
    mac[4] = (uint8_t)(nid >> 8);
    mac[5] = (uint8_t)nid;
    return 0;
}

static int nid_from_mac(const struct lh_conf *c, uint32_t *nid)
{
    if (c->map) {
        for (size_t i = 0; i < c->n_map; i++)
            if (!memcmp(c->map[i].mac, c->mac, 6)) {
                *nid = c->map[i].nid;
                return 0;
            }
        return -1;
    }
    if (c->mac[0] != 0x02 || c->mac[1] || c->mac[2])
        return -1;
    *nid = (uint32_t)c->mac[3] << 16 | (uint32_t)c->mac[4] << 8 | c->mac[5];
    return 0;
}

static int iface_facts(struct lh_conf *c)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        fprintf(stderr, "tern portals: socket: %s\n", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, c->ifname, sizeof(ifr.ifr_name));
    int rc = -1;
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0)
        goto fail;
    c->ifindex = ifr.ifr_ifindex;
    if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
        goto fail;
    memcpy(c->mac, ifr.ifr_hwaddr.sa_data, 6);
    if (ioctl(s, SIOCGIFMTU, &ifr) < 0)
        goto fail;
    c->mtu = (uint32_t)ifr.ifr_mtu;
    rc = 0;
fail:
    if (rc)
        fprintf(stderr, "tern portals: interface %s: %s\n", c->ifname,
                strerror(errno));
    close(s);
    return rc;
}

/* 4 MiB, or room for LH_RING_FRAMES frames of frame_max bytes if that is
 * more: two peers' full windows (PTL_REL_WIN frames each) waiting while
 * the process is busy elsewhere.  Frames of 64 KiB make that 8.5 MiB. */
#define LH_RING_FRAMES 128u
static unsigned lh_ring_kb_default(uint32_t frame_max)
{
    uint64_t kb = ((uint64_t)frame_max + 64) * LH_RING_FRAMES / 1024;
    return kb > 4096 ? (unsigned)kb : 4096;
}

int lh_config_load(struct lh_conf *c)
{
    memset(c, 0, sizeof(*c));
    const char *ifn = getenv("TERN_IFACE");
    if (!ifn || !*ifn || strlen(ifn) >= sizeof(c->ifname)) {
        fprintf(stderr, "tern portals: set TERN_IFACE to the interface "
                        "Portals should use\n");
        return -1;
    }
    strcpy(c->ifname, ifn);
    if (iface_facts(c))
        return -1;
    const char *map = getenv("TERN_NIDMAP");
    if (map && *map && load_map(c, map))
        return -1;
    if (!env_u32("TERN_NID", &c->nid) && nid_from_mac(c, &c->nid)) {
        fprintf(stderr, "tern portals: MAC of %s is not 02:00:00:xx:xx:xx "
                        "(or not in TERN_NIDMAP); set TERN_NID\n", c->ifname);
        return -1;
    }
    if (!env_u32("TERN_PID", &c->pid))
        c->pid = 0x100u + (uint32_t)getpid() % 0xfe00u;
    if (c->pid >= 0xffffu) {
        fprintf(stderr, "tern portals: TERN_PID must be below 0xffff "
                        "(PTL_PID_ANY)\n");
        return -1;
    }
    if (!env_u32("TERN_UID", &c->uid))
        c->uid = (uint32_t)getuid();
    if (!env_u32("TERN_JID", &c->jid))
        c->jid = 0;
    uint32_t fm = c->mtu < LH_FRAME_DEFAULT_MAX ? c->mtu : LH_FRAME_DEFAULT_MAX;
    uint32_t want;
    if (env_u32("TERN_FRAME_MAX", &want)) {
        if (want > c->mtu)
            fprintf(stderr, "tern portals: TERN_FRAME_MAX %u > MTU %u of %s, "
                            "using the MTU\n", want, c->mtu, c->ifname);
        else
            fm = want;
    }
    if (fm < 256) {
        fprintf(stderr, "tern portals: frames of %u bytes on %s are too "
                        "small (need >= 256)\n", fm, c->ifname);
        return -1;
    }
    c->frame_max = fm;
    uint32_t crc;
    c->payload_crc = env_u32("TERN_PAYLOAD_CRC", &crc) && crc;
    uint32_t kb;
    c->ring_kb = env_u32("TERN_RING_KB", &kb) && kb >= 256 ? kb : lh_ring_kb_default(fm);
    return 0;
}
