/* The operating system's services confab uses past POSIX (platform.h).
 * CF_LINUX picks Linux's own calls; without it (other systems, or
 * -Dplatform_fallbacks=true) each has a portable way with the same
 * contract. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

#include "confab/platform.h"

#if defined(__linux__) && !defined(CF_PLATFORM_FALLBACKS)
#define CF_LINUX 1
#include <sys/random.h>
#else
#define CF_LINUX 0
#include <pthread.h>
#endif

bool cf_huge_pages_on(void)
{
#if CF_LINUX
    char buf[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return false;
    if (!fgets(buf, sizeof buf, f))
        buf[0] = 0;
    fclose(f);
    return strstr(buf, "[always]") || strstr(buf, "[madvise]");
#else
    return false; /* macOS and FreeBSD give large pages on their own terms */
#endif
}

uint64_t cf_mem_available(void)
{
#if CF_LINUX
    char buf[128];
    unsigned long long kb = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    while (fgets(buf, sizeof buf, f))
        if (sscanf(buf, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
#elif defined(_SC_AVPHYS_PAGES)
    /* free pages only: the page cache it could drop is not counted */
    const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
#else
    return 0;
#endif
}

void cf_advise_huge(void *p, size_t n)
{
#if CF_LINUX
    madvise(p, n, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

void *cf_map_file_now(int fd, size_t n)
{
#if CF_LINUX
    return mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
#else
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED)
        posix_madvise(p, n, POSIX_MADV_WILLNEED);
    return p;
#endif
}

ssize_t cf_send(int fd, const void *p, size_t n)
{
#if CF_LINUX
    return send(fd, p, n, MSG_NOSIGNAL);
#elif defined(SO_NOSIGPIPE)
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
    return send(fd, p, n, 0);
#else
    /* SIGPIPE blocked in this thread for the call; one it raised is taken
     * off the pending set before the old mask returns */
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    const ssize_t w = send(fd, p, n, 0);
    const int e = errno;
    if (w < 0 && e == EPIPE && !was_pending) {
        int sig;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE))
            sigwait(&pipe_set, &sig);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return w;
#endif
}

#if !CF_LINUX
static int set_fd_flags(int fd, bool nonblock)
{
    if (fd < 0)
        return fd;
    const int fl = fcntl(fd, F_GETFL);
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fl < 0 || (nonblock && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)) {
        const int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}
#endif

int cf_accept_cloexec(int lfd, struct sockaddr *peer, socklen_t *peer_len)
{
#if CF_LINUX
    return accept4(lfd, peer, peer_len, SOCK_CLOEXEC);
#else
    return set_fd_flags(accept(lfd, peer, peer_len), false);
#endif
}

int cf_socket_cloexec_nonblock(int domain, int type, int protocol)
{
#if CF_LINUX
    return socket(domain, type | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
#else
    return set_fd_flags(socket(domain, type, protocol), true);
#endif
}

int cf_reserve_file(int fd, off_t n)
{
#if CF_LINUX
    return posix_fallocate(fd, 0, n);
#else
    /* macOS has no posix_fallocate: zeros written are blocks had (a file
     * only sized by ftruncate would get them as the mapping is written,
     * and a full disk would be a SIGBUS then) */
    static const char zeros[65536];
    for (off_t o = 0; o < n;) {
        const size_t k = n - o < (off_t)sizeof zeros ? (size_t)(n - o) : sizeof zeros;
        const ssize_t w = pwrite(fd, zeros, k, o);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        o += w;
    }
    return 0;
#endif
}

bool cf_random_u64(uint64_t *v)
{
#if CF_LINUX
    return getrandom(v, sizeof *v, 0) == (ssize_t)sizeof *v;
#else
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = read(fd, v, sizeof *v) == (ssize_t)sizeof *v;
    close(fd);
    return ok;
#endif
}

int cf_cpu_cores(void)
{
    int cores = 0;
#if CF_LINUX
    /* distinct (physical id, core id) pairs */
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        long phys = 0, seen[1024][2];
        while (fgets(line, sizeof line, f)) {
            long v;
            if (sscanf(line, "physical id : %ld", &v) == 1)
                phys = v;
            else if (sscanf(line, "core id : %ld", &v) == 1) {
                int dup = 0;
                for (int i = 0; i < cores; i++)
                    dup |= seen[i][0] == phys && seen[i][1] == v;
                if (!dup && cores < 1024) {
                    seen[cores][0] = phys;
                    seen[cores][1] = v;
                    cores++;
                }
            }
        }
        fclose(f);
    }
#elif defined(__APPLE__)
    size_t len = sizeof cores;
    if (sysctlbyname("hw.physicalcpu", &cores, &len, NULL, 0) != 0)
        cores = 0;
#endif
    if (cores <= 0)
        cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}
