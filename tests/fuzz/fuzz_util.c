/* fuzz_util: helpers shared by the libFuzzer targets (see fuzz_util.h). */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_util.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/ft_err.h"
#include "common/strbuf.h"
#include "common/xalloc.h"
#include "topology/topo_affinity.h"
#include "topology/topo_json.h"
#include "topology/topo_lint.h"
#include "topology/topo_load.h"
#include "text/fabric_text.h"
#include "text/topo_text.h"

void fuzz_require(bool ok, const char *fmt, ...)
{
    if (ok)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

const char *fuzz_file(int slot, const void *data, size_t size)
{
    static int fd[2] = {-1, -1};
    static char path[2][32];
    fuzz_require(slot == 0 || slot == 1, "fuzz_file: slot %d", slot);
    if (fd[slot] < 0) {
        fd[slot] = memfd_create("fabtop-fuzz", MFD_CLOEXEC);
        fuzz_require(fd[slot] >= 0, "memfd_create failed");
        snprintf(path[slot], sizeof(path[slot]), "/proc/self/fd/%d", fd[slot]);
    }
    fuzz_require(ftruncate(fd[slot], 0) == 0, "ftruncate failed");
    const char *p = data;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fd[slot], p + done, size - done, (off_t)done);
        fuzz_require(n > 0, "pwrite to the memfd failed");
        done += (size_t)n;
    }
    return path[slot];
}

char *fuzz_str(const uint8_t *data, size_t size)
{
    char *s = xalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

void fuzz_split(const uint8_t *data, size_t size, char **a, char **b)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t na = nul ? (size_t)(nul - data) : size;
    *a = fuzz_str(data, na);
    *b = nul ? fuzz_str(nul + 1, size - na - 1) : NULL;
}

static char dir_path[64];
static char file_path[sizeof(dir_path) + 64];

static void dir_cleanup(void)
{
    if (file_path[0])
        unlink(file_path);
    if (dir_path[0])
        rmdir(dir_path);
}

const char *fuzz_dir_with(const char *name, const void *data, size_t size)
{
    if (!dir_path[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir_path, sizeof(dir_path), "%s/fabtop-fuzz.XXXXXX", t && *t ? t : "/tmp");
        fuzz_require(mkdtemp(dir_path) != NULL, "mkdtemp %s failed", dir_path);
        atexit(dir_cleanup);
    }
    if (file_path[0])
        unlink(file_path);
    snprintf(file_path, sizeof(file_path), "%s/%s", dir_path, name);
    FILE *f = fopen(file_path, "w");
    fuzz_require(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s",
                 file_path);
    return dir_path;
}

int fuzz_first_byte(const uint8_t *data, size_t size)
{
    size_t i = 0;
    if (size >= 3 && data[0] == 0xef && data[1] == 0xbb)
        i = 3;
    while (i < size && (data[i] == ' ' || (data[i] >= '\t' && data[i] <= '\r')))
        i++;
    return i < size ? data[i] : 0;
}

char *fuzz_print(const cJSON *doc)
{
    char *s = cJSON_PrintUnformatted(doc);
    fuzz_require(s != NULL, "cJSON_PrintUnformatted failed");
    return s;
}

void fuzz_quiet_stdout(void)
{
    int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        close(fd);
    }
}

/* The document `fabtop topo --json` prints for m. */
static cJSON *topo_doc(const struct topo_model *m)
{
    struct topo_affinity aff;
    topo_affinity_compute(m, &aff);
    struct topo_findings findings = {0};
    struct topo_lint_opts lo = {.expect_ll = TOPO_LL_INFINIBAND};
    topo_lint_run(m, &lo, &findings);
    cJSON *doc = topo_json_from_model(m);
    cJSON_AddItemToObject(doc, "affinity", topo_json_affinity(m, &aff));
    cJSON_AddItemToObject(doc, "lint", topo_json_findings(&findings));

    struct strbuf sb;
    strbuf_init(&sb);
    topo_text_header(&sb, m);
    topo_text_tree(&sb, m);
    fabric_text(&sb, m);
    topo_text_matrix(&sb, m, &aff);
    topo_text_findings(&sb, &findings);
    for (int i = 0; i < m->nports; i++)
        topo_text_port(&sb, m, i);
    strbuf_free(&sb);
    topo_findings_free(&findings);
    topo_affinity_free(&aff);
    return doc;
}

bool fuzz_topo_file(const char *path)
{
    struct topo_load_opts lo = {.input = path, .no_verbs = true, .no_gpu_libs = true};
    struct topo_model *m;
    struct ft_err err = {0};
    if (topo_load(&lo, &m, &err) < 0) {
        fuzz_require(err.msg[0] != '\0', "topo_load failed without a message");
        return false;
    }
    cJSON *doc = topo_doc(m);
    topo_model_free(m);
    char *first = fuzz_print(doc);
    cJSON_Delete(doc);

    /* The snapshot fabtop wrote must load back, to the same model. */
    lo.input = fuzz_file(1, first, strlen(first));
    struct ft_err err2 = {0};
    fuzz_require(topo_load(&lo, &m, &err2) == 0, "a snapshot fabtop saved does not load: %s",
                 err2.msg);
    doc = topo_doc(m);
    topo_model_free(m);
    char *second = fuzz_print(doc);
    cJSON_Delete(doc);
    if (strcmp(first, second)) {
        size_t i = 0;
        while (first[i] && first[i] == second[i])
            i++;
        size_t from = i > 60 ? i - 60 : 0;
        fuzz_require(
            false, "save -> load -> save differs at byte %zu:\n  first:  %.120s\n  second: %.120s",
            i, first + from, second + from);
    }
    cJSON_free(first);
    cJSON_free(second);
    return true;
}
