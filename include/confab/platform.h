/* What confab asks of the operating system beyond POSIX, in one place:
 * Linux's ways where they exist, portable ones elsewhere (macOS, FreeBSD).
 * -Dplatform_fallbacks=true builds the portable ones on Linux too, so that
 * the test suite runs through them. */
#ifndef CONFAB_PLATFORM_H
#define CONFAB_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Whether transparent huge pages are on (always, or for the memory that
 * asks: cf_advise_huge), and the memory the system could give without
 * swapping, in bytes (0: not known). */
bool cf_huge_pages_on(void);
uint64_t cf_mem_available(void);
/* Ask for huge pages on [p, p + n) where the system has them. */
void cf_advise_huge(void *p, size_t n);

/* fd's first n bytes mapped read-only, its pages read in now (MAP_FAILED
 * and errno as mmap on failure). */
void *cf_map_file_now(int fd, size_t n);

/* send(2) that returns -1 with EPIPE for a peer gone, never raising
 * SIGPIPE. */
ssize_t cf_send(int fd, const void *p, size_t n);
/* accept(2) (the peer's address into peer, when not NULL) and socket(2)
 * with the descriptor closed on exec (and the socket non-blocking). */
int cf_accept_cloexec(int lfd, struct sockaddr *peer, socklen_t *peer_len);
int cf_socket_cloexec_nonblock(int domain, int type, int protocol);

/* Reserve n bytes of disk for fd (0, or an errno value), so that a full
 * disk shows here and not as a SIGBUS while a mapping of it is written. */
int cf_reserve_file(int fd, off_t n);

/* 8 bytes from the system's random source; false when it gives none. */
bool cf_random_u64(uint64_t *v);

/* Physical cores (not hardware threads) the program may run on; at
 * least 1. */
int cf_cpu_cores(void);

#endif
