#define _GNU_SOURCE
#include "CSystemShim.h"
// Linux only (see the header): elsewhere this file compiles to nothing.
#ifdef __linux__
#include <stddef.h>

#include <netinet/in.h>
#include <string.h>
int waymark_accept4_peer(int listener, uint64_t *high, uint64_t *low) {
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    int fd = accept4(listener, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    *high = 0;
    *low = 0;
    if (fd < 0) return fd;
    if (address.ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&address;
        *high = 0xFFFF;  /* as ::ffff:a.b.c.d, apart from every IPv6 /64 */
        *low = ntohl(v4->sin_addr.s_addr);
    } else if (address.ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&address;
        const uint8_t *bytes = v6->sin6_addr.s6_addr;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
        if (memcmp(bytes, mapped, 12) == 0) {
            *high = 0xFFFF;
            *low = (uint64_t)bytes[12] << 24 | (uint64_t)bytes[13] << 16 | (uint64_t)bytes[14] << 8 | bytes[15];
        } else {
            /* The /64: one subscriber's whole allocation counts as one peer. */
            uint64_t prefix = 0;
            for (int i = 0; i < 8; i++) prefix = prefix << 8 | bytes[i];
            *high = prefix;
            *low = 1;  /* an IPv4 peer would be (0xFFFF, 0.0.0.1), which never connects */
        }
    }
    return fd;
}

int waymark_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event = {.events = events, .data.u64 = data};
    return epoll_ctl(epfd, op, fd, &event);
}

int waymark_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeout_ms) {
    struct epoll_event ready[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        events[i] = ready[i].events;
        data[i] = ready[i].data.u64;
    }
    return count;
}

#include <sched.h>
int waymark_pin_to_allowed_cpu(int n) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    int count = CPU_COUNT(&allowed);
    if (count == 0) return -1;
    int wanted = n % count;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        if (wanted-- > 0) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
    }
    return -1;
}

#include <malloc.h>
int waymark_release_free_memory(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}

long long waymark_allocated_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    return (long long)mallinfo2().uordblks;
#else
    return -1;
#endif
}

int waymark_limit_arenas(int count) {
#ifdef __GLIBC__
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
int waymark_sealed_memory_file(const void *bytes, size_t count) {
    /* Not executable, ever: required where vm.memfd_noexec is 2; kernels before 6.3 do not
       know the flag (EINVAL) and make no such demand. */
    int fd = memfd_create("waymark-body", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
    if (fd < 0 && errno == EINVAL) fd = memfd_create("waymark-body", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < count) {
        ssize_t wrote = write(fd, (const char *)bytes + done, count - done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) goto failed;
        done += (size_t)wrote;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) goto failed;
    return fd;
failed:;
    int saved = errno;
    close(fd);
    errno = saved ? saved : EIO;
    return -1;
}

ssize_t waymark_sendfile(int out, int in, int64_t *offset, size_t count) {
    off_t position = (off_t)*offset;
    ssize_t sent = sendfile(out, in, &position, count);
    if (sent > 0) *offset = (int64_t)position;
    return sent;
}

int waymark_sendfile_works(void) {
    static const char probe[4] = {'w', 'a', 'y', 'm'};
    int file = waymark_sealed_memory_file(probe, sizeof probe);
    if (file < 0) return 0;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        close(file);
        return 0;
    }
    int64_t offset = 0;
    char back[4] = {0};
    int works = waymark_sendfile(pair[0], file, &offset, sizeof probe) == (ssize_t)sizeof probe
        && read(pair[1], back, sizeof back) == (ssize_t)sizeof back && memcmp(back, probe, sizeof probe) == 0;
    close(pair[0]);
    close(pair[1]);
    close(file);
    return works;
}

#endif  // __linux__
