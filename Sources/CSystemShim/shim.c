#define _GNU_SOURCE
#include "CSystemShim.h"
#include <stddef.h>

int waymark_accept4(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
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
