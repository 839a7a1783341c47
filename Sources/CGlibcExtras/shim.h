// glibc functions the Glibc module does not export.
#include <malloc.h>   // mallopt: the allocator's tuning
#include <pthread.h>
#include <sys/auxv.h> // getauxval: whether the program started in secure mode (AT_SECURE)

// A GNU extension, declared by <pthread.h> only under _GNU_SOURCE.
extern int pthread_setname_np(pthread_t thread, const char *name);
