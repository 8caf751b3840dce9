#ifndef PHOTOSD_CEPOLL_SHIM_H
#define PHOTOSD_CEPOLL_SHIM_H
// Linux's epoll, which Swift's Glibc module does not export; used by photos-bench's load
// generator (one thread driving every virtual user's connection).
#include <sys/epoll.h>
#endif
