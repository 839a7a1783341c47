/* Opens libswresample and libavutil, by the sonames of the major versions whose headers
   the meter was compiled against, and resolves the functions it calls. Opening them at
   the first meter rather than linking them keeps a process that never measures from
   mapping them and the libraries libavutil depends on. */
#include "ffmpeg_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define SWRESAMPLE_SONAME "libswresample.so." AV_STRINGIFY(LIBSWRESAMPLE_VERSION_MAJOR)
#define AVUTIL_SONAME "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR)

static pthread_once_t opened = PTHREAD_ONCE_INIT;
static earshot_ffmpeg functions;
static int available;
/* Why opening failed, when it did. */
static char failure[512];

/* Resolves `name` in `library` into `*slot`; false (and the reason in `failure`) if missing. */
static int resolve(void *library, const char *soname, const char *name, void **slot)
{
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(failure, sizeof failure, "%s has no %s", soname, name);
        return 0;
    }
    return 1;
}

#define RESOLVE(library, soname, name) resolve(library, soname, #name, (void **)&functions.name)

static void open_libraries(void)
{
    void *avutil = dlopen(AVUTIL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (avutil == NULL) {
        snprintf(failure, sizeof failure, "cannot open %s: %s", AVUTIL_SONAME, dlerror());
        return;
    }
    void *swresample = dlopen(SWRESAMPLE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (swresample == NULL) {
        snprintf(failure, sizeof failure, "cannot open %s: %s", SWRESAMPLE_SONAME, dlerror());
        return;
    }
    available = RESOLVE(swresample, SWRESAMPLE_SONAME, swr_alloc)
        && RESOLVE(swresample, SWRESAMPLE_SONAME, swr_init)
        && RESOLVE(swresample, SWRESAMPLE_SONAME, swr_get_out_samples)
        && RESOLVE(swresample, SWRESAMPLE_SONAME, swr_convert)
        && RESOLVE(swresample, SWRESAMPLE_SONAME, swr_free)
        && RESOLVE(avutil, AVUTIL_SONAME, av_strerror)
        && RESOLVE(avutil, AVUTIL_SONAME, av_channel_layout_default)
        && RESOLVE(avutil, AVUTIL_SONAME, av_channel_layout_uninit)
        && RESOLVE(avutil, AVUTIL_SONAME, av_opt_set_chlayout)
        && RESOLVE(avutil, AVUTIL_SONAME, av_opt_set_int)
        && RESOLVE(avutil, AVUTIL_SONAME, av_opt_set_double)
        && RESOLVE(avutil, AVUTIL_SONAME, av_opt_set_sample_fmt);
}

const earshot_ffmpeg *earshot_ffmpeg_open(char *message, size_t message_size)
{
    pthread_once(&opened, open_libraries);
    if (available) {
        return &functions;
    }
    if (message != NULL && message_size > 0) {
        snprintf(message, message_size, "%s", failure);
    }
    return NULL;
}
