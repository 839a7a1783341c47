/* Opens libswresample and libavutil, by the sonames of the major versions whose headers
   the meter was compiled against, and resolves the functions it calls. Opening them at
   the first meter rather than linking them keeps a process that never measures from
   mapping them and the libraries libavutil depends on; closing them when no meter is
   left lets a process that has gone quiet unmap them again. */
#include "ffmpeg_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SWRESAMPLE_SONAME "libswresample.so." AV_STRINGIFY(LIBSWRESAMPLE_VERSION_MAJOR)
#define AVUTIL_SONAME "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR)

/* Guards everything below. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The open libraries; both NULL when closed. */
static void *avutil;
static void *swresample;
/* Meters holding the functions (earshot_ffmpeg_acquire without a release yet). */
static long users;
/* Valid while the libraries are open, which they stay while `users` is above 0. */
static earshot_ffmpeg functions;

/* Resolves `name` in `library` into `*slot`; false, with the reason in `message`, if missing. */
static int resolve(void *library, const char *soname, const char *name, void **slot, char *message, size_t message_size)
{
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(message, message_size, "%s has no %s", soname, name);
        return 0;
    }
    return 1;
}

#define RESOLVE(library, soname, name) \
    resolve(library, soname, #name, (void **)&functions.name, message, message_size)

static void close_libraries(void)
{
    if (swresample != NULL) {
        dlclose(swresample);
    }
    if (avutil != NULL) {
        dlclose(avutil);
    }
    swresample = NULL;
    avutil = NULL;
    memset(&functions, 0, sizeof functions);
}

/* Opens both libraries and fills `functions`; on failure closes what it opened. Called
   with `lock` held. */
static int open_libraries(char *message, size_t message_size)
{
    avutil = dlopen(AVUTIL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (avutil == NULL) {
        snprintf(message, message_size, "cannot open %s: %s", AVUTIL_SONAME, dlerror());
        return 0;
    }
    swresample = dlopen(SWRESAMPLE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (swresample == NULL) {
        snprintf(message, message_size, "cannot open %s: %s", SWRESAMPLE_SONAME, dlerror());
        close_libraries();
        return 0;
    }
    int resolved = RESOLVE(swresample, SWRESAMPLE_SONAME, swr_alloc)
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
    if (!resolved) {
        close_libraries();
    }
    return resolved;
}

const earshot_ffmpeg *earshot_ffmpeg_acquire(char *message, size_t message_size)
{
    char reason[512] = { 0 };
    pthread_mutex_lock(&lock);
    int open = swresample != NULL || open_libraries(reason, sizeof reason);
    if (open) {
        users++;
    }
    pthread_mutex_unlock(&lock);
    if (!open && message != NULL && message_size > 0) {
        snprintf(message, message_size, "%s", reason);
    }
    return open ? &functions : NULL;
}

void earshot_ffmpeg_release(void)
{
    pthread_mutex_lock(&lock);
    users--;
    pthread_mutex_unlock(&lock);
}

int earshot_ffmpeg_close_unused(void)
{
    pthread_mutex_lock(&lock);
    int closing = users == 0 && swresample != NULL;
    if (closing) {
        close_libraries();
    }
    pthread_mutex_unlock(&lock);
    return closing;
}
