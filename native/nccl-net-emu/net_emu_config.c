/*
 * The emulated node's NIC list, and a check of it against the node's NCCL_TOPO_FILE.
 *
 * One NIC per line (file) or per ';'-separated entry (variable), whitespace-separated key=value fields:
 *   name=mlx5_0 pci=/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0 speed=400000 gdr=1
 * Keys: name and speed (Mb/s) are required; pci, latency (us), gdr (0|1), maxcomms, port, guid, maxrecvs (1..8),
 * regglobal (0|1), forceflush (0|1) are optional. Defaults are what NCCL's own IB transport reports for a NIC
 * (src/transport/net_ib.cc:929-953@v2.28.9-1): latency 0 (NCCL's base latency), port 1, maxrecvs 8, regglobal 1,
 * forceflush 0; guid the NIC's 1-based index (distinct NICs, distinct ports); maxcomms 65536 (IB reports the HCA's
 * max_qp, which is the device's own number; no NCCL decision below that many connections depends on it).
 * '#' starts a comment. Any other key, a missing or malformed value, a duplicate name: the whole list is refused.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net_emu.h"

struct emuNic emuNics[EMU_MAX_NICS];
int emuNicCount;

static int parseLong(const char* v, long lo, long hi, long* out) {
  char* end;
  errno = 0;
  long x = strtol(v, &end, 0);
  if (errno || end == v || *end != '\0' || x < lo || x > hi) return -1;
  *out = x;
  return 0;
}

/* "dddd:bb:dd.f", the form NCCL's topology and sysfs give a PCI function (the last component of a pciPath). */
static int isBusId(const char* s) {
  const char* form = "xxxx:xx:xx.x";
  if (strlen(s) != strlen(form)) return 0;
  for (size_t i = 0; form[i]; i++) {
    if (form[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != form[i]) return 0;
  }
  return 1;
}

/* One entry's fields into nic; returns NULL or what is wrong. */
static const char* parseEntry(char* entry, int index, struct emuNic* nic, char* why, size_t whyLen) {
  memset(nic, 0, sizeof(*nic));
  nic->port = 1;
  nic->maxRecvs = EMU_MAX_RECVS;
  nic->regIsGlobal = 1;
  nic->maxComms = 65536;
  nic->guid = (uint64_t)index + 1;
  int haveSpeed = 0;
  char* save = NULL;
  for (char* f = strtok_r(entry, " \t\r", &save); f; f = strtok_r(NULL, " \t\r", &save)) {
    char* eq = strchr(f, '=');
    if (eq == NULL || eq == f || eq[1] == '\0') {
      snprintf(why, whyLen, "'%s' is not key=value", f);
      return why;
    }
    *eq = '\0';
    const char *k = f, *v = eq + 1;
    long x = 0;
    if (strcmp(k, "name") == 0) {
      if (strlen(v) >= EMU_NAME_LEN) return "name longer than 63 characters";
      strcpy(nic->name, v);
    } else if (strcmp(k, "pci") == 0) {
      if (strlen(v) >= EMU_PATH_LEN) return "pci path longer than 255 characters";
      const char* last = strrchr(v, '/');
      if (v[0] != '/' || last == NULL || !isBusId(last + 1)) {
        snprintf(why, whyLen, "pci=%.200s: want a sysfs-like path ending in a busId, /sys/devices/.../0000:17:00.0", v);
        return why;
      }
      strcpy(nic->pciPath, v);
    } else if (strcmp(k, "speed") == 0) {
      if (parseLong(v, 1, 0x7fffffff, &x)) return "speed must be a positive whole number of Mb/s";
      nic->speed = (int)x;
      haveSpeed = 1;
    } else if (strcmp(k, "latency") == 0) {
      char* end;
      double d = strtod(v, &end);
      if (end == v || *end != '\0' || d < 0) return "latency must be a number of microseconds >= 0";
      nic->latency = (float)d;
    } else if (strcmp(k, "gdr") == 0) {
      if (parseLong(v, 0, 1, &x)) return "gdr must be 0 or 1";
      nic->gdr = (int)x;
    } else if (strcmp(k, "maxcomms") == 0) {
      if (parseLong(v, 1, 0x7fffffff, &x)) return "maxcomms must be a positive whole number";
      nic->maxComms = (int)x;
    } else if (strcmp(k, "port") == 0) {
      if (parseLong(v, 0, 255, &x)) return "port must be 0..255";
      nic->port = (int)x;
    } else if (strcmp(k, "guid") == 0) {
      char* end;
      errno = 0;
      unsigned long long g = strtoull(v, &end, 0);
      if (errno || end == v || *end != '\0') return "guid must be a number (0x... for hex)";
      nic->guid = g;
    } else if (strcmp(k, "maxrecvs") == 0) {
      if (parseLong(v, 1, EMU_MAX_RECVS, &x)) return "maxrecvs must be 1..8";
      nic->maxRecvs = (int)x;
    } else if (strcmp(k, "regglobal") == 0) {
      if (parseLong(v, 0, 1, &x)) return "regglobal must be 0 or 1";
      nic->regIsGlobal = (int)x;
    } else if (strcmp(k, "forceflush") == 0) {
      if (parseLong(v, 0, 1, &x)) return "forceflush must be 0 or 1";
      nic->forceFlush = (int)x;
    } else {
      snprintf(why, whyLen, "unknown key '%s' (name pci speed latency gdr maxcomms port guid maxrecvs regglobal "
               "forceflush)", k);
      return why;
    }
  }
  if (nic->name[0] == '\0') return "no name=";
  if (!haveSpeed) return "no speed= (Mb/s)";
  return NULL;
}

static int loadText(char* text, const char* source, int isFile, char* err, size_t errLen) {
  emuNicCount = 0;
  const char* seps = isFile ? "\n" : ";\n";
  int lineNo = 0;
  for (char *line = text, *next; *line; line = next) {
    char* stop = line + strcspn(line, seps);
    next = *stop ? stop + 1 : stop;
    *stop = '\0';
    lineNo++;
    char* hash = strchr(line, '#');
    if (hash) *hash = '\0';
    if (strspn(line, " \t\r") == strlen(line)) continue;
    if (emuNicCount == EMU_MAX_NICS) {
      snprintf(err, errLen, "%s:%d: more than %d NICs", source, lineNo, EMU_MAX_NICS);
      return -1;
    }
    char why[512];
    const char* bad = parseEntry(line, emuNicCount, &emuNics[emuNicCount], why, sizeof(why));
    if (bad) {
      snprintf(err, errLen, "%s:%d: %s", source, lineNo, bad);
      return -1;
    }
    for (int i = 0; i < emuNicCount; i++) {
      if (strcmp(emuNics[i].name, emuNics[emuNicCount].name) == 0) {
        snprintf(err, errLen, "%s:%d: NIC name %s given twice", source, lineNo, emuNics[i].name);
        return -1;
      }
    }
    emuNicCount++;
  }
  if (emuNicCount == 0) {
    snprintf(err, errLen, "%s: no NIC", source);
    return -1;
  }
  return 0;
}

static char* readAll(const char* path, size_t limit) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return NULL;
  char* buf = malloc(limit + 1);
  size_t n = buf ? fread(buf, 1, limit, f) : 0;
  fclose(f);
  if (buf) buf[n] = '\0';
  return buf;
}

