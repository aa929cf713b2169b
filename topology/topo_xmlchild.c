/* topo_xmlchild: an hwloc XML parsed in the fabtop-hwloc-xml helper process. The caller
 * spawns it (posix_spawn, never a fork of a threaded program), reads the snapshot it
 * prints, and reads a crash or a limit as one error naming the file. */
#include "topology/topo_xmlchild.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/jsonutil.h"
#include "topology/topo_json.h"
#include "topology/topo_load.h"

extern char **environ;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGABRT:
        return "SIGABRT";
    case SIGILL:
        return "SIGILL";
    case SIGFPE:
        return "SIGFPE";
    case SIGKILL:
        return "SIGKILL";
    case SIGXCPU:
        return "SIGXCPU";
    default:
        return "a signal";
    }
}

/* Spawn helper with stdout on a pipe (stderr discarded: hwloc's diagnostics are not for
 * the user's screen) and the signals the caller ignores or blocks back at their defaults. */
static int spawn_helper(const char *helper, const char *path, pid_t *pid, int *outfd,
                        struct ft_err *err)
{
    int p[2];
    if (pipe(p) < 0)
        return ft_err_set(err, -errno, "cannot create a pipe for %s: %s", TOPO_XMLCHILD_NAME,
                          strerror(errno));
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {(char *)helper, (char *)"--", (char *)path, NULL};
    int rc = posix_spawn(pid, helper, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return ft_err_set(err, -ELIBACC,
                          "%s: cannot run the XML helper %s: %s (reinstall fabtop, or set "
                          "FABTOP_XML_HELPER to its path)",
                          path, helper, strerror(rc));
    }
    *outfd = p[0];
    return 0;
}

/* Read everything the helper prints until it closes stdout, up to the size and the
 * deadline. Returns 0, -ETIMEDOUT or -EFBIG (the helper is then still running). */
static int read_all(int fd, int64_t deadline, char **buf, size_t *len)
{
    size_t cap = 1 << 16;
    *buf = malloc(cap + 1);
    *len = 0;
    if (!*buf)
        return -ENOMEM;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int n = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n <= 0)
            continue;
        if (*len == cap) {
            if (cap >= TOPO_XMLCHILD_MAX_BYTES)
                return -EFBIG;
            cap *= 2;
            char *nb = realloc(*buf, cap + 1);
            if (!nb)
                return -ENOMEM;
            *buf = nb;
        }
        ssize_t r = read(fd, *buf + *len, cap - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        *len += (size_t)r;
    }
    (*buf)[*len] = '\0';
    return 0;
}

