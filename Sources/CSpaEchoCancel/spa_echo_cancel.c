#include "spa_echo_cancel.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spa/interfaces/audio/aec.h>
#include <spa/param/audio/raw.h>
#include <spa/support/plugin.h>
#include <spa/utils/names.h>
#include <spa/utils/string.h>

struct earshot_spa_aec {
    void *library;
    struct spa_handle *handle;
    struct spa_audio_aec *aec;
    unsigned block;
};

void earshot_spa_aec_close(earshot_spa_aec *canceller) {
    if (canceller == NULL) return;
    if (canceller->handle != NULL) {
        spa_handle_clear(canceller->handle);
        free(canceller->handle);
    }
    if (canceller->library != NULL) dlclose(canceller->library);
    free(canceller);
}

earshot_spa_aec *earshot_spa_aec_open(const char *path, unsigned rate, char *error, size_t error_size) {
    earshot_spa_aec *canceller = (earshot_spa_aec *)calloc(1, sizeof *canceller);
    if (canceller == NULL) { snprintf(error, error_size, "out of memory"); return NULL; }
    canceller->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (canceller->library == NULL) {
        snprintf(error, error_size, "%s", dlerror());
        earshot_spa_aec_close(canceller);
        return NULL;
    }
    spa_handle_factory_enum_func_t enumerate =
        (spa_handle_factory_enum_func_t)dlsym(canceller->library, SPA_HANDLE_FACTORY_ENUM_FUNC_NAME);
    const struct spa_handle_factory *factory = NULL;
    uint32_t index = 0;
    while (enumerate != NULL && enumerate(&factory, &index) > 0) {
        if (spa_streq(factory->name, SPA_NAME_AEC)) break;
        factory = NULL;
    }
    if (factory == NULL) {
        snprintf(error, error_size, "%s: no %s factory", path, SPA_NAME_AEC);
        earshot_spa_aec_close(canceller);
        return NULL;
    }
    canceller->handle = (struct spa_handle *)calloc(1, spa_handle_factory_get_size(factory, NULL));
    void *interface = NULL;
    int result = canceller->handle == NULL ? -ENOMEM : spa_handle_factory_init(factory, canceller->handle, NULL, NULL, 0);
    if (result < 0) {
        free(canceller->handle);
        canceller->handle = NULL;
    } else {
        result = spa_handle_get_interface(canceller->handle, SPA_TYPE_INTERFACE_AUDIO_AEC, &interface);
    }
    if (result < 0) {
        snprintf(error, error_size, "%s: %s", path, strerror(-result));
        earshot_spa_aec_close(canceller);
        return NULL;
    }
    canceller->aec = (struct spa_audio_aec *)interface;
    struct spa_audio_info_raw info;
    memset(&info, 0, sizeof info);
    info.format = SPA_AUDIO_FORMAT_F32P;
    info.rate = rate;
    info.channels = 1;
    info.position[0] = SPA_AUDIO_CHANNEL_MONO;
    struct spa_dict arguments = SPA_DICT_INIT(NULL, 0);
    result = spa_audio_aec_init(canceller->aec, &arguments, &info);
    // The block the module runs it on: the plugin's latency, at `rate`.
    unsigned numerator = 0, denominator = 0;
    if (result >= 0 && canceller->aec->latency != NULL
        && sscanf(canceller->aec->latency, "%u/%u", &numerator, &denominator) == 2 && denominator != 0) {
        canceller->block = (unsigned)((unsigned long)rate * numerator / denominator);
    } else if (result >= 0) {
        canceller->block = rate / 100;
    }
    if (result < 0) {
        snprintf(error, error_size, "%s: init failed (%d)", path, result);
        earshot_spa_aec_close(canceller);
        return NULL;
    }
    return canceller;
}

unsigned earshot_spa_aec_block(const earshot_spa_aec *canceller) { return canceller->block; }

int earshot_spa_aec_run(earshot_spa_aec *canceller, const float *recorded, const float *played, float *output,
                                      unsigned count) {
    const float *rec[1] = { recorded };
    const float *play[1] = { played };
    float *out[1] = { output };
    return spa_audio_aec_run(canceller->aec, rec, play, out, count);
}

