#ifndef EARSHOT_CESPEAKNG_SHIM_H
#define EARSHOT_CESPEAKNG_SHIM_H
// libespeak-ng is opened at run time, when speech is first needed, not linked: a service
// that never speaks loads neither it nor what it depends on (libpcaudio, PulseAudio's
// client libraries, X11's). Only its types and constants come from its header.
#include <dlfcn.h>
#include <stddef.h>
#include <espeak-ng/speak_lib.h>

/// The entry points the alert voice uses, resolved from the opened library.
typedef struct {
    __typeof__(espeak_Initialize) *initialize;
    __typeof__(espeak_SetSynthCallback) *setSynthCallback;
    __typeof__(espeak_SetVoiceByName) *setVoiceByName;
    __typeof__(espeak_SetParameter) *setParameter;
    __typeof__(espeak_Synth) *synth;
} earshot_espeak;

/// Opens libespeak-ng and fills `api`. Returns NULL when it worked, otherwise what failed
/// (dlerror's text, valid until the next dl* call on this thread). The library stays open.
static inline const char *earshot_espeak_open(earshot_espeak *api) {
    void *library = dlopen("libespeak-ng.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return dlerror();
    api->initialize = (__typeof__(espeak_Initialize) *)dlsym(library, "espeak_Initialize");
    api->setSynthCallback = (__typeof__(espeak_SetSynthCallback) *)dlsym(library, "espeak_SetSynthCallback");
    api->setVoiceByName = (__typeof__(espeak_SetVoiceByName) *)dlsym(library, "espeak_SetVoiceByName");
    api->setParameter = (__typeof__(espeak_SetParameter) *)dlsym(library, "espeak_SetParameter");
    api->synth = (__typeof__(espeak_Synth) *)dlsym(library, "espeak_Synth");
    if (!api->initialize || !api->setSynthCallback || !api->setVoiceByName || !api->setParameter || !api->synth) {
        dlclose(library);
        return "libespeak-ng.so.1 lacks an espeak_* function";
    }
    return NULL;
}
#endif
