// The few Linux calls Swift's Glibc module does not expose without _GNU_SOURCE.
#ifndef WAYMARK_CSYSTEMSHIM_H
#define WAYMARK_CSYSTEMSHIM_H

#include <stdint.h>
#include <sys/types.h>

// Linux only (epoll, eventfd, accept4, memfd, sendfile, glibc's malloc): elsewhere the module
// is empty, so a package that holds it still resolves and builds the app's libraries (which
// never use it) on macOS; the server's targets, which do, are Linux-only.
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/// accept4(2) with the new socket non-blocking and close-on-exec, and the peer as a key
/// of two words: an IPv4 peer (or an
/// IPv4-mapped IPv6 one) as (0xFFFF, address); an IPv6 peer by its /64 prefix, as
/// (prefix, 1); anything else (0, 0).
int waymark_accept4_peer(int listener, uint64_t *high, uint64_t *low);

/// Gives memory malloc holds free back to the system (glibc's malloc_trim(0), which also
/// returns free pages inside every arena); 0 elsewhere. Returns whether any was released.
int waymark_release_free_memory(void);

/// Bytes malloc has handed out and not had back (glibc's mallinfo2().uordblks, every
/// arena); -1 elsewhere. For benchmarks measuring what a structure holds.
long long waymark_allocated_bytes(void);

/// Caps glibc's malloc arenas (mallopt M_ARENA_MAX); 0 elsewhere. Returns 1 on success.
int waymark_limit_arenas(int count);

/// epoll_event's layout is packed on x86_64; these keep Swift away from it.
int waymark_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
int waymark_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout_ms);

/// Pins the calling thread to the n-th (modulo their count) of the CPUs it may run on,
/// as sched_getaffinity(2) reports them (a container's cpuset is respected).
/// Returns the CPU's number, or -1 with errno set.
int waymark_pin_to_allowed_cpu(int n);

/// A sealed memory file (memfd_create(2), then F_SEAL_SHRINK, GROW, WRITE and SEAL) holding
/// `count` bytes: the pages a large cached body is sent from with sendfile(2), so the kernel
/// takes them by reference instead of copying them from the process on every send.
/// Returns the descriptor (close-on-exec), or -1 with errno set (nothing left open).
int waymark_sealed_memory_file(const void *bytes, size_t count);

/// sendfile(2) from `in` at `*offset` (advanced by what was sent) to the socket `out`.
ssize_t waymark_sendfile(int out, int in, int64_t *offset, size_t count);

/// Whether a sealed memory file can be made and sent from with sendfile(2) here (a seccomp
/// filter or a sandboxed kernel may refuse either): 4 bytes through a socket pair.
int waymark_sendfile_works(void);

#endif  // __linux__
#endif