static int reap(pid_t pid, int *status)
{
    for (;;) {
        if (waitpid(pid, status, 0) == pid)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

/* The helper exited normally: take its snapshot, or its own error. */
static int take_output(const char *path, const char *text, size_t len, struct topo_model *m,
                       struct ft_err *err)
{
    cJSON *doc;
    struct ft_err perr = {0};
    if (jsonutil_parse(text, len, TOPO_XMLCHILD_NAME " output", &doc, &perr) < 0)
        return ft_err_set(err, -EIO, "%s: the XML helper printed no usable topology (%s)", path,
                          perr.msg);
    int rc;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
    if (cJSON_IsObject(e)) {
        double code = -EBADMSG;
        jsonutil_num(e, "code", &code);
        const char *msg = jsonutil_str(e, "message");
        int c = code < 0 && code > -4096 ? (int)code : -EBADMSG;
        rc = ft_err_set(err, c, "%s", msg ? msg : "the XML helper refused the file");
    } else {
        rc = topo_json_to_model(doc, m, path, err);
        /* The model is the XML's, as if loaded here: not a snapshot of it. */
        m->source = TOPO_SRC_XML;
        snprintf(m->source_path, sizeof(m->source_path), "%s", path);
        m->snapshot[0] = '\0';
    }
    cJSON_Delete(doc);
    return rc;
}

int topo_xmlchild_load(const char *helper, const char *path, struct topo_model *m,
                       struct ft_err *err)
{
    pid_t pid;
    int fd;
    int rc = spawn_helper(helper, path, &pid, &fd, err);
    if (rc < 0)
        return rc;
    char *out = NULL;
    size_t len = 0;
    int rd = read_all(fd, now_ms() + TOPO_XMLCHILD_WALL_MS, &out, &len);
    close(fd);
    if (rd < 0)
        kill(pid, SIGKILL);
    int st = 0;
    if (reap(pid, &st) < 0)
        st = -1;
    if (rd == -ETIMEDOUT)
        rc = ft_err_set(err, -EBADMSG,
                        "%s: hwloc took longer than %d s to parse it (the helper was stopped); "
                        "a node's topology XML parses in well under a second: check the file",
                        path, TOPO_XMLCHILD_WALL_MS / 1000);
    else if (rd == -EFBIG)
        rc = ft_err_set(err, -E2BIG,
                        "%s: the topology parsed from it is larger than %u MiB; it is not a "
                        "node's topology",
                        path, TOPO_XMLCHILD_MAX_BYTES >> 20);
    else if (rd < 0)
        rc = ft_err_set(err, rd, "%s: cannot read from the XML helper: %s", path, strerror(-rd));
    else if (st == -1)
        rc = ft_err_set(err, -ECHILD, "%s: lost track of the XML helper (is SIGCHLD ignored?)",
                        path);
    else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU)
        rc = ft_err_set(err, -EBADMSG,
                        "%s: libhwloc used more than %d s of CPU parsing it and was stopped: the "
                        "XML is malformed or far larger than a node's topology",
                        path, TOPO_XMLCHILD_CPU_S);
    else if (WIFSIGNALED(st))
        rc = ft_err_set(err, -EBADMSG,
                        "%s: libhwloc crashed (%s) parsing it in the " TOPO_XMLCHILD_NAME
                        " helper: the XML is malformed (one misspelled attribute is enough) or "
                        "exceeded %d MiB; re-export it with 'lstopo-no-graphics --of xml FILE'",
                        path, signal_name(WTERMSIG(st)), TOPO_XMLCHILD_AS_MIB);
    else if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || (WEXITSTATUS(st) == 1 && len > 0)))
        rc = take_output(path, out, len, m, err);
    else if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && len == 0)
        /* A sanitizer build reports a crash and exits instead of dying by the signal. */
        rc = ft_err_set(err, -EBADMSG,
                        "%s: libhwloc crashed (exit status %d, no output) parsing it in the "
                        "%s helper: the XML is malformed (one misspelled attribute is "
                        "enough); re-export it with 'lstopo-no-graphics --of xml FILE'",
                        path, WEXITSTATUS(st), helper);
    else
        rc = ft_err_set(err, -EIO, "%s: the XML helper %s exited with status %d", path, helper,
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    free(out);
    return rc;
}

/* ---- The helper's side ---- */

static void set_limit(int res, rlim_t soft, rlim_t hard)
{
    struct rlimit rl;
    if (getrlimit(res, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < hard)
        hard = rl.rlim_max;
    rl.rlim_cur = soft < hard ? soft : hard;
    rl.rlim_max = hard;
    setrlimit(res, &rl);
}

#if defined(__SANITIZE_ADDRESS__)
#define XMLCHILD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XMLCHILD_ASAN 1
#endif
#endif

static void set_limits(void)
{
    set_limit(RLIMIT_CORE, 0, 0);
    set_limit(RLIMIT_CPU, TOPO_XMLCHILD_CPU_S, TOPO_XMLCHILD_CPU_S + 2);
#ifndef XMLCHILD_ASAN
    /* AddressSanitizer reserves terabytes of address space for its shadow: an address-space
     * limit only applies to the normal build. */
    rlim_t as = (rlim_t)TOPO_XMLCHILD_AS_MIB << 20;
    set_limit(RLIMIT_AS, as, as);
#endif
}

static int print_doc(cJSON *doc)
{
    char *s = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (!s)
        return -ENOMEM;
    size_t n = strlen(s);
    int rc = fwrite(s, 1, n, stdout) == n && fflush(stdout) == 0 ? 0 : -EIO;
    free(s);
    return rc;
}

int topo_xmlchild_serve(int argc, char **argv)
{
    int i = 1;
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (argc - i != 1) {
        fprintf(stderr,
                "usage: %s [--] FILE.xml  (run by fabtop: parses an hwloc XML and "
                "prints it as a fabtop topology snapshot)\n",
                TOPO_XMLCHILD_NAME);
        return 64;
    }
    set_limits();
    struct topo_load_opts o = {.input = argv[i]};
    struct topo_model *m = topo_model_new();
    struct ft_err err = {0};
    int rc = m ? topo_source_xml.load(m, &o, &err) : -ENOMEM;
    cJSON *doc;
    if (rc < 0) {
        doc = cJSON_CreateObject();
        cJSON *e = cJSON_AddObjectToObject(doc, "error");
        cJSON_AddNumberToObject(e, "code", rc);
        cJSON_AddStringToObject(e, "message", err.msg[0] ? err.msg : strerror(-rc));
    } else {
        doc = topo_json_from_model(m);
    }
    topo_model_free(m);
    if (print_doc(doc) < 0)
        return 70;
    return rc < 0 ? 1 : 0;
}
