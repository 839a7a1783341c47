#include "sndfile_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define SNDFILE_SONAME "libsndfile.so.1"

/* The entry points, resolved together when the library is opened. Written only under
   `lock` and only while no file is open; a call on an open file reads them after the open
   that made the file, which took the lock. */
static struct {
    void *library;
    __typeof__(sf_open) *open;
    __typeof__(sf_open_fd) *open_fd;
    __typeof__(sf_close) *close;
    __typeof__(sf_command) *command;
    __typeof__(sf_error) *error;
    __typeof__(sf_readf_float) *readf_float;
    __typeof__(sf_writef_float) *writef_float;
    __typeof__(sf_writef_short) *writef_short;
    __typeof__(sf_strerror) *strerror;
    __typeof__(sf_error_number) *error_number;
    __typeof__(sf_format_check) *format_check;
} api;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Files open now: the library stays while any is. */
static long open_files;
/* Why the library could not be loaded, for earshot_sf_strerror(NULL). */
static char load_failure[512];

/* Loads the library unless loaded; with `lock` held. Returns 0 when loaded. */
static int load_locked(void) {
    if (api.library != NULL) return 0;
    void *library = dlopen(SNDFILE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_failure, sizeof load_failure, "cannot load %s: %s", SNDFILE_SONAME, reason ? reason : "unknown error");
        return -1;
    }
#define RESOLVE(field, name) api.field = (__typeof__(name) *)dlsym(library, #name)
    RESOLVE(open, sf_open);
    RESOLVE(open_fd, sf_open_fd);
    RESOLVE(close, sf_close);
    RESOLVE(command, sf_command);
    RESOLVE(error, sf_error);
    RESOLVE(readf_float, sf_readf_float);
    RESOLVE(writef_float, sf_writef_float);
    RESOLVE(writef_short, sf_writef_short);
    RESOLVE(strerror, sf_strerror);
    RESOLVE(error_number, sf_error_number);
    RESOLVE(format_check, sf_format_check);
#undef RESOLVE
    if (!api.open || !api.open_fd || !api.close || !api.command || !api.error || !api.readf_float || !api.writef_float
        || !api.writef_short || !api.strerror || !api.error_number || !api.format_check) {
        snprintf(load_failure, sizeof load_failure, "%s lacks an sf_* function", SNDFILE_SONAME);
        dlclose(library);
        api = (__typeof__(api)){0};
        return -1;
    }
    api.library = library;
    load_failure[0] = '\0';
    return 0;
}

SNDFILE *earshot_sf_open(const char *path, int mode, SF_INFO *info) {
    pthread_mutex_lock(&lock);
    SNDFILE *file = load_locked() == 0 ? api.open(path, mode, info) : NULL;
    if (file != NULL) open_files += 1;
    pthread_mutex_unlock(&lock);
    return file;
}

SNDFILE *earshot_sf_open_fd(int fd, int mode, SF_INFO *info, int close_desc) {
    pthread_mutex_lock(&lock);
    SNDFILE *file = load_locked() == 0 ? api.open_fd(fd, mode, info, close_desc) : NULL;
    if (file != NULL) open_files += 1;
    pthread_mutex_unlock(&lock);
    return file;
}

int earshot_sf_close(SNDFILE *file) {
    if (file == NULL) return 0;
    int result = api.close(file);
    pthread_mutex_lock(&lock);
    open_files -= 1;
    pthread_mutex_unlock(&lock);
    return result;
}

int earshot_sf_command(SNDFILE *file, int command, void *data, int datasize) {
    if (file != NULL) return api.command(file, command, data, datasize);
    pthread_mutex_lock(&lock);
    int result = load_locked() == 0 ? api.command(NULL, command, data, datasize) : 0;
    pthread_mutex_unlock(&lock);
    return result;
}

int earshot_sf_error(SNDFILE *file) {
    if (file != NULL) return api.error(file);
    pthread_mutex_lock(&lock);
    int result = load_locked() == 0 ? api.error(NULL) : SF_ERR_SYSTEM;
    pthread_mutex_unlock(&lock);
    return result;
}

sf_count_t earshot_sf_readf_float(SNDFILE *file, float *frames, sf_count_t count) {
    return api.readf_float(file, frames, count);
}

sf_count_t earshot_sf_writef_float(SNDFILE *file, const float *frames, sf_count_t count) {
    return api.writef_float(file, frames, count);
}

sf_count_t earshot_sf_writef_short(SNDFILE *file, const short *frames, sf_count_t count) {
    return api.writef_short(file, frames, count);
}

const char *earshot_sf_strerror(SNDFILE *file) {
    if (file != NULL) return api.strerror(file);
    pthread_mutex_lock(&lock);
    /* The text is libsndfile's static buffer, or load_failure: both outlive the call. */
    const char *text = load_locked() == 0 ? api.strerror(NULL) : load_failure;
    pthread_mutex_unlock(&lock);
    return text;
}

const char *earshot_sf_error_number(int errnum) {
    pthread_mutex_lock(&lock);
    const char *text = load_locked() == 0 ? api.error_number(errnum) : load_failure;
    pthread_mutex_unlock(&lock);
    return text;
}

int earshot_sf_format_check(const SF_INFO *info) {
    pthread_mutex_lock(&lock);
    int result = load_locked() == 0 ? api.format_check(info) : 0;
    pthread_mutex_unlock(&lock);
    return result;
}

int earshot_sndfile_release(void) {
    pthread_mutex_lock(&lock);
    int closed = 0;
    if (api.library != NULL && open_files == 0) {
        dlclose(api.library);
        api = (__typeof__(api)){0};
        closed = 1;
    }
    pthread_mutex_unlock(&lock);
    return closed;
}
