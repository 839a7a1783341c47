/* Opens libpipewire-0.3 and fills the function table (see pipewire_library.h). */
#define EARSHOT_PW_LIBRARY_IMPLEMENTATION
#include "pipewire_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The major version whose headers the mixer was compiled against. */
#define PIPEWIRE_SONAME "libpipewire-0.3.so.0"

earshot_pw_library earshot_pw;

static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Written once under `once`; empty when the library is usable. */
static char failure[256];

static void open_library(void)
{
    void *library = dlopen(PIPEWIRE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure, "cannot open %s: %s", PIPEWIRE_SONAME, dlerror());
        return;
    }
#define EARSHOT_PW_RESOLVE(name) \
    if ((earshot_pw.name = (__typeof__(name) *)dlsym(library, #name)) == NULL) { \
        snprintf(failure, sizeof failure, "%s has no %s", PIPEWIRE_SONAME, #name); \
        dlclose(library); \
        return; \
    }
    EARSHOT_PW_FUNCTIONS(EARSHOT_PW_RESOLVE)
#undef EARSHOT_PW_RESOLVE
}

int earshot_pw_library_open(char *message, size_t message_size)
{
    pthread_once(&once, open_library);
    if (failure[0] == '\0') {
        return 0;
    }
    snprintf(message, message_size, "%s", failure);
    return -1;
}