int emuNicsLoad(char* err, size_t errLen) {
  const char* file = getenv("PATHPROOF_NET_EMU_NICS_FILE");
  const char* inline_ = getenv("PATHPROOF_NET_EMU_NICS");
  int rc;
  if (file && file[0]) {
    char* text = readAll(file, 1 << 20);
    if (text == NULL) {
      snprintf(err, errLen, "PATHPROOF_NET_EMU_NICS_FILE=%s: %s", file, strerror(errno));
      return -1;
    }
    rc = loadText(text, file, 1, err, errLen);
    free(text);
  } else if (inline_ && inline_[0]) {
    char* text = strdup(inline_);
    rc = loadText(text, "PATHPROOF_NET_EMU_NICS", 0, err, errLen);
    free(text);
  } else {
    snprintf(err, errLen, "neither PATHPROOF_NET_EMU_NICS_FILE nor PATHPROOF_NET_EMU_NICS is set: no NIC to emulate");
    return -1;
  }
  return rc;
}

/* The value of attribute key in the tag text [tag, end), copied to out; 0 when absent. */
static int tagAttr(const char* tag, const char* end, const char* key, char* out, size_t outLen) {
  size_t kl = strlen(key);
  for (const char* p = tag; p + kl + 2 < end; p++) {
    if ((p == tag || isspace((unsigned char)p[-1])) && strncmp(p, key, kl) == 0 && p[kl] == '=' && p[kl + 1] == '"') {
      const char* v = p + kl + 2;
      const char* q = memchr(v, '"', (size_t)(end - v));
      if (q == NULL) return 0;
      size_t n = (size_t)(q - v) < outLen - 1 ? (size_t)(q - v) : outLen - 1;
      memcpy(out, v, n);
      out[n] = '\0';
      return 1;
    }
  }
  return 0;
}

