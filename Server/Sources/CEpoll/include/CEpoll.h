// epoll(7) for BeekonLoad's viewer fleet: Swift's Glibc module does not export <sys/epoll.h>.
#ifndef C_EPOLL_H
#define C_EPOLL_H
#if defined(__linux__)
#include <sys/epoll.h>
#endif
#endif
