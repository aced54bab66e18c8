/* src/platform: each call keeps its contract, Linux's way and the portable
 * one alike (the -Dplatform_fallbacks=true build runs this test too). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include "../harness.h"
#include "confab/platform.h"

/* a peer gone: -1 and EPIPE, and no SIGPIPE, with SIGPIPE's default action
 * (which would end the test) in place */
static void test_send(void)
{
    signal(SIGPIPE, SIG_DFL);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(cf_send(sv[0], "abc", 3) == 3);
    char b[4] = "";
    CHECK(read(sv[1], b, sizeof b) == 3 && !memcmp(b, "abc", 3));
    close(sv[1]);
    errno = 0;
    CHECK(cf_send(sv[0], "abc", 3) == -1 && errno == EPIPE);
    CHECK(cf_send(sv[0], "abc", 3) == -1 && errno == EPIPE);
    sigset_t pending;
    sigpending(&pending);
    CHECK(!sigismember(&pending, SIGPIPE));
    close(sv[0]);
}

static void test_sockets(void)
{
    const int l = cf_socket_cloexec_nonblock(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0);
    CHECK(fcntl(l, F_GETFD) & FD_CLOEXEC);
    CHECK(fcntl(l, F_GETFL) & O_NONBLOCK);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 4) == 0);
    CHECK(getsockname(l, (struct sockaddr *)&a, &al) == 0);
    CHECK(cf_accept_cloexec(l, NULL, NULL) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)); /* none waiting */
    const int c = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(c, (struct sockaddr *)&a, sizeof a) == 0);
    int s = -1;
    struct sockaddr_in peer = {0};
    socklen_t pl = 0;
    for (int i = 0; i < 1000 && s < 0; i++) {
        pl = sizeof peer;
        s = cf_accept_cloexec(l, (struct sockaddr *)&peer, &pl);
        if (s < 0)
            usleep(1000);
    }
    CHECK(s >= 0 && (fcntl(s, F_GETFD) & FD_CLOEXEC));
    CHECK(pl == sizeof peer && peer.sin_family == AF_INET && peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
    close(s);
    close(c);
    close(l);
}

static void test_files(void)
{
    char path[] = "/tmp/confab-platform-XXXXXX";
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    CHECK(cf_reserve_file(fd, 10000) == 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 10000);
    CHECK(pwrite(fd, "hello", 5, 4096) == 5);
    const char *p = cf_map_file_now(fd, 10000);
    CHECK(p != MAP_FAILED);
    if (p != MAP_FAILED) {
        CHECK(!memcmp(p + 4096, "hello", 5) && p[0] == 0 && p[9999] == 0);
        munmap((void *)p, 10000);
    }
    close(fd);
}

int main(void)
{
    test_send();
    test_sockets();
    test_files();
    uint64_t a = 0, b = 0;
    CHECK(cf_random_u64(&a) && cf_random_u64(&b) && a != b);
    CHECK(cf_cpu_cores() >= 1);
    CHECK(cf_mem_available() > 0); /* Linux has both ways */
    /* the advice is only advice: any region, any answer about huge pages */
    void *m = mmap(NULL, 1 << 22, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    cf_advise_huge(m, 1 << 22);
    ((char *)m)[0] = 1;
    munmap(m, 1 << 22);
    (void)cf_huge_pages_on();
    return test_summary("platform");
}