void emuNicsCheckTopoFile(void) {
  const char* path = getenv("NCCL_TOPO_FILE");
  if (path == NULL || path[0] == '\0') {
    EMU_INFO(NCCL_INIT | NCCL_NET, "NCCL_TOPO_FILE not set: NCCL places each NIC by its pci path in this machine's "
             "sysfs; a NIC whose path is not there is attached to the first CPU");
    return;
  }
  char* xml = readAll(path, 16 << 20);
  if (xml == NULL) {
    EMU_WARN("cannot read NCCL_TOPO_FILE %s: %s", path, strerror(errno));
    return;
  }
  for (int i = 0; i < emuNicCount; i++) {
    const struct emuNic* nic = &emuNics[i];
    const char *tag = NULL, *end = NULL;
    char v[256];
    for (const char* p = strstr(xml, "<net"); p; p = strstr(p + 4, "<net")) {
      const char* e = strchr(p, '>');
      if (e == NULL) break;
      if (isspace((unsigned char)p[4]) && tagAttr(p, e, "name", v, sizeof(v)) && strcmp(v, nic->name) == 0) {
        tag = p;
        end = e;
        break;
      }
    }
    if (tag == NULL) {
      /* graph/xml.cc:910-945@v2.28.9-1: a net not in the XML is placed from pciPath's sysfs entry; none exists */
      EMU_WARN("NIC %s is not in NCCL_TOPO_FILE %s: NCCL will look for %s in this machine's sysfs, not find it and "
               "attach the NIC to the first CPU", nic->name, path, nic->pciPath[0] ? nic->pciPath : "(no pci path)");
      continue;
    }
    /* The <pci> that holds this <nic><net>: the last one opened before it. */
    char busId[64] = "";
    for (const char* p = xml; (p = strstr(p, "<pci")) && p < tag; p += 4) {
      const char* e = strchr(p, '>');
      if (e && isspace((unsigned char)p[4])) tagAttr(p, e, "busid", busId, sizeof(busId));
    }
    const char* last = strrchr(nic->pciPath, '/');
    if (last && busId[0] && strcasecmp(last + 1, busId) != 0) {
      EMU_WARN("NIC %s: pci path %s ends in %s but NCCL_TOPO_FILE puts it under <pci busid=\"%s\">; NCCL uses the "
               "file's place", nic->name, nic->pciPath, last + 1, busId);
    }
    EMU_INFO(NCCL_INIT | NCCL_NET, "NIC %s is in NCCL_TOPO_FILE under pci %s", nic->name, busId[0] ? busId : "?");
    /* graph/topo.cc:1351-1358@v2.28.9-1: NCCL sets these from the plugin only when the file has not. */
    static const char* keys[] = {"speed", "latency", "port", "guid", "maxconn", "gdr"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
      if (!tagAttr(tag, end, keys[k], v, sizeof(v))) continue;
      char mine[64];
      switch (k) {
        case 0: snprintf(mine, sizeof(mine), "%d", nic->speed); break;
        case 1: snprintf(mine, sizeof(mine), "%g", nic->latency); break;
        case 2: snprintf(mine, sizeof(mine), "%d", nic->port); break;
        case 3: snprintf(mine, sizeof(mine), "%llu", (unsigned long long)nic->guid); break;
        case 4: snprintf(mine, sizeof(mine), "%d", nic->maxComms); break;
        default: snprintf(mine, sizeof(mine), "%d", nic->gdr); break;
      }
      int same = strtod(v, NULL) == strtod(mine, NULL);
      if (same) {
        EMU_INFO(NCCL_INIT | NCCL_NET, "NIC %s: NCCL_TOPO_FILE's %s=\"%s\" equals the plugin's", nic->name, keys[k], v);
      } else {
        EMU_WARN("NIC %s: NCCL_TOPO_FILE's %s=\"%s\" wins over the plugin's %s", nic->name, keys[k], v, mine);
      }
    }
  }
  free(xml);
}
