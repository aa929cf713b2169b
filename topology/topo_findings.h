/* topo_findings: what lint reports: findings (a rule, a severity, the object, what is wrong
 * and what to do), appended by the rule modules (topo_lint.c, topo_fablint.c) and read by
 * the front end. */
#ifndef TOPO_FINDINGS_H
#define TOPO_FINDINGS_H

enum topo_sev { TOPO_SEV_INFO = 0, TOPO_SEV_WARN, TOPO_SEV_ERROR };

struct topo_finding {
    const char *rule; /* stable rule id, e.g. "pcie-width" */
    enum topo_sev sev;
    char object[64];  /* what it is about: "GPU0", "mlx5_0 port 1", "0000:4d:00.0" */
    int pci;          /* model pci index to jump to, -1 if none */
    int port;         /* model port index, -1 if none */
    char msg[320];    /* what is wrong, with the numbers */
    char remedy[256]; /* one line: what to do */
};

struct topo_findings {
    int n, cap;
    struct topo_finding *v;
};

/* Append a finding of rule with sev about PCI device pci and/or port (-1: none); the
 * caller fills its texts. */
struct topo_finding *topo_findings_add(struct topo_findings *out, const char *rule,
                                       enum topo_sev sev, int pci, int port);
/* Stable sort, errors first: each rule's findings keep their order. */
void topo_findings_sort(struct topo_findings *out);
void topo_findings_free(struct topo_findings *f);
/* Worst severity present, or -1 when there are no findings above INFO. */
int topo_findings_worst(const struct topo_findings *f);

#endif
