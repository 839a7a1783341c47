// glibc functions the Glibc module does not export.
#include <malloc.h>   // mallopt: the allocator's tuning
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <sys/auxv.h> // getauxval: whether the program started in secure mode (AT_SECURE)
#include <sys/epoll.h> // the D-Bus I/O thread's wait, whose socket interest other threads change
#include <time.h>

// GNU extensions, declared by their headers only under _GNU_SOURCE.
extern int pthread_setname_np(pthread_t thread, const char *name);
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
